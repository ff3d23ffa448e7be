import { errors } from '../../errors.ts';
import { toCardError } from '../card-errors.ts';
import {
  isDesfireIntent,
  type CardWallet,
  type WalletCard,
  type WriteDecision,
  type WriteIntent,
  type WriteResult,
} from '../card-face.ts';
import type { DesfireWalletKeys } from '../wallet-keys.ts';
import { formatCardId } from '../wallet-format.ts';
import { DesfireClient, PICC_AID, type Transmit } from './desfire-client.ts';
import type { DesfireKey } from './desfire-crypto.ts';
import { DesfireProtocolError, DesfireStatusError } from './desfire-status.ts';
import {
  APPLICATION_KEY_COUNT,
  APPLICATION_SETTINGS,
  cardRecordOf,
  decideDesfireWrite,
  decodeMovementRecord,
  desfireBefore,
  KEY_APPLICATION_MASTER,
  KEY_MACHINE,
  KEY_TILL,
  PICC_SETTINGS,
  RECORD_FILE,
  RECORD_FILE_SPEC,
  floatEvidenceOf,
  recordOf,
  RECORD_SIZE,
  RECORD_SIZE_V1,
  VALUE_FILE,
  VALUE_FILE_SPEC,
} from './desfire-wallet-format.ts';

/** A DESFire wallet as read (the card face's CardWallet, and what it was read from). */
export interface DesfireWallet extends CardWallet {
  /** False on a card without the wallet application (fresh from the factory): 0 credits. */
  hasWallet: boolean;
  /** The newest movement record's counter, 0 when there is none. */
  counter: number;
}

/** The steps of a personalization, each announced (journaled) before it is done. */
export type DesfirePersonalizationStep = 'picc-key' | 'application' | 'keys';

const GET_UID = Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]);

/**
 * The card face (wallet-card.ts) of a DESFire card on the reader, for one operation
 * (docs/card-format.md section 9): reads the wallet, writes a movement (Credit or Debit, its
 * record, CommitTransaction: the commit point), decides a write whose answer was lost from the
 * records, and personalizes the card. The wallet opens with the card's own till key only, as a
 * MIFARE Classic card with its own key B; after openWallet() said 'transport', with the key the
 * card carries until personalized too. Each command is a bounded APDU (`transmit`); every
 * failure leaves as an AppError.
 */
export class DesfireWalletSession implements WalletCard {
  readonly cardId: string;
  readonly cardType = 'desfire' as const;
  readonly #transmit: Transmit;
  readonly #client: DesfireClient;
  readonly #keys: DesfireWalletKeys;
  /** openWallet() found the card not personalized: its transport keys may open it. */
  #transportAllowed = false;

  constructor(cardId: string, transmit: Transmit, keys: DesfireWalletKeys) {
    this.cardId = cardId;
    this.#transmit = transmit;
    this.#client = new DesfireClient({ transmit });
    this.#keys = keys;
  }

  /** Fails with NoCard unless the card on the reader is still this session's. */
  async checkUid(): Promise<void> {
    const response = await this.#transmit(GET_UID);
    const ok = response.length >= 2 && response.readUInt16BE(response.length - 2) === 0x9000;
    if (!ok || formatCardId(response.subarray(0, -2)) !== this.cardId) throw errors.noCard();
  }

