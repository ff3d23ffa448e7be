/**
 * The money engine in memory, for unit tests: a journal store, one Classic card on one reader,
 * the simulated ledger (contract v1, checked against the real one by
 * test/simulation/sim-ledger-contract.test.ts) as the engine calls it, and an engine over them.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { classicWalletCard } from '../../service/card/classic-wallet.ts';
import type { WriteResult } from '../../service/card/card-face.ts';
import { decodeWallet, encodeValueBlock } from '../../service/card/wallet-format.ts';
import { LedgerRefusal, type LedgerMovement } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import { silentLogger, type Logger } from '../../service/logger.ts';
import type { CardAccess, CardOnReader } from '../../service/wallet/card-access.ts';
import type { CardBlocks, KnownBlock } from '../../service/wallet/card-blocks.ts';
import type { CardHolds } from '../../service/wallet/card-holds.ts';
import type { Clock } from '../../service/wallet/clock.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import {
  MovementEngine,
  type MovementEngineOptions,
  type MovementLedger,
} from '../../service/wallet/movement-engine.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import type { JournalStore } from '../../service/wallet/journal-file-store.ts';
import { SimLedger, SimLedgerError } from '../simulation/sim-ledger.ts';

export const SHOP = '00000000-0000-4000-8000-0000000000a1';
export const OTHER_SHOP = '00000000-0000-4000-8000-0000000000b2';
export const KEY = 'engine-test-key-shop-a-01';
export const OTHER_KEY = 'engine-test-key-shop-b-01';
export const TILL = '00000000-0000-4000-8000-00000000c0de';
export const OTHER_TILL = '00000000-0000-4000-8000-00000000beef';
export const CARD = '04E1E2E3';
/** The card a replacement moves the account from (replacementWaits). */
export const LOST = '04C0C0C0';
export const fingerprint = (key: string): string =>
  createHash('sha256').update(key).digest('hex').slice(0, 8);

/** A journal store in memory: reopen the same text as after a restart. */
export class MemoryStore implements JournalStore {
  text = '';
  async read() {
    return this.text;
  }
  async rewrite(text: string) {
    this.text = text;
  }
  async append(line: string) {
    this.text += line;
  }
  async close() {}
}

/**
 * A movement of CARD as the ledger answers it (a create's or post's answer, a card's list): a
 * pending recharge of 5 credits by TILL, unless `fields` say otherwise.
 */
export function ledgerMovement(fields: Partial<LedgerMovement> = {}): LedgerMovement {
  return {
    id: randomUUID(),
    kind: 'recharge',
    cardId: CARD,
    state: 'pending',
    credits: 5,
    amount: '2.50',
    creditCost: '0.50',
    customerCredits: 995,
    createdAt: '2026-01-01T00:00:00.000Z',
    resolvedAt: null,
    tillId: TILL,
    cardBefore: null,
    compensates: null,
    resolvedByTill: null,
    evidence: null,
    awaitsCard: false,
    cardEvidence: null,
    occurredAt: null,
    reference: null,
    ...fields,
  };
}

/** A Logger keeping each line as `level: message`. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (message) => lines.push(`debug: ${message}`),
    info: (message) => lines.push(`info: ${message}`),
    warn: (message) => lines.push(`warn: ${message}`),
    error: (message) => lines.push(`error: ${message}`),
  };
}

/**
 * Till TILL's movement book over an opened journal in memory, its key KEY, its log recorded
 * (`lines`, debug left out): what the engine's parts are tested on alone.
 */
export async function bookInMemory({ clock = new ManualClock() as Clock } = {}) {
  const store = new MemoryStore();
  const journal = new MovementJournal(store);
  await journal.open();
  const log = recordingLogger();
  const book = new MovementBook({
    journal,
    tillId: TILL,
    keys: new KeyRing(() => KEY, fingerprint),
    clock,
    log: { ...log, debug: () => undefined },
    newId: randomUUID,
  });
  return { store, journal, book, lines: log.lines };
}

/**
 * One card on one reader, in memory, through the Classic card face. `nextWrite` decides how the
 * next slot write ends: 'lands' (default), 'fails' (certainly not written), 'lost' (lands, but
 * the reader never says so), 'dropped' (does not land, and the reader never says so). With
 * `spare`, the card has the sector's spare block too, and so carries float recharges.
 */
