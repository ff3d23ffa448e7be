// The built-in card simulator: one simulated reader, the virtual cards it has seen (kept in the
// data folder, so a restart keeps them) and the control actions of the HTTP API, the CLI and
// the example page: place a card, take it away, put back a card seen before, and arm a fault.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NFC } from 'nfc-pcsc';
import { z } from 'zod';
import { errors } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { WalletKey } from '../card-session.ts';
import {
  APPLICATION_KEY_COUNT,
  APPLICATION_SETTINGS,
  DEFAULT_DESFIRE_AID,
  PICC_SETTINGS,
  RECORD_FILE_SPEC,
  VALUE_FILE,
  VALUE_FILE_SPEC,
} from '../desfire/desfire-wallet-format.ts';
import { decodeWallet, formatCardId, planWrite, sectorBlocks } from '../wallet-format.ts';
import { SimulatedNfc, SimulatedPcscReader } from './simulated-pcsc.ts';
import { VirtualCard, type AnyVirtualCard } from './virtual-card.ts';
import type { DesfireCardKeys } from '../desfire/desfire-keys.ts';
import { VirtualDesfireCard, type DesfireSnapshot } from './virtual-desfire-card.ts';

/** The faults the control API can arm on the card in the field. */
export const SIMULATOR_FAULTS = [
  'tear-before-commit',
  'tear-after-commit',
  'wrong-key',
  'corrupt',
  'slow',
  'none',
] as const;
export type SimulatorFault = (typeof SIMULATOR_FAULTS)[number];

/** How a card looks to the control API. */
export interface SimulatedCardView {
  cardId: string;
  /** The wallet balance on the card, or null when the wallet cannot be read (corrupt, key). */
  credits: number | null;
}

export interface SimulatorStatus {
  /** The card in the field, or null. */
  card: SimulatedCardView | null;
  /** Every card the simulator has seen, in the field or not. */
  cards: SimulatedCardView[];
}

/** The card types the simulator places. */
export const SIMULATED_CARD_TYPES = ['mifare-classic', 'desfire'] as const;
export type SimulatedCardType = (typeof SIMULATED_CARD_TYPES)[number];

const hexKey = z.string().regex(/^([0-9a-f]{32}|[0-9a-f]{48})$/);
const accessHex = z.string().regex(/^[0-9a-f]{4}$/);
const comm = z.enum(['plain', 'maced', 'enciphered']);
const keyType = z.enum(['aes', 'des', '3k3des']);
const int32 = z.number().int().min(-2147483648).max(2147483647);

/** A DESFire card's memory (VirtualDesfireCard.snapshot()). */
const desfireSnapshotSchema = z.object({
  piccKey: z.object({ type: keyType, key: hexKey, version: z.number().int().min(0).max(255) }),
  piccSettings: z.number().int().min(0).max(255),
  applications: z.array(
    z.object({
      aid: z.number().int().min(1).max(0xffffff),
      settings: z.number().int().min(0).max(255),
      keyType,
      keys: z.array(z.object({ key: hexKey, version: z.number().int().min(0).max(255) })),
      files: z.array(
        z.discriminatedUnion('type', [
          z.object({
            type: z.literal('value'),
            fileNo: z.number().int().min(0).max(31),
            comm,
            access: accessHex,
            lowerLimit: int32,
            upperLimit: int32,
            value: int32,
            limitedCredit: z.boolean(),
            limitedCreditValue: int32,
          }),
          z.object({
            type: z.literal('cyclic-record'),
            fileNo: z.number().int().min(0).max(31),
            comm,
            access: accessHex,
            recordSize: z.number().int().min(1),
            maxRecords: z.number().int().min(2),
            records: z.array(z.string().regex(/^([0-9a-f]{2})+$/)),
          }),
        ]),
      ),
    }),
  ),
}) satisfies z.ZodType<DesfireSnapshot>;

const storedCardsSchema = z.object({
  version: z.literal(1),
  /** cardId -> a MIFARE Classic card's memory, hex (1K or 4K). */
  cards: z.record(
    z.string().regex(/^([0-9A-F]{8}|[0-9A-F]{14})$/),
    z.string().regex(/^([0-9a-f]{2048}|[0-9a-f]{8192})$/),
  ),
  /** cardId -> a DESFire card's memory (absent in files written before DESFire cards). */
  desfireCards: z.record(z.string().regex(/^[0-9A-F]{14}$/), desfireSnapshotSchema).optional(),
  /** The card in the field when the service stopped. */
  inField: z.string().nullable(),
});
type StoredCards = z.infer<typeof storedCardsSchema>;