  /**
   * Which till key opens the wallet: the card's own ('card'), or the one it carries until it
   * is personalized ('transport', which later reads and writes of this session may then use).
   * A card without the wallet application is 'transport' too: it is not set up yet. Neither
   * key: AuthenticationFail.
   */
  async openWallet(): Promise<'card' | 'transport'> {
    return this.#cardErrors(async () => {
      this.#transportAllowed = true;
      const opened = await this.#open();
      this.#transportAllowed = opened !== 'card';
      return opened === 'card' ? 'card' : 'transport';
    });
  }

  /**
   * The wallet: its balance and newest record (`record`, as the ledger sees it). A card without
   * the wallet application holds 0 (with per-card keys only once openWallet() allowed its
   * transport keys: it has no key of its own). CorruptCard when its files are not the wallet's.
   */
  async readWallet(): Promise<DesfireWallet> {
    return this.#cardErrors(async () => {
      const opened = await this.#open();
      if (!opened) {
        return {
          cardId: this.cardId,
          balance: 0,
          before: desfireBefore(null),
          hasWallet: false,
          counter: 0,
        };
      }
      const { balance, counter, records, recordSize } = await this.#wallet(
        RECORD_FILE_SPEC.maxRecords,
      );
      const newest = records[0];
      return {
        cardId: this.cardId,
        balance,
        before: desfireBefore({ balance, counter }),
        hasWallet: true,
        counter,
        carriesFloat: recordSize === RECORD_SIZE,
        floatEvidence: floatEvidenceOf(records),
        ...(newest ? { record: cardRecordOf(newest) } : {}),
      };
    });
  }

  /**
   * Writes a planned movement: checks the UID, opens the wallet, checks that it still holds
   * what the plan was made from, credits or debits the difference, adds the record and commits.
   * Anything failing before the first change leaves the card as it was; a card that leaves
   * during the transaction drops it with the power. An answer to Credit, Debit, WriteRecord or
   * CommitTransaction that does not verify (a CMAC that is wrong or missing, or an error status,
   * which carries none) may come from someone between the till and the card, who could commit
   * the open transaction later: the card is sent AbortTransaction and the write is uncertain
   * (CardAnswerUnverified), decided from the records when the card is read again under a fresh
   * authentication (docs/card-format.md section 9.5). The same write sent again after it
   * committed is committed, not done twice.
   */
  async write(intent: WriteIntent): Promise<WriteResult> {
    let transactionOpen = false;
    try {
      if (!isDesfireIntent(intent)) {
        throw errors.cardOperationFailed(new Error('a MIFARE Classic write for a DESFire card'));
      }
      await this.checkUid();
      if (!(await this.#open())) {
        throw errors.cardOperationFailed(new Error('the card holds no wallet application'));
      }
      const { balance, counter, records, recordSize } = await this.#wallet(1);
      const newest = records[0];
      if (
        newest &&
        counter === intent.counter &&
        decideDesfireWrite(intent, [newest]) === 'committed'
      ) {
        return { outcome: 'committed' };
      }
      if (balance !== (intent.previousBalance ?? 0) || counter !== intent.counter - 1) {
        throw errors.cardWriteUnverified();
      }
      if (intent.float && recordSize !== RECORD_SIZE) {
        throw errors.cardOperationFailed(new Error('v1 movement records carry no float recharge'));
      }
      const delta = intent.value - balance;
      transactionOpen = true;
      if (delta > 0) await this.#client.credit(VALUE_FILE, delta, VALUE_FILE_SPEC.comm);
      if (delta < 0) await this.#client.debit(VALUE_FILE, -delta, VALUE_FILE_SPEC.comm);
      const record = recordOf(intent, recordSize);
      await this.#client.writeRecord(RECORD_FILE, 0, record, RECORD_FILE_SPEC.comm);
    } catch (error) {
      if (transactionOpen && isUnverifiedAnswer(error)) return this.#abortUnverified(error);
      return { outcome: 'not-written', error: toCardError(error) };
    }
    try {
      await this.#client.commitTransaction();
      return { outcome: 'committed' };
    } catch (error) {
      if (isUnverifiedAnswer(error)) return this.#abortUnverified(error);
      // No answer: the card left, or stopped answering, before or after it committed.
      return { outcome: 'uncertain', error: toCardError(error) };
    }
  }

  /**
   * Drops whatever the card's transaction holds, after an answer that did not verify: the
   * session's IV is lost with it, so AbortTransaction (90 A7 00 00 00) goes outside any session,
   * as EV1 sends a plain command's CMAC nowhere and the card takes it in whatever session it
   * has. Its answer proves nothing (nothing here could check its CMAC), so whatever it is, the
   * write stays uncertain until the card is read again.
   */
  async #abortUnverified(error: unknown): Promise<WriteResult> {
    this.#client.reset();
    try {
      await this.#client.abortTransaction();
    } catch {
      // The card left (it dropped the transaction with the power), or answered an error (which
      // drops it too), or someone swallowed the abort: the records decide it all the same.
    }
    return { outcome: 'uncertain', error: errors.cardAnswerUnverified(error) };
  }

  /** Decides an earlier write from the records the card holds (section 9.5). */
  async decide(intent: WriteIntent): Promise<WriteDecision> {
    if (!isDesfireIntent(intent)) return { outcome: 'unknown' };
    return this.#cardErrors(async () => {
      await this.checkUid();
      // Reading needs no key of its own: a write made before personalization is decided too.
      this.#transportAllowed = true;
      if (!(await this.#open())) return { outcome: 'not-written' };
      const { records } = await this.#records(RECORD_FILE_SPEC.maxRecords);
      return { outcome: decideDesfireWrite(intent, records) };
    });
  }

  /**
   * The balance, the newest `count` records (newest first) and the newest one's counter (0
   * without one), and the size of the file's records.
   */
  async #wallet(
    count: number,
  ): Promise<{ balance: number; counter: number; records: Buffer[]; recordSize: number }> {
    const balance = await this.#walletFile(() =>
      this.#client.getValue(VALUE_FILE, VALUE_FILE_SPEC.comm),
    );
    const { records, recordSize } = await this.#records(count);
    const newestFirst = records.reverse();
    const newest = newestFirst[0];
    const counter = newest ? decodeMovementRecord(newest).counter : 0;
    return { balance, counter, records: newestFirst, recordSize };
  }

  /**
   * Gives the card its own keys (docs/card-format.md section 9.7), announcing each step that
   * writes before doing it; every step can be repeated after a tear. Without a master key it
   * only creates the wallet application on a card that has none. Resolves with whether anything
   * was written (false: the card was personalized already). A card whose PICC opens with neither
   * its own key nor the factory key is AuthenticationFail; a wallet application whose files are
   * not the wallet's is CorruptCard. A card holding a wallet keeps its value and records.
   */
  async personalize(
    announce: (step: DesfirePersonalizationStep) => Promise<void>,
  ): Promise<boolean> {
    return this.#cardErrors(async () => {
      await this.checkUid();
      const { own, transport, aid } = this.#keys;
      const client = this.#client;
      const announced = new Set<DesfirePersonalizationStep>();
      const step = async (name: DesfirePersonalizationStep) => {
        if (announced.has(name)) return;
        announced.add(name);
        await announce(name);
      };
      let wrote = await this.#personalizePicc(step);
      const applications = await client.getApplicationIds();
      if (!applications.includes(aid)) {
        await step('application');
        await client.createApplication(aid, APPLICATION_SETTINGS, APPLICATION_KEY_COUNT);
        wrote = true;
      }
      await client.selectApplication(aid);
      // Key 0 changes last: when the card's own application master key opens it, it is done.
      if (
        own !== transport &&
        (await this.#authenticates(KEY_APPLICATION_MASTER, own.application))
      ) {
        await this.#checkFiles();
        return wrote;
      }
      await client.authenticate(KEY_APPLICATION_MASTER, transport.application);
      const files = await client.getFileIds();
      if (!files.includes(VALUE_FILE) || !files.includes(RECORD_FILE)) {
        await step('application');
        if (!files.includes(VALUE_FILE)) await client.createValueFile(VALUE_FILE_SPEC);
        if (!files.includes(RECORD_FILE)) await client.createCyclicRecordFile(RECORD_FILE_SPEC);
        wrote = true;
      }
      await this.#checkFiles();
      if (own === transport) return wrote;
      await step('keys');
      for (const [keyNo, role] of [
        [KEY_TILL, 'till'],
        [KEY_MACHINE, 'machine'],
      ] as const) {
        if ((await client.getKeyVersion(keyNo)) === own.version) continue;
        await client.changeKey(keyNo, own[role], own.version, transport[role]);
      }
      await client.changeKey(KEY_APPLICATION_MASTER, own.application, own.version);
      // The proof: the card's own till key opens it now.
      await client.selectApplication(aid);
      await client.authenticate(KEY_TILL, own.till);
      return true;
    });
  }

  /**
   * The PICC level: with per-card keys, the card's own AES master key (changed from the factory
   * key if need be) and the wallet's PICC key settings; without, the factory key stays.
   * Leaves the PICC master key authenticated, to create the application.
   */
  async #personalizePicc(
    announce: (step: DesfirePersonalizationStep) => Promise<void>,
  ): Promise<boolean> {
    const { own, transport } = this.#keys;
    const client = this.#client;
    await client.selectApplication(PICC_AID);
    if (own === transport) {
      await client.authenticate(0, transport.picc);
      return false;
    }
    if (!(await this.#authenticates(0, own.picc))) {
      // Neither key: a card of another system, AuthenticationFail.
      await client.authenticate(0, transport.picc);
      await announce('picc-key');
      await client.changeKey(0, own.picc, own.version);
      await client.authenticate(0, own.picc);
      await client.changeKeySettings(PICC_SETTINGS);
      return true;
    }
    if ((await client.getKeySettings()).settings === PICC_SETTINGS) return false;
    await client.changeKeySettings(PICC_SETTINGS);
    return true;
  }

  /** The wallet application's files must be the wallet's (section 9.2). */
  async #checkFiles(): Promise<void> {
    const value = await this.#walletFile(() => this.#client.getFileSettings(VALUE_FILE));
    const records = await this.#walletFile(() => this.#client.getFileSettings(RECORD_FILE));
    const valueOk =
      value.type === 'value' &&
      value.comm === VALUE_FILE_SPEC.comm &&
      value.lowerLimit === VALUE_FILE_SPEC.lowerLimit &&
      !value.limitedCredit;
    const recordsOk =
      records.type === 'cyclic-record' &&
      records.comm === RECORD_FILE_SPEC.comm &&
      (records.recordSize === RECORD_SIZE || records.recordSize === RECORD_SIZE_V1);
    if (!valueOk || !recordsOk) throw errors.corruptCard();
  }

  /**
   * Selects the wallet application and authenticates the till key: the card's own; its
   * transport key only where allowed (openWallet). Null when the card has no wallet
   * application: with per-card keys and no transport key allowed, AuthenticationFail (no key of
   * its own opens anything on it).
   */
  async #open(): Promise<'card' | 'transport' | null> {
    const { aid, own, transport } = this.#keys;
    const perCard = own !== transport;
    try {
      await this.#client.selectApplication(aid);
    } catch (error) {
      if (!(error instanceof DesfireStatusError && error.is('APPLICATION_NOT_FOUND'))) throw error;
      if (perCard && !this.#transportAllowed) throw errors.authenticationFail(error);
      return null;
    }
    if (!perCard || !this.#transportAllowed) {
      await this.#client.authenticate(KEY_TILL, own.till);
      return 'card';
    }
    if (await this.#authenticates(KEY_TILL, own.till)) return 'card';
    // A refused authentication leaves the application selected.
    await this.#client.authenticate(KEY_TILL, transport.till);
    return 'transport';
  }

  /** Whether `key` opens key `keyNo` (false on AUTHENTICATION_ERROR). */
  async #authenticates(keyNo: number, key: DesfireKey): Promise<boolean> {
    try {
      await this.#client.authenticate(keyNo, key);
      return true;
    } catch (error) {
      if (error instanceof DesfireStatusError && error.is('AUTHENTICATION_ERROR')) return false;
      throw error;
    }
  }

  /**
   * The newest `count` records (fewer when the file holds fewer), oldest first, and their size
   * (v2, or v1 on a wallet made before v2).
   */
  async #records(count: number): Promise<{ records: Buffer[]; recordSize: number }> {
    const settings = await this.#walletFile(() => this.#client.getFileSettings(RECORD_FILE));
    if (
      settings.type !== 'cyclic-record' ||
      (settings.recordSize !== RECORD_SIZE && settings.recordSize !== RECORD_SIZE_V1)
    ) {
      throw errors.corruptCard();
    }
    const size = settings.recordSize;
    const wanted = Math.min(count, settings.currentRecords);
    if (wanted === 0) return { records: [], recordSize: size };
    const records = await this.#client.readRecords(
      RECORD_FILE,
      0,
      wanted,
      size,
      RECORD_FILE_SPEC.comm,
    );
    return { records, recordSize: size };
  }

  /** A wallet file the card does not have: the wallet is corrupt. */
  async #walletFile<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof DesfireStatusError && error.is('FILE_NOT_FOUND')) {
        throw errors.corruptCard();
      }
      throw error;
    }
  }

  async #cardErrors<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toCardError(error);
    }
  }
}

/**
 * An answer this side cannot take as the card's: one whose CMAC or CRC does not verify, or that
 * is not a DESFire answer, or an error status (EV1 sends an error without a CMAC).
 */
function isUnverifiedAnswer(error: unknown): boolean {
  return error instanceof DesfireProtocolError || error instanceof DesfireStatusError;
}
