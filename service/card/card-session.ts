import type { Reader } from 'nfc-pcsc';
import type { AppError } from '../errors.ts';
import { errors } from '../errors.ts';
import { toCardError } from './card-errors.ts';
import type { Hold } from './operation-queue.ts';
import {
  decodeWallet,
  formatCardId,
  sectorBlocks,
  type PlannedWrite,
  type WalletState,
} from './wallet-format.ts';

/** The wallet sector's key, kept as one Buffer so nfc-pcsc finds it loaded and skips LOAD KEY. */
export interface WalletKey {
  key: Buffer;
  /** 0x60 key A, 0x61 key B. */
  type: 0x60 | 0x61;
  sector: number;
}

export interface WalletRead {
  cardId: string;
  state: Extract<WalletState, { kind: 'blank' | 'valid' }>;
  balance: number;
  /** The two slot blocks as read. */
  slots: [Buffer, Buffer];
}

/** How a card write ended: certainly on the card, certainly not, or not knowable now. */
export type WriteResult =
  | { outcome: 'committed' }
  | { outcome: 'not-written'; error: AppError }
  | { outcome: 'uncertain'; error: AppError };

const BLOCK = 16;
const GET_UID = Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]);

/**
 * One card operation on the card that is on the reader: authenticates the wallet sector once,
 * then reads or writes its slots. Every APDU has a deadline; one that passes it fails with
 * CardNotResponding while the reader lock stays held until the APDU really ends. Every
 * nfc-pcsc failure leaves here as an AppError.
 */
export class CardSession {
  readonly cardId: string;
  readonly #reader: Reader;
  readonly #key: WalletKey;
  readonly #apduTimeoutMs: number;
  readonly #hold: Hold;
  #authenticated = false;

  constructor(reader: Reader, cardId: string, key: WalletKey, apduTimeoutMs: number, hold: Hold) {
    this.#reader = reader;
    this.cardId = cardId;
    this.#key = key;
    this.#apduTimeoutMs = apduTimeoutMs;
    this.#hold = hold;
  }

  /** Reads both slots (3 APDUs with the key already loaded: authenticate + 2 reads). */
  async readWallet(): Promise<WalletRead> {
    const slots = await this.#readSlots();
    const state = decodeWallet(slots[0], slots[1]);
    if (state.kind === 'corrupt') throw errors.corruptCard();
    return {
      cardId: this.cardId,
      state,
      balance: state.kind === 'valid' ? state.balance : 0,
      slots,
    };
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
   * Writes a planned slot: checks the UID first (a swapped card is never written), writes the
   * one 16-byte block that is the commit point, and reads it back. The result says whether the
   * write certainly landed, certainly did not, or cannot be known now (the card left or
   * stopped answering while the block was being written).
   */
  async writeSlot(plan: PlannedWrite): Promise<WriteResult> {
    const block = sectorBlocks(this.#key.sector).slots[plan.slot];
    try {
      await this.#checkUid();
    } catch (error) {
      return { outcome: 'not-written', error: toCardError(error) };
    }
    try {
      await this.#call(() => this.#reader.write(block, plan.block, BLOCK));
    } catch (error) {
      const cardError = toCardError(error);
      // A refusal status (not authenticated, wrong block) means the card did not take it.
      if (cardError.code === 'CardOperationFailed' && /Status code/.test(messageOf(error))) {
        return { outcome: 'not-written', error: cardError };
      }
      return { outcome: 'uncertain', error: cardError };
    }
    try {
      const readBack = await this.#call(() => this.#reader.read(block, BLOCK, BLOCK));
      if (Buffer.compare(readBack, plan.block) === 0) return { outcome: 'committed' };
      return { outcome: 'uncertain', error: errors.cardWriteUnverified() };
    } catch (error) {
      return { outcome: 'uncertain', error: toCardError(error) };
    }
  }

  async #readSlots(): Promise<[Buffer, Buffer]> {
    const { slots } = sectorBlocks(this.#key.sector);
    await this.#authenticate();
    const data = await this.#call(() => this.#reader.read(slots[0], 2 * BLOCK, BLOCK));
    return [Buffer.from(data.subarray(0, BLOCK)), Buffer.from(data.subarray(BLOCK, 2 * BLOCK))];
  }

  async #authenticate(): Promise<void> {
    if (this.#authenticated) return;
    const { first } = sectorBlocks(this.#key.sector);
    await this.#call(() => this.#reader.authenticate(first, this.#key.type, this.#key.key));
    this.#authenticated = true;
  }

  /** The card on the reader must still be the one this session started with. */
  async #checkUid(): Promise<void> {
    const response = await this.#call(() => this.#reader.transmit(GET_UID, 12));
    const status = response.length >= 2 ? response.readUInt16BE(response.length - 2) : 0;
    if (status !== 0x9000) throw errors.noCard();
    if (formatCardId(response.subarray(0, -2)) !== this.cardId) throw errors.noCard();
  }

  /** One APDU exchange, bounded in time; the lock waits for it even after the deadline. */
  async #call<T>(apdu: () => Promise<T>): Promise<T> {
    const exchange = apdu();
    this.#hold(exchange);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(errors.cardNotResponding()), this.#apduTimeoutMs);
    });
    try {
      return await Promise.race([exchange, deadline]);
    } catch (error) {
      throw toCardError(error);
    } finally {
      clearTimeout(timer);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