export interface CardSimulatorOptions {
  dataDir: string;
  /** The wallet sector and key: new cards carry this key, as the shop's personalized cards do. */
  key: WalletKey;
  log: Logger;
  /**
   * Called when a card is placed holding credits: in standalone mode the service records it
   * at the embedded ledger as a card sold before (an import), so it pays out like one. With a
   * provider's ledger nothing is recorded, and such a card pays out only once it is imported.
   */
  onDemoCredits?: (cardId: string, credits: number) => Promise<void>;
  /** The DESFire wallet application's AID (default DEFAULT_DESFIRE_AID). */
  desfireAid?: number;
}

/**
 * A DESFire card holding a wallet of `credits` (docs/card-format.md section 9) in application
 * `aid`, no movement record yet. Without `keys` (or with the trial keys) as a card leaves a shop
 * that has not personalized it: the factory PICC key, the application's keys all zero (version
 * 0); the worker gives it its own keys as it does a MIFARE Classic card on the transport key.
 * With a card's own keys (version 1): as the worker's personalization leaves it.
 */
export function desfireWalletCard(
  uid: Buffer,
  aid: number,
  credits: number,
  keys?: DesfireCardKeys,
): VirtualDesfireCard {
  const card = new VirtualDesfireCard({ uid });
  const { fileNo: valueFileNo, ...valueFile } = VALUE_FILE_SPEC;
  const { fileNo: recordFileNo, ...recordFile } = RECORD_FILE_SPEC;
  const own = keys && keys.version > 0 ? keys : undefined;
  if (own) card.setPiccKey({ ...own.picc, version: own.version }, PICC_SETTINGS);
  const appKeys = own ? [own.application, own.till, own.machine] : [];
  card.installApplication({
    aid,
    settings: APPLICATION_SETTINGS,
    keyType: 'aes',
    keys: Array.from({ length: APPLICATION_KEY_COUNT }, (_, keyNo) => ({
      type: 'aes' as const,
      key: Buffer.from(appKeys[keyNo]?.key ?? Buffer.alloc(16)),
      version: own?.version ?? 0,
    })),
    files: new Map([
      [valueFileNo, { type: 'value', ...valueFile, value: credits, limitedCreditValue: 0 }],
      [recordFileNo, { type: 'cyclic-record', ...recordFile, records: [] }],
    ]),
  });
  return card;
}

/**
 * Default delay of each exchange with a slowed card: longer than the default card timeout
 * (3 s), so the integrator sees CardNotResponding.
 */
export const SLOW_APDU_MS = 3_500;

interface CardSimulatorEvents {
  /** A card was placed, taken away, put back, armed or written: for the tray's panel. */
  changed: [SimulatorStatus];
}

export class CardSimulator extends EventEmitter<CardSimulatorEvents> {
  readonly #options: CardSimulatorOptions;
  readonly #reader = new SimulatedPcscReader();
  readonly #cards = new Map<string, AnyVirtualCard>();
  readonly #file: string;
  #saving: Promise<void> = Promise.resolve();

  private constructor(options: CardSimulatorOptions) {
    super();
    this.#options = options;
    this.#file = join(options.dataDir, 'simulator', 'cards.json');
    this.#reader.onCardWritten = () => void this.#save();
  }

