import type { Reader } from 'nfc-pcsc';
import { errors } from '../errors.ts';
import { toCardError } from './card-errors.ts';
import { decodeWallet, sectorBlocks, type WalletState } from './wallet-format.ts';

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
  /** The two slot blocks as read, for deciding a later uncertain write. */
  slots: [Buffer, Buffer];
}

const BLOCK = 16;

/**
 * One card operation on the card that is on the reader: authenticates the wallet sector once,
 * then reads or writes its slots. Every nfc-pcsc failure leaves here as an AppError.
 */
export class CardSession {
  readonly cardId: string;
  readonly #reader: Reader;
  readonly #key: WalletKey;
  #authenticated = false;

  constructor(reader: Reader, cardId: string, key: WalletKey) {
    this.#reader = reader;
    this.cardId = cardId;
    this.#key = key;
  }

  /** Reads both slots (3 APDUs with the key already loaded: authenticate + 2 reads). */
  async readWallet(): Promise<WalletRead> {
    const { slots } = sectorBlocks(this.#key.sector);
    await this.#authenticate();
    const data = await this.#call(() => this.#reader.read(slots[0], 2 * BLOCK, BLOCK));
    const slot0 = Buffer.from(data.subarray(0, BLOCK));
    const slot1 = Buffer.from(data.subarray(BLOCK, 2 * BLOCK));
    const state = decodeWallet(slot0, slot1);
    if (state.kind === 'corrupt') throw errors.corruptCard();
    return {
      cardId: this.cardId,
      state,
      balance: state.kind === 'valid' ? state.balance : 0,
      slots: [slot0, slot1],
    };
  }

  async #authenticate(): Promise<void> {
    if (this.#authenticated) return;
    const { first } = sectorBlocks(this.#key.sector);
    await this.#call(() => this.#reader.authenticate(first, this.#key.type, this.#key.key));
    this.#authenticated = true;
  }

  async #call<T>(apdu: () => Promise<T>): Promise<T> {
    try {
      return await apdu();
    } catch (error) {
      throw toCardError(error);
    }
  }
}
