import type { Reader } from 'nfc-pcsc';
import type { AppError } from '../errors.ts';
import { errors } from '../errors.ts';
import { boundedApdu } from './bounded-apdu.ts';
import { toCardError } from './card-errors.ts';
import {
  decideClassicWrite,
  readClassicWallet,
  writeClassic,
  type ClassicWallet,
} from './classic-wallet.ts';
import type { Hold } from './operation-queue.ts';
import { afterAnswersRead, lastAnswerAt, watchAnswers } from './reader-answers.ts';
import type { WalletCard, WriteDecision, WriteIntent, WriteResult } from './card-face.ts';
import type { WalletKey, WalletKeys } from './wallet-keys.ts';
import { formatCardId, sectorBlocks } from './wallet-format.ts';

export type { WalletKey } from './wallet-keys.ts';
export type { WriteResult } from './card-face.ts';

/** Which key opened the wallet sector: the card's own (or the shared key), or the transport key. */
export type OpenedWith = 'card' | 'transport';

/** A Classic wallet as read, with its state and the two slot blocks. */
export type WalletRead = ClassicWallet;

const BLOCK = 16;
const GET_UID = Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]);

/**
 * One card operation on the card that is on the reader: authenticates the wallet sector once
 * (with the card's key: see WalletKeys), then reads or writes its slots. A card that a failed
 * authentication halted is re-activated before the next one (#reactivate). Every APDU has a
 * deadline; one that passes it fails with CardNotResponding while the reader lock stays held
 * until the APDU really ends. Every nfc-pcsc failure leaves here as an AppError.
 */
export class CardSession implements WalletCard {
  readonly cardId: string;
  readonly #reader: Reader;
  readonly #keys: WalletKeys;
  readonly #apduTimeoutMs: number;
  readonly #hold: Hold;
  /** The key the sector is authenticated with, or null before (and after the trailer changed). */
  #opened: WalletKey | null = null;
  /** The spare block as last read or written (a write may have to clear it: writeClassic). */
  #spare: Buffer | undefined;

  constructor(reader: Reader, cardId: string, keys: WalletKeys, apduTimeoutMs: number, hold: Hold) {
    this.#reader = reader;
    this.cardId = cardId;
    this.#keys = keys;
    this.#apduTimeoutMs = apduTimeoutMs;
    this.#hold = hold;
    // One nfc-pcsc call may be several APDUs: each answer counts (bounded-apdu.ts).
    watchAnswers(reader);
  }

  /**
   * Reads both slots (3 APDUs with the key already loaded: authenticate + 2 reads). A corrupt
   * card is CorruptCard unless `tornProof` shows it blank (classic-wallet.ts).
   */
  async readWallet(tornProof?: WriteIntent): Promise<WalletRead> {
    const [slot0, slot1, spare] = await this.readSector();
    return readClassicWallet(this.cardId, [slot0, slot1], tornProof, spare);
  }

