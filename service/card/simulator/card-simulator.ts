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
import { decodeWallet, formatCardId, planWrite, sectorBlocks } from '../wallet-format.ts';
import { SimulatedNfc, SimulatedPcscReader } from './simulated-pcsc.ts';
import { VirtualCard } from './virtual-card.ts';

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

const storedCardsSchema = z.object({
  version: z.literal(1),
  /** cardId -> the card's memory, hex (1K or 4K). */
  cards: z.record(
    z.string().regex(/^([0-9A-F]{8}|[0-9A-F]{14})$/),
    z.string().regex(/^([0-9a-f]{2048}|[0-9a-f]{8192})$/),
  ),
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
  readonly #cards = new Map<string, VirtualCard>();
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
   * no ledger issued: a demo card, see `onDemoCredits`). `uid` is 4 or 7 bytes of hex; default a random 4-byte UID.
   */
  async place(request: { uid?: string; credits?: number }): Promise<SimulatedCardView> {
    const uid = request.uid === undefined ? randomBytes(4) : parseUid(request.uid);
    const cardId = formatCardId(uid);
    if (this.#cards.has(cardId)) throw errors.simulatedCardExists(cardId);
    const { sector, key, type } = this.#options.key;
    const card = new VirtualCard({ uid });
    if (type === 0x60) card.setKeys(sector, { keyA: key });
    else {
      // Key B serves only where it cannot be read: trailer condition 011, data blocks open to both.
      card.setKeys(sector, { keyB: key });
      card.setAccessBits(sector, [0, 0, 0, 0b011]);
    }
    if (request.credits !== undefined) {
      const plan = planWrite({ kind: 'blank' }, request.credits);
      card.setBlock(sectorBlocks(sector).slots[plan.slot], plan.block);
      if (request.credits > 0) await this.#options.onDemoCredits?.(cardId, request.credits);
    }
    this.#cards.set(cardId, card);
    await this.#putInField(card);
    await this.#save();
    return this.#view(card);
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
   * key the service does not know, a wallet neither slot of which decodes, or every exchange
   * with the card `delayMs` late.
   * 'none' disarms the faults that have not fired (a changed key or corrupt wallet stays).
   */
  async arm(fault: SimulatorFault, delayMs = SLOW_APDU_MS): Promise<SimulatedCardView> {
    const card = this.#reader.card;
    if (!card) throw errors.noSimulatedCard();
    const { sector } = this.#options.key;
    const { slots } = sectorBlocks(sector);
    switch (fault) {
      case 'tear-before-commit':
        card.failAt('write', 'pull-before');
        break;
      case 'tear-after-commit':
        card.failAt('write', 'pull-after');
        break;
      case 'wrong-key':
        card.setKeys(sector, { keyA: randomBytes(6), keyB: randomBytes(6) });
        break;
      case 'corrupt':
        for (const block of slots) card.setBlock(block, randomBytes(16));
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

  /** Writes the cards to the data folder; waits for a save in progress. */
  async flush(): Promise<void> {
    await this.#save();
  }

  #putInField(card: VirtualCard): Promise<void> {
    this.#reader.remove();
    return this.#reader.insert(card);
  }

  #view(card: VirtualCard): SimulatedCardView {
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
      const stored: StoredCards = {
        version: 1,
        cards: Object.fromEntries(
          [...this.#cards].map(([cardId, card]) => [cardId, card.dump().toString('hex')]),
        ),
        inField: this.#reader.card?.id ?? null,
      };
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

function parseUid(uid: string): Buffer {
  if (!/^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{14})$/.test(uid))
    throw errors.invalidSimulatorRequest('uid must be 8 or 14 hex digits');
  return Buffer.from(uid, 'hex');
}
