import { deriveSectorKeys, walletSectorTrailer } from './card-keys.ts';
import { desfireCardKeys, type DesfireCardKeys } from './desfire/desfire-keys.ts';
import { DEFAULT_DESFIRE_AID } from './desfire/desfire-wallet-format.ts';

/** A key of the wallet sector, one Buffer per key so nfc-pcsc finds it loaded (no LOAD KEY). */
export interface WalletKey {
  key: Buffer;
  /** 0x60 key A, 0x61 key B. */
  type: 0x60 | 0x61;
  sector: number;
}

export interface WalletKeysOptions {
  sector: number;
  /** The configured key (`cardKey`, `cardKeyType`): every card's, or the transport key. */
  key: Buffer;
  type: 0x60 | 0x61;
  /** The card master key (16 bytes); absent: every card opens with the configured key. */
  masterKey?: Buffer;
  /** The DESFire wallet application's AID (default DEFAULT_DESFIRE_AID). */
  desfireAid?: number;
}

/** A DESFire card's wallet keys: its own, and those it carries until it is personalized. */
export interface DesfireWalletKeys {
  aid: number;
  own: DesfireCardKeys;
  transport: DesfireCardKeys;
}

interface DerivedKeys {
  keyB: WalletKey;
  trailer: Buffer;
}

/** Derived keys kept per card id (a card is opened several times per request). */
const REMEMBERED_CARDS = 256;

/**
 * Which key opens a card's wallet sector (docs/card-format.md sections 2 and 8). Without a
 * master key, every card opens with the configured key. With one, each card opens with its own
 * key B, derived from the master key and its UID; the configured key is then the transport key
 * a card carries until it is personalized. The master key stays in here: nothing reads it back.
 */
export class WalletKeys {
  readonly sector: number;
  /** The configured key: every card's without a master key, else the transport key. */
  readonly configured: WalletKey;
  /** The DESFire wallet application's AID. */
  readonly desfireAid: number;
  readonly #masterKey: Buffer | undefined;
  readonly #derived = new Map<string, DerivedKeys>();

  constructor(options: WalletKeysOptions) {
    this.sector = options.sector;
    this.desfireAid = options.desfireAid ?? DEFAULT_DESFIRE_AID;
    this.configured = { key: options.key, type: options.type, sector: options.sector };
    this.#masterKey = options.masterKey && Buffer.from(options.masterKey);
  }

  /** Whether cards have keys of their own (a master key is configured). */
  get perCard(): boolean {
    return this.#masterKey !== undefined;
  }

  /** The key the till opens this card's wallet with: its key B, or the configured key. */
  forCard(cardId: string): WalletKey {
    return this.#derive(cardId)?.keyB ?? this.configured;
  }

  /** The wallet sector's trailer of a personalized card: derived keys A and B, access bits. */
  trailerFor(cardId: string): Buffer {
    const derived = this.#derive(cardId);
    if (!derived) throw new Error('no card master key: cards have no trailer of their own');
    return derived.trailer;
  }

  /**
   * A DESFire card's wallet keys (docs/card-format.md section 9.3): derived from the master key,
   * or without one the trial keys, which are also what a card carries until it is personalized.
   */
  desfireKeysFor(cardId: string): DesfireWalletKeys {
    const uid = Buffer.from(cardId, 'hex');
    const transport = desfireCardKeys(undefined, uid, this.desfireAid);
    const own = this.#masterKey
      ? desfireCardKeys(this.#masterKey, uid, this.desfireAid)
      : transport;
    return { aid: this.desfireAid, own, transport };
  }

  #derive(cardId: string): DerivedKeys | undefined {
    if (!this.#masterKey) return undefined;
    const known = this.#derived.get(cardId);
    if (known) return known;
    const keys = deriveSectorKeys(this.#masterKey, Buffer.from(cardId, 'hex'), this.sector);
    const derived = {
      keyB: { key: keys.keyB, type: 0x61 as const, sector: this.sector },
      trailer: walletSectorTrailer(keys),
    };
    if (this.#derived.size >= REMEMBERED_CARDS) this.#derived.clear();
    this.#derived.set(cardId, derived);
    return derived;
  }
}