export function cardOnReader(
  balance: number | 'blank',
  cardId = CARD,
  { spare = false }: { spare?: boolean } = {},
) {
  const slots: [Buffer, Buffer] = [
    balance === 'blank' ? Buffer.alloc(16) : encodeValueBlock(balance, 1),
    Buffer.alloc(16),
  ];
  const rig = {
    slots,
    /** The sector's spare block (a float recharge's reference), with `spare`. */
    spareBlock: Buffer.alloc(16) as Buffer,
    writes: 0,
    nextWrite: 'lands' as 'lands' | 'fails' | 'lost' | 'dropped',
  };
  const spareBlock = {
    readSector: async (): Promise<[Buffer, Buffer, Buffer]> => [
      Buffer.from(slots[0]),
      Buffer.from(slots[1]),
      Buffer.from(rig.spareBlock),
    ],
    writeSpare: async (block: Buffer): Promise<WriteResult> => {
      rig.spareBlock = Buffer.from(block);
      return { outcome: 'committed' };
    },
  };
  const card = classicWalletCard({
    cardId,
    checkUid: async () => undefined,
    ...(spare ? spareBlock : {}),
    readSlots: async () => [Buffer.from(slots[0]), Buffer.from(slots[1])],
    writeSlotBlock: async (slot, block): Promise<WriteResult> => {
      rig.writes += 1;
      const how = rig.nextWrite;
      rig.nextWrite = 'lands';
      if (how === 'fails') return { outcome: 'not-written', error: errors.noCard() };
      if (how !== 'dropped') slots[slot] = Buffer.from(block);
      return how === 'lands'
        ? { outcome: 'committed' }
        : { outcome: 'uncertain', error: errors.cardNotResponding() };
    },
  });
  const access: CardAccess = { withCard: (run) => run(card as CardOnReader) };
  const held = (): number => {
    const state = decodeWallet(slots[0], slots[1]);
    return state.kind === 'valid' ? state.balance : 0;
  };
  return Object.assign(rig, { card, access, held });
}

export type RigLedger = MovementLedger & { failPosts: boolean; calls: string[] };

/** The simulated ledger as the engine calls it; `failPosts` makes posts go unanswered. */
export function ledgerOf(sim: SimLedger): RigLedger {
  const answer = async <T>(act: () => T): Promise<T> => {
    try {
      return act();
    } catch (error) {
      // As the worker's ledger client maps the ledger's refusals.
      if (error instanceof SimLedgerError) throw new LedgerRefusal(error.status, error.code);
      throw error;
    }
  };
  const ledger: RigLedger = {
    failPosts: false,
    calls: [],
    createMovement: (apiKey, movement) => {
      ledger.calls.push(`create ${movement.id}`);
      return answer(() => sim.create(apiKey, movement).movement);
    },
    postMovement: (apiKey, id, by) => {
      ledger.calls.push(`post ${id}`);
      return ledger.failPosts
        ? Promise.reject(errors.ledgerUnavailable())
        : answer(() => sim.resolve(apiKey, id, 'posted', by));
    },
    voidMovement: (apiKey, id, by) => {
      ledger.calls.push(`void ${id}`);
      return answer(() => sim.resolve(apiKey, id, 'voided', by));
    },
    listPendingMovements: (apiKey) => answer(() => sim.listPending(apiKey)),
    getMovement: (apiKey, id) => answer(() => sim.get(apiKey, id)),
    getCardAccount: (apiKey, cardId) => answer(() => sim.cardAccountOf(apiKey, cardId)),
  };
  return ledger;
}

/** An engine of till TILL over `ledger`, with a journal in memory and fast retries. */
export function engineWith(
  ledger: MovementLedger,
  options: {
    currentKey?: () => string;
    store?: MemoryStore;
    tillId?: string;
  } & Partial<Omit<MovementEngineOptions, 'journal' | 'ledger' | 'keys' | 'tillId'>> = {},
) {
  const { currentKey = () => KEY, store = new MemoryStore(), tillId = TILL, ...rest } = options;
  const journal = new MovementJournal(store);
  const keys = new KeyRing(currentKey, fingerprint);
  const engine = new MovementEngine({
    journal,
    ledger,
    keys,
    tillId,
    log: silentLogger,
    retryMs: 10,
    maxRetryMs: 20,
    reconcileEveryMs: 60_000,
    ...rest,
  });
  return { journal, keys, engine, store, open: () => journal.open() };
}