  /** Loads the cards kept in the data folder and puts back the one that was in the field. */
  static async open(options: CardSimulatorOptions): Promise<CardSimulator> {
    const simulator = new CardSimulator(options);
    const stored = await simulator.#load();
    for (const [cardId, memory] of Object.entries(stored.cards)) {
      simulator.#cards.set(
        cardId,
        VirtualCard.fromMemory(Buffer.from(cardId, 'hex'), Buffer.from(memory, 'hex')),
      );
    }
    for (const [cardId, snapshot] of Object.entries(stored.desfireCards ?? {})) {
      simulator.#cards.set(
        cardId,
        VirtualDesfireCard.fromSnapshot(Buffer.from(cardId, 'hex'), snapshot),
      );
    }
    const inField = stored.inField && simulator.#cards.get(stored.inField);
    if (inField) void simulator.#reader.insert(inField);
    return simulator;
  }

  /** The PC/SC context the reader manager uses instead of nfc-pcsc's native one. */
  createNfc(): NFC {
    return new SimulatedNfc(this.#reader).asNfc();
  }

  status(): SimulatorStatus {
    const card = this.#reader.card;
    return {
      card: card ? this.#view(card) : null,
      cards: [...this.#cards.values()].map((known) => this.#view(known)),
    };
  }

  /**
   * Puts a new card in the field (taking away the one there): blank, or holding `credits` (which
   * no ledger issued: a demo card, see `onDemoCredits`). A MIFARE Classic card (the default)
   * carries the configured key; `uid` is 4 or 7 bytes of hex, default a random 4-byte UID. A
   * DESFire card is fresh from the factory, or with `credits` holds a wallet application not
   * personalized yet (desfireWalletApplication); `uid` is 7 bytes, default random.
   */
  async place(request: {
    uid?: string;
    credits?: number;
    type?: SimulatedCardType;
  }): Promise<SimulatedCardView> {
    const desfire = request.type === 'desfire';
    const uid = request.uid === undefined ? randomUid(desfire) : parseUid(request.uid);
    const cardId = formatCardId(uid);
    if (this.#cards.has(cardId)) throw errors.simulatedCardExists(cardId);
    const card = desfire
      ? this.#newDesfireCard(uid, request.credits)
      : this.#newClassicCard(uid, request.credits);
    if (request.credits !== undefined && request.credits > 0) {
      await this.#options.onDemoCredits?.(cardId, request.credits);
    }
    this.#cards.set(cardId, card);
    await this.#putInField(card);
    await this.#save();
    return this.#view(card);
  }

  #newClassicCard(uid: Buffer, credits: number | undefined): VirtualCard {
    const { sector, key, type } = this.#options.key;
    const card = new VirtualCard({ uid });
    if (type === 0x60) card.setKeys(sector, { keyA: key });
    else {
      // Key B serves only where it cannot be read: trailer condition 011, data blocks open to both.
      card.setKeys(sector, { keyB: key });
      card.setAccessBits(sector, [0, 0, 0, 0b011]);
    }
    if (credits !== undefined) {
      const plan = planWrite({ kind: 'blank' }, credits);
      card.setBlock(sectorBlocks(sector).slots[plan.slot], plan.block);
    }
    return card;
  }

  #newDesfireCard(uid: Buffer, credits: number | undefined): VirtualDesfireCard {
    if (uid.length !== 7) {
      throw errors.invalidSimulatorRequest('uid: a DESFire card has a 7-byte UID (14 hex digits)');
    }
    return credits === undefined
      ? new VirtualDesfireCard({ uid })
      : desfireWalletCard(uid, this.#aid, credits);
  }

  get #aid(): number {
    return this.#options.desfireAid ?? DEFAULT_DESFIRE_AID;
  }

  /** Takes the card out of the field; the simulator remembers it. */
  async takeAway(): Promise<void> {
    this.#reader.remove();
    await this.#save();
  }

  /** Puts a card seen before back in the field, with its memory as it was. */
  async putBack(cardId: string): Promise<SimulatedCardView> {
    const card = this.#cards.get(cardId.toUpperCase());
    if (!card) throw errors.unknownSimulatedCard(cardId);
    if (this.#reader.card !== card) await this.#putInField(card);
    await this.#save();
    return this.#view(card);
  }

  /**
   * Arms a fault on the card in the field: the next write torn before or after it commits, a
   * key the service does not know, a wallet that cannot be read, or every exchange with the
   * card `delayMs` late.
   * 'none' disarms the faults that have not fired (a changed key or corrupt wallet stays).
   */
  async arm(fault: SimulatorFault, delayMs = SLOW_APDU_MS): Promise<SimulatedCardView> {
    const card = this.#reader.card;
    if (!card) throw errors.noSimulatedCard();
    // A MIFARE Classic card commits with the block write of a slot, a DESFire card with
    // CommitTransaction (all of a transaction or none of it).
    const commit = card instanceof VirtualDesfireCard ? 'commit' : 'write';
    switch (fault) {
      case 'tear-before-commit':
        card.failAt(commit, 'pull-before');
        break;
      case 'tear-after-commit':
        card.failAt(commit, 'pull-after');
        break;
      case 'wrong-key':
        this.#forgetKeys(card);
        break;
      case 'corrupt':
        this.#corrupt(card);
        break;
      case 'slow':
        card.onApdu(() => ({ delayMs }));
        break;
      case 'none':
        card.clearFaults();
        break;
    }
    await this.#save();
    return this.#view(card);
  }

  /**
   * Keys the service does not know: a MIFARE Classic card's wallet sector keys; a DESFire
   * card's wallet application keys, or its PICC key when it has no wallet application.
   */
  #forgetKeys(card: AnyVirtualCard): void {
    if (card instanceof VirtualCard) {
      card.setKeys(this.#options.key.sector, { keyA: randomBytes(6), keyB: randomBytes(6) });
      return;
    }
    const app = card.application(this.#aid);
    if (!app) card.setPiccKey({ type: 'aes', key: randomBytes(16), version: 0x42 });
    app?.keys.forEach((_, keyNo) => card.setApplicationKey(this.#aid, keyNo, randomBytes(16)));
  }

  /** A wallet that cannot be read: neither slot decodes, or the DESFire wallet lost its files. */
  #corrupt(card: AnyVirtualCard): void {
    if (card instanceof VirtualDesfireCard) {
      card.dropFiles();
      return;
    }
    for (const block of sectorBlocks(this.#options.key.sector).slots) {
      card.setBlock(block, randomBytes(16));
    }
  }

  /** Writes the cards to the data folder; waits for a save in progress. */
  async flush(): Promise<void> {
    await this.#save();
  }

  #putInField(card: AnyVirtualCard): Promise<void> {
    this.#reader.remove();
    return this.#reader.insert(card);
  }

  #view(card: AnyVirtualCard): SimulatedCardView {
    if (card instanceof VirtualDesfireCard) {
      const app = card.application(this.#aid);
      const file = app?.files.get(VALUE_FILE);
      return {
        cardId: card.id,
        credits: !app ? 0 : file?.type === 'value' ? file.value : null,
      };
    }
    const { slots } = sectorBlocks(this.#options.key.sector);
    const state = decodeWallet(card.block(slots[0]), card.block(slots[1]));
    return {
      cardId: card.id,
      credits: state.kind === 'valid' ? state.balance : state.kind === 'blank' ? 0 : null,
    };
  }

  async #load(): Promise<StoredCards> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return { version: 1, cards: {}, inField: null };
      throw error;
    }
    let stored: unknown;
    try {
      stored = JSON.parse(text);
    } catch {
      stored = undefined;
    }
    const parsed = storedCardsSchema.safeParse(stored);
    if (parsed.success) return parsed.data;
    // A damaged file loses the simulated cards, never the service: start over, say so.
    this.#options.log.warn(`simulator: ${this.#file} is unreadable, starting without cards`);
    return { version: 1, cards: {}, inField: null };
  }

  #save(): Promise<void> {
    const next = this.#saving.then(async () => {
      const stored: StoredCards = { version: 1, cards: {}, desfireCards: {}, inField: null };
      for (const [cardId, card] of this.#cards) {
        if (card instanceof VirtualDesfireCard) stored.desfireCards![cardId] = card.snapshot();
        else stored.cards[cardId] = card.dump().toString('hex');
      }
      stored.inField = this.#reader.card?.id ?? null;
      await mkdir(join(this.#options.dataDir, 'simulator'), { recursive: true, mode: 0o700 });
      // Written whole, then renamed: a crash mid-save keeps the previous file.
      const temporary = `${this.#file}.tmp`;
      await writeFile(temporary, `${JSON.stringify(stored)}\n`, { mode: 0o600 });
      await rename(temporary, this.#file);
      this.emit('changed', this.status());
    });
    this.#saving = next.catch((error: unknown) =>
      this.#options.log.warn(`simulator: cannot keep the cards: ${(error as Error).message}`),
    );
    return next;
  }
}

/** A random UID: 4 bytes for a MIFARE Classic card, 7 starting 04 (NXP) for a DESFire card. */
function randomUid(desfire: boolean): Buffer {
  return desfire ? Buffer.concat([Buffer.from([0x04]), randomBytes(6)]) : randomBytes(4);
}

function parseUid(uid: string): Buffer {
  if (!/^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{14})$/.test(uid))
    throw errors.invalidSimulatorRequest('uid must be 8 or 14 hex digits');
  return Buffer.from(uid, 'hex');
}