  /** Both slots and the spare block (the float reference), read together. */
  async readSector(): Promise<[Buffer, Buffer, Buffer]> {
    const { slots } = sectorBlocks(this.#keys.sector);
    await this.#authenticate();
    const data = await this.#call(() => this.#reader.read(slots[0], 3 * BLOCK, BLOCK));
    const blocks = [0, 1, 2].map((i) => Buffer.from(data.subarray(i * BLOCK, (i + 1) * BLOCK))) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    this.#spare = blocks[2];
    return blocks;
  }

  /** What the slots show of an earlier write (the card face's decide). */
  async decide(intent: WriteIntent): Promise<WriteDecision> {
    return decideClassicWrite(intent, await this.#readSlots());
  }

  /** Both slot blocks as they are, for deciding an earlier write that may not have landed. */
  async readSlots(): Promise<[Buffer, Buffer]> {
    return this.#readSlots();
  }

  /** Fails with NoCard unless the card on the reader is still this session's (1 APDU). */
  async checkUid(): Promise<void> {
    await this.#checkUid();
  }

  /**
   * Authenticates the wallet sector with the card's key; with per-card keys, when that fails,
   * with the transport key (a card not personalized yet), after re-activating the card the
   * failure halted. Later reads and writes of this session use the key that opened it. Fails
   * with AuthenticationFail when neither opens it.
   */
  async openWallet(): Promise<OpenedWith> {
    try {
      await this.#authenticate(this.#keys.forCard(this.cardId));
      return 'card';
    } catch (error) {
      if (!this.#keys.perCard || (error as AppError).code !== 'AuthenticationFail') throw error;
    }
    await this.#authenticate(this.#keys.configured);
    return 'transport';
  }

  /**
   * Writes a planned write to its slot: checks the UID first (a swapped card is never written), writes the
   * one 16-byte block that is the commit point, and reads it back. The result says whether the
   * write certainly landed, certainly did not, or cannot be known now (the card left or
   * stopped answering while the block was being written).
   */
  async write(intent: WriteIntent): Promise<WriteResult> {
    return writeClassic(intent, this, this.#spare);
  }

  /** Writes 16 bytes into slot 0 or 1 as write does (personalization writes blank slots). */
  async writeSlotBlock(slot: 0 | 1, data: Buffer): Promise<WriteResult> {
    return this.#writeAndReadBack(sectorBlocks(this.#keys.sector).slots[slot], data);
  }

  /** Writes the spare block (a float recharge's reference, before its slot) and reads it back. */
  async writeSpare(data: Buffer): Promise<WriteResult> {
    const written = await this.#writeAndReadBack(sectorBlocks(this.#keys.sector).spare, data);
    // Not certainly written either way: taken as written (a reference it left would count).
    if (written.outcome !== 'not-written') this.#spare = data;
    return written;
  }

  async #writeAndReadBack(block: number, data: Buffer): Promise<WriteResult> {
    const written = await this.#writeBlock(block, data);
    if (written) return written;
    try {
      const readBack = await this.#call(() => this.#reader.read(block, BLOCK, BLOCK));
      if (Buffer.compare(readBack, data) === 0) return { outcome: 'committed' };
      return { outcome: 'uncertain', error: errors.cardWriteUnverified() };
    } catch (error) {
      return { outcome: 'uncertain', error: toCardError(error) };
    }
  }

  /**
   * Writes the wallet sector's trailer of a personalized card (its derived keys and access
   * bits, docs/card-format.md section 8.2). Keys never read back, so 'committed' means the card
   * took the write; authenticating with the new key B afterwards (openWallet) proves it.
   */
  async writeTrailer(): Promise<WriteResult> {
    const written = await this.#writeBlock(
      sectorBlocks(this.#keys.sector).trailer,
      this.#keys.trailerFor(this.cardId),
    );
    // The card dropped the old key's authentication with the trailer it replaced.
    this.#opened = null;
    return written ?? { outcome: 'committed' };
  }

  /** Checks the UID (and that the sector is open), writes one block; undefined when it landed. */
  async #writeBlock(block: number, data: Buffer): Promise<WriteResult | undefined> {
    try {
      await this.#checkUid();
      await this.#authenticate();
    } catch (error) {
      return { outcome: 'not-written', error: toCardError(error) };
    }
    try {
      await this.#call(() => this.#reader.write(block, data, BLOCK));
      return undefined;
    } catch (error) {
      // Once the block went out, no failure says the card took nothing, a status word included:
      // a MIFARE Classic card acknowledges a write after programming the block, so a card that
      // left before that acknowledgement fails the write as one that refused it. The slots,
      // read back or on the next tap, decide it (docs/card-format.md, section 6).
      return { outcome: 'uncertain', error: toCardError(error) };
    }
  }

  async #readSlots(): Promise<[Buffer, Buffer]> {
    const { slots } = sectorBlocks(this.#keys.sector);
    await this.#authenticate();
    const data = await this.#call(() => this.#reader.read(slots[0], 2 * BLOCK, BLOCK));
    return [Buffer.from(data.subarray(0, BLOCK)), Buffer.from(data.subarray(BLOCK, 2 * BLOCK))];
  }

  /**
   * Authenticates with `key` (default: the card's), unless the sector is already open; first
   * re-activates the card if a failed authentication left it halted.
   */
  async #authenticate(key?: WalletKey): Promise<void> {
    if (this.#opened && (key === undefined || key === this.#opened)) return;
    const use = key ?? this.#keys.forCard(this.cardId);
    const { first } = sectorBlocks(this.#keys.sector);
    this.#opened = null;
    if (haltedCards.get(this.#reader) === this.cardId) await this.#reactivate();
    try {
      await this.#call(() => this.#reader.authenticate(first, use.type, use.key));
    } catch (error) {
      const appError = error as AppError;
      if ((appError.cause as { code?: string } | undefined)?.code === LOAD_KEY_FAILED) {
        forgetLoadedKeys(this.#reader);
      }
      if (appError.code === 'AuthenticationFail') haltedCards.set(this.#reader, this.cardId);
      throw error;
    }
    this.#opened = use;
  }

  /**
   * A MIFARE Classic card halts after a failed authentication: it answers nothing more, an
   * authentication with the right key included (an ACR122U answers 63 00), until the reader
   * selects it again. With PC/SC that is a card reset, SCardDisconnect with SCARD_RESET_CARD
   * and SCardConnect again. nfc-pcsc's Reader.disconnect always leaves the card as it is
   * (https://github.com/pokusew/nfc-pcsc/issues/145) and @pokusew/pcsclite has no
   * SCardReconnect (https://github.com/pokusew/node-pcsclite/issues/52), so the reset goes to
   * the pcsclite reader under it. Afterwards the card must still be this session's: another
   * card (or none) is NoCard, and nothing is written to it.
   */
  async #reactivate(): Promise<void> {
    await this.#call(() => resetCard(this.#reader));
    haltedCards.delete(this.#reader);
    await this.#checkUid();
  }

  /** The card on the reader must still be the one this session started with. */
  async #checkUid(): Promise<void> {
    const response = await this.#call(() => this.#reader.transmit(GET_UID, 12));
    const status = response.length >= 2 ? response.readUInt16BE(response.length - 2) : 0;
    if (status !== 0x9000) throw errors.noCard();
    if (formatCardId(response.subarray(0, -2)) !== this.cardId) throw errors.noCard();
  }

  /**
   * One nfc-pcsc call (one APDU or a few), bounded by the card's silence; the lock waits for it
   * even after the deadline.
   */
  #call<T>(apdu: () => Promise<T>): Promise<T> {
    return boundedApdu(
      this.#hold,
      this.#apduTimeoutMs,
      apdu,
      () => lastAnswerAt(this.#reader),
      (judge) => afterAnswersRead(this.#reader, judge),
    );
  }
}

/**
 * The card each reader last left halted by a failed authentication, by card id. A halt outlives
 * the session that caused it (the next request's first authentication would fail too), so it is
 * kept per nfc-pcsc Reader, as nfc-pcsc keeps its key cache. A card taken away and put back is
 * reset once more than it needs: harmless.
 */
const haltedCards = new WeakMap<Reader, string>();

/**
 * Resets the card on the reader: SCardDisconnect with SCARD_RESET_CARD, then nfc-pcsc's own
 * connect, which records the new connection. The reader's key slots survive a card reset on an
 * ACR122U, but not necessarily on every reader: nfc-pcsc's record of them is forgotten, so the
 * next authentication loads its key again (one LOAD KEY) rather than trust a slot that may be
 * empty.
 */
async function resetCard(reader: Reader): Promise<void> {
  const pcsc = reader.reader;
  await new Promise<void>((resolve, reject) =>
    pcsc.disconnect(pcsc.SCARD_RESET_CARD, (error) => (error ? reject(error) : resolve())),
  );
  reader.connection = null;
  forgetLoadedKeys(reader);
  await reader.connect();
}

/** nfc-pcsc's AuthenticationError code when its LOAD KEY got no 90 00. */
const LOAD_KEY_FAILED = 'unable_to_load_key';

/**
 * nfc-pcsc (0.8.1, src/Reader.js loadAuthenticationKey) records which key a reader slot holds
 * only after LOAD KEY answered 90 00. When the reader loaded the key but its answer was lost
 * (the card left at that moment), the record still names the slot's previous key, and the next
 * authentication with that key silently uses the new one: with two keys in turn (a card's own
 * key and the transport key) it authenticates with the wrong key. Forgetting the record makes
 * nfc-pcsc load keys again. Not reported upstream yet; pokusew/nfc-pcsc#28 fixed the same
 * function's other failure path (https://github.com/pokusew/nfc-pcsc/pull/28).
 */
function forgetLoadedKeys(reader: Reader): void {
  const cache = reader as unknown as { keyStorage?: Record<string, Buffer | null> };
  if (cache.keyStorage)
    for (const slot of Object.keys(cache.keyStorage)) cache.keyStorage[slot] = null;
}