/** Two shops with `credits` each on one simulated ledger, on the wall clock unless told. */
export function simWithShops(credits = 1_000, now = () => Date.now()): SimLedger {
  const sim = new SimLedger(now);
  sim.addShop({ id: SHOP, name: 'A', credits, creditCost: '0.50' }, [KEY]);
  sim.addShop({ id: OTHER_SHOP, name: 'B', credits, creditCost: '0.50' }, [OTHER_KEY]);
  return sim;
}

/**
 * A till (TILL) of SHOP on a fresh simulated ledger (`now` its clock), its journal open, and CARD
 * on its reader holding `credits`, imported at the ledger with as many (a blank card is not
 * imported). The engine is not started: a test starts, settles and closes it.
 */
export async function shopWithCard(
  credits: number | 'blank',
  { now }: { now?: () => number } = {},
) {
  const sim = simWithShops(1_000, now);
  if (credits !== 'blank') sim.importCard(SHOP, CARD, credits);
  const ledger = ledgerOf(sim);
  const rig = engineWith(ledger);
  await rig.open();
  const card = cardOnReader(credits);
  return { sim, ledger, ...rig, card };
}

/** A lost card LOST with 30 credits, blocked, its account waiting for CARD (blank, on the reader). */
export async function replacementWaits() {
  const shop = await shopWithCard('blank');
  shop.sim.importCard(SHOP, LOST, 30);
  shop.sim.cardRules.block(KEY, LOST, true, 'owner', 'lost');
  const changeId = randomUUID();
  shop.sim.cardRules.replace(KEY, {
    id: changeId,
    cardId: LOST,
    newCardId: CARD,
    by: 'owner',
    reason: 'lost',
  });
  return { ...shop, changeId };
}

/** Waits for a condition (never for a time): fails after 30 s (the machine may be busy) saying what it waited for. */
export async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An Idempotency-Key as the routes scope it: the API key's fingerprint and the key. */
export const idempotency = (key: string, body: string, apiKey = KEY) => ({
  scope: `${fingerprint(apiKey)}:${key}`,
  requestHash: createHash('sha256').update(body).digest('hex'),
});

/** A clock whose time moves only when told; its timers run in time order on `advance`. */
export class ManualClock implements Clock {
  time = 0;
  /** Every delay asked of setTimer, in order. */
  readonly delays: number[] = [];
  cleared = 0;
  #timers: { at: number; run: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  setTimer(run: () => void, ms: number): unknown {
    this.delays.push(ms);
    const timer = { at: this.time + ms, run, cancelled: false };
    this.#timers.push(timer);
    return timer;
  }

  clearTimer(timer: unknown): void {
    this.cleared += 1;
    if (timer) (timer as { cancelled: boolean }).cancelled = true;
  }

  /** Timers set and neither run nor cleared. */
  get pending(): number {
    return this.#timers.filter((timer) => !timer.cancelled).length;
  }

  /** Moves time on by `ms`, running each timer due (and what it sets off) in order. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await settled();
      const due = this.#timers
        .filter((timer) => !timer.cancelled && timer.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.cancelled = true;
      // A timer overdue (the test moved `time` on by hand) runs now: time never goes back.
      this.time = Math.max(this.time, due.at);
      due.run();
    }
    this.time = until;
    await settled();
  }
}

/** Lets every promise chain already set off run to its end (no timers involved). */
export async function settled(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The till's card list as the use cases see it: no block known until a refusal tells one
 * (`blocks`), no card held, and the cards read noted (`read`).
 */
export function cardList() {
  const blocks = new Map<string, KnownBlock>();
  const read: string[] = [];
  const list: CardBlocks & CardHolds = {
    blockOf: (cardId) => blocks.get(cardId),
    learntBlocked: (cardId, detail) =>
      blocks.set(cardId, { since: null, ...(detail === undefined ? {} : { detail }) }),
    learntUnblocked: (cardId) => blocks.delete(cardId),
    heldFor: () => [],
    learntRead: (cardId) => read.push(cardId),
  };
  return { list, blocks, read };
}
