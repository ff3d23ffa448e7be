/**
 * The deterministic simulation of the money path (the method of TigerBeetle's VOPR and
 * FoundationDB's simulator): the production engine, journal, outbox, reconciliation and use
 * cases run against a simulated card reader, a simulated ledger behind a faulty network, a
 * virtual clock and a scheduler that picks the order of everything from one seed. Every run
 * of a seed is the same run, so a failing seed replays exactly.
 *
 * The cards are MIFARE Classic (a simulated card's two slots under the Classic card face) and
 * DESFire (the virtual DESFire card under the DESFire wallet session, its real cryptography
 * and transactions included).
 *
 * Faults: slow, lost, late and duplicated ledger calls; card writes torn before or after the
 * commit point (a Classic slot write, a DESFire CommitTransaction); cards pulled and swapped; the worker crashing (its journal keeps what was
 * durable; the line being written may or may not be) and starting again; the operator
 * changing the API key to another shop's. After the faults stop, every card comes back and
 * time runs on; then the invariants are checked (checkInvariants).
 */
import { createHash } from 'node:crypto';
import { classicWalletCard } from '../../service/card/classic-wallet.ts';
import {
  DEFAULT_DESFIRE_AID,
  VALUE_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { DesfireWalletSession } from '../../service/card/desfire/desfire-wallet-session.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import {
  powerOn,
  type DesfireVolatile,
  type VirtualDesfireCard,
} from '../../service/card/simulator/virtual-desfire-card.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import { decodeWallet, encodeValueBlock } from '../../service/card/wallet-format.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import type { Logger } from '../../service/logger.ts';
import type { CardAccess, CardOnReader } from '../../service/wallet/card-access.ts';
import type { Clock } from '../../service/wallet/clock.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementEngine, type MovementLedger } from '../../service/wallet/movement-engine.ts';
import { MovementJournal, type JournalStore } from '../../service/wallet/movement-journal.ts';
import { phaseOf } from '../../service/wallet/movement-phases.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { SimLedger, SimLedgerError } from './sim-ledger.ts';

/** A small, fast, seedable generator (mulberry32). */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(below: number): number {
    return Math.floor(this.next() * below);
  }
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

interface Event {
  at: number;
  tie: number;
  run: () => void;
  /** Events of a crashed worker never run (null: the outside world, which goes on). */
  epoch: number | null;
  cancelled: boolean;
}

/** The virtual clock and the seeded scheduler: one event at a time, in (time, random) order. */
export class Scheduler {
  time = 0;
  epoch = 0;
  readonly rng: Rng;
  readonly #events: Event[] = [];

  constructor(rng: Rng) {
    this.rng = rng;
  }

  at(delayMs: number, run: () => void, epoch: number | null = this.epoch): Event {
    const event: Event = {
      at: this.time + Math.max(0, delayMs),
      tie: this.rng.next(),
      run,
      epoch,
      cancelled: false,
    };
    this.#events.push(event);
    return event;
  }

  /** Resolves after `delayMs` of virtual time, unless the worker crashed meanwhile. */
  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.at(delayMs, resolve));
  }

  /** The clock the worker's code sees, bound to its life (epoch). */
  clock(): Clock {
    const epoch = this.epoch;
    return {
      now: () => this.time,
      setTimer: (run, ms) => this.at(ms, run, epoch),
      clearTimer: (timer) => {
        if (timer) (timer as Event).cancelled = true;
      },
    };
  }

  /** Runs events until none is left before `until` (virtual ms). */
  async runUntil(until: number): Promise<void> {
    for (;;) {
      // Everything the last event set off (promise chains) runs before the next event.
      await new Promise<void>((resolve) => setImmediate(resolve));
      let next = -1;
      for (let i = 0; i < this.#events.length; i += 1) {
        const event = this.#events[i] as Event;
        const best = this.#events[next];
        if (!best || event.at < best.at || (event.at === best.at && event.tie < best.tie)) next = i;
      }
      const event = this.#events[next];
      if (!event || event.at > until) {
        this.time = Math.max(this.time, until);
        return;
      }
      this.#events.splice(next, 1);
      this.time = Math.max(this.time, event.at);
      if (event.cancelled || (event.epoch !== null && event.epoch !== this.epoch)) continue;
      event.run();
    }
  }
}

/** The journal's lines in memory; the line being appended at a crash may or may not survive. */
class MemoryJournalStore implements JournalStore {
  lines: string[] = [];
  #inFlight: string | undefined;
  readonly #sched: Scheduler;

  constructor(sched: Scheduler) {
    this.#sched = sched;
  }
  async read(): Promise<string> {
    return this.lines.join('');
  }
  async rewrite(text: string): Promise<void> {
    this.lines = text === '' ? [] : text.split(/(?<=\n)/);
  }
  append(line: string): Promise<void> {
    this.#inFlight = line;
    return this.#sched.sleep(this.#sched.rng.between(0, 3)).then(() => {
      this.lines.push(line);
      this.#inFlight = undefined;
    });
  }
  async close(): Promise<void> {}
  crash(keepInFlight: boolean): void {
    if (this.#inFlight !== undefined && keepInFlight) this.lines.push(this.#inFlight);
    this.#inFlight = undefined;
  }
}

export interface NetworkFaults {
  /** Per call: the request never reaches the ledger. */
  lostRequest: number;
  /** Per call: the ledger acts, the answer is lost. */
  lostAnswer: number;
  /** Per call: the request reaches the ledger only after the caller gave up. */
  late: number;
  /** Per call: the request reaches the ledger twice. */
  duplicate: number;
  /** Per call: slow (but in time). */
  slow: number;
}

const NO_FAULTS: NetworkFaults = { lostRequest: 0, lostAnswer: 0, late: 0, duplicate: 0, slow: 0 };
const CALL_TIMEOUT_MS = 5_000;

/** The network between the worker and the ledger, with the worker's client behaviour. */
class SimNetwork implements MovementLedger {
  faults: NetworkFaults = NO_FAULTS;
  readonly #sched: Scheduler;
  readonly #ledger: SimLedger;

  constructor(sched: Scheduler, ledger: SimLedger) {
    this.#sched = sched;
    this.#ledger = ledger;
  }

  createMovement: MovementLedger['createMovement'] = (apiKey, movement) =>
    this.#call(() => this.#ledger.create(apiKey, movement).movement);
  postMovement: MovementLedger['postMovement'] = (apiKey, id, by) =>
    this.#call(() => this.#ledger.resolve(apiKey, id, 'posted', by));
  voidMovement: MovementLedger['voidMovement'] = (apiKey, id, by) =>
    this.#call(() => this.#ledger.resolve(apiKey, id, 'voided', by));
  listPendingMovements: MovementLedger['listPendingMovements'] = (apiKey) =>
    this.#call(() => this.#ledger.listPending(apiKey));
  getMovement: MovementLedger['getMovement'] = (apiKey, id) =>
    this.#call(() => this.#ledger.get(apiKey, id));

  #call<T>(act: () => T): Promise<T> {
    const { rng } = this.#sched;
    const f = this.faults;
    const roll = rng.next();
    const fates = [
      ['lost-request', f.lostRequest],
      ['lost-answer', f.lostAnswer],
      ['late', f.late],
      ['duplicate', f.duplicate],
      ['slow', f.slow],
    ] as const;
    let fate: (typeof fates)[number][0] | 'ok' = 'ok';
    let edge = 0;
    for (const [name, p] of fates) {
      edge += p;
      if (roll < edge) {
        fate = name;
        break;
      }
    }
    // The answer goes back to the worker that asked, if it is still running.
    const caller = this.#sched.epoch;
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (outcome: () => void) => {
        if (done) return;
        done = true;
        outcome();
      };
      // The caller gives up (the client's timeouts and retries, in one).
      this.#sched.at(CALL_TIMEOUT_MS, () => finish(() => reject(errors.ledgerUnavailable())));
      if (fate === 'lost-request') return;
      const there =
        fate === 'late'
          ? rng.between(CALL_TIMEOUT_MS, 3 * CALL_TIMEOUT_MS)
          : fate === 'slow'
            ? rng.between(500, 2_000)
            : rng.between(5, 100);
      // The network goes on after a crash: the request still arrives (epoch null).
      this.#sched.at(
        there,
        () => {
          const answer = attempt(act);
          if (fate === 'duplicate') attempt(act);
          if (fate === 'lost-answer' || fate === 'late') return;
          this.#sched.at(
            rng.between(5, 100),
            () => finish(() => (answer.ok ? resolve(answer.value) : reject(answer.error))),
            caller,
          );
        },
        null,
      );
    });
  }
}

function attempt<T>(act: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: act() };
  } catch (error) {
    if (!(error instanceof SimLedgerError)) throw error;
    // As the worker's ledger client maps the ledger's refusals.
    if (error.status === 401) return { ok: false, error: errors.invalidApiKey() };
    return { ok: false, error: new LedgerRefusal(error.status, error.code) };
  }
}

/** A MIFARE Classic card's two slots, or a DESFire card and what it holds while powered. */
type SimCard =
  | { kind: 'classic'; uid: string; slots: [Buffer, Buffer] }
  | { kind: 'desfire'; uid: string; card: VirtualDesfireCard; powered: DesfireVolatile };

/** The trial keys (no master key): the simulated DESFire cards' wallet keys. */
const WALLET_KEYS = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });
const GET_UID = 0xff;
const COMMIT_TRANSACTION = 0xc7;

/** The reader, its card and its one-at-a-time lock; each APDU takes virtual time. */
class SimReader implements CardAccess {
  card: SimCard | null = null;
  tears = { before: 0, after: 0 };
  /** Called when a torn write took the card away (the customer may put it back). */
  onTear: (card: SimCard) => void = () => undefined;
  #tail: Promise<void> = Promise.resolve();
  readonly #sched: Scheduler;

  constructor(sched: Scheduler) {
    this.#sched = sched;
  }

  /** A new worker process gets a new PC/SC context: the crashed one's lock is gone. */
  reset(): void {
    this.#tail = Promise.resolve();
  }

  withCard<T>(operation: (card: CardOnReader) => Promise<T>): Promise<T> {
    const run = this.#tail.then(async () => {
      const card = this.card;
      if (!card) throw errors.noCard();
      return operation(this.#session(card));
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The tear (if any) the next commit point meets. */
  #tear(): 'before' | 'after' | undefined {
    const { rng } = this.#sched;
    return rng.chance(this.tears.before)
      ? 'before'
      : rng.chance(this.tears.after)
        ? 'after'
        : undefined;
  }

  /**
   * A DESFire card's face: the production session over the virtual card, each command an APDU
   * that takes virtual time; the reader answers GET UID itself. A tear takes the card away
   * before or after it takes its CommitTransaction.
   */
  #desfireSession(card: Extract<SimCard, { kind: 'desfire' }>): CardOnReader {
    const transmit = async (apdu: Buffer) => {
      await this.#sched.sleep(this.#sched.rng.between(1, 20));
      if (this.card !== card) throw errors.noCard();
      if (apdu[0] === GET_UID) return Buffer.concat([card.card.uid, Buffer.from([0x90, 0x00])]);
      const tear = apdu[1] === COMMIT_TRANSACTION ? this.#tear() : undefined;
      const answer = tear === 'before' ? undefined : card.card.execute(card.powered, apdu);
      if (tear || !answer) {
        this.card = null;
        this.onTear(card);
        throw errors.noCard();
      }
      return answer;
    };
    return new DesfireWalletSession(card.uid, transmit, WALLET_KEYS.desfireKeysFor(card.uid));
  }

  /** The card face over the simulated card, as the PC/SC session puts it. */
  #session(card: SimCard): CardOnReader {
    if (card.kind === 'desfire') return this.#desfireSession(card);
    const apdu = async () => {
      await this.#sched.sleep(this.#sched.rng.between(1, 20));
      if (this.card !== card) throw errors.noCard();
    };
    return classicWalletCard({
      cardId: card.uid,
      checkUid: apdu,
      readSlots: async () => {
        await apdu();
        return [Buffer.from(card.slots[0]), Buffer.from(card.slots[1])];
      },
      writeSlotBlock: async (slot, block) => {
        try {
          await apdu();
        } catch (error) {
          return { outcome: 'not-written', error: error as AppError };
        }
        const tear = this.#tear();
        await this.#sched.sleep(this.#sched.rng.between(1, 20));
        if (this.card !== card) return { outcome: 'uncertain', error: errors.cardNotResponding() };
        if (tear !== 'before') card.slots[slot] = Buffer.from(block);
        if (tear) {
          this.card = null;
          this.onTear(card);
          return { outcome: 'uncertain', error: errors.cardNotResponding() };
        }
        return { outcome: 'committed' };
      },
    });
  }
}

const SHOPS = [
  { id: '00000000-0000-4000-8000-00000000000a', key: 'sim-key-shop-a-0123456789' },
  { id: '00000000-0000-4000-8000-00000000000b', key: 'sim-key-shop-b-0123456789' },
] as const;
const SHOP_CREDITS = 5_000;
const TILL_ID = '00000000-0000-4000-8000-0000000000f1';

const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export interface SimOptions {
  /** Contract v1's tombstones (a switch only to show what happens without them). */
  tombstones?: boolean;
}

interface Answer {
  request: number;
  kind: 'recharge' | 'discharge';
  status: number;
  body: unknown;
  /** The card's balance when the answer was given (the card is still locked then). */
  cardBalance: number | null;
  replay: boolean;
}

export interface SimResult {
  seed: number;
  problems: string[];
  /** What happened, for reading a failing seed. */
  trace: string[];
}

/** Runs one seed and checks the invariants. */
export async function runSeed(seed: number, options: SimOptions = {}): Promise<SimResult> {
  const rng = new Rng(seed);
  const sched = new Scheduler(rng);
  const trace: string[] = [];
  const note = (line: string) => trace.push(`${String(sched.time).padStart(7)} ${line}`);
  const ledger = new SimLedger(() => sched.time, { tombstones: options.tombstones ?? true });
  for (const [i, shop] of SHOPS.entries()) {
    ledger.addShop({ id: shop.id, name: `Shop ${i}`, credits: SHOP_CREDITS, creditCost: '0.50' }, [
      shop.key,
    ]);
  }
  const network = new SimNetwork(sched, ledger);
  const reader = new SimReader(sched);
  const store = new MemoryJournalStore(sched);
  const cards: SimCard[] = Array.from({ length: rng.between(1, 3) }, (_, i): SimCard => {
    const balance = rng.between(0, 200);
    if (rng.chance(0.3)) {
      const uid = `04D0000000000${i}`;
      const card = desfireWalletCard(Buffer.from(uid, 'hex'), DEFAULT_DESFIRE_AID, balance);
      return { kind: 'desfire', uid, card, powered: powerOn() };
    }
    return {
      kind: 'classic',
      uid: `0400000${i}`,
      slots: [balance === 0 ? Buffer.alloc(16) : encodeValueBlock(balance, 1), Buffer.alloc(16)],
    };
  });
  // The cards were sold at the first shop before the till used the ledger: imported there.
  for (const card of cards) ledger.importCard(SHOPS[0].id, card.uid, balanceOf(card));
  const total = () =>
    cards.reduce((sum, card) => sum + balanceOf(card), 0) +
    [...ledger.shops.values()].reduce((sum, shop) => sum + shop.credits, 0) +
    [...ledger.movements.values()]
      .filter((movement) => movement.kind === 'recharge' && movement.state === 'pending')
      .reduce((sum, movement) => sum + movement.credits, 0);
  const totalAtStart = total();

  // The till's settings, and the host that keeps keys (current and earlier) across restarts.
  let currentKey: string = SHOPS[0].key;
  let keyChanged = false;
  const earlierKeys = new Set<string>();
  let engine: MovementEngine | undefined;
  let journal: MovementJournal | undefined;
  const log: Logger = {
    info: (message) => (process.env.SIM_VERBOSE ? note(`log info: ${message}`) : undefined),
    warn: (message) => (process.env.SIM_VERBOSE ? note(`log warn: ${message}`) : undefined),
    error: (message) => note(`log error: ${message}`),
  };

  const boot = async () => {
    sched.epoch += 1;
    const epoch = sched.epoch;
    const opened = new MovementJournal(store);
    await opened.open(sched.time);
    const keys = new KeyRing(() => currentKey, fingerprint);
    keys.on('released', (key) => earlierKeys.delete(key));
    const booted = new MovementEngine({
      journal: opened,
      ledger: network,
      keys,
      tillId: TILL_ID,
      log,
      clock: sched.clock(),
      newId: () => uuidFrom(rng),
      // Both ways of answering: after the read-back (the default), or after the post.
      postBeforeAnswer: seed % 2 === 0,
    });
    for (const key of earlierKeys) booted.retireKey(key);
    if (sched.epoch !== epoch) return;
    journal = opened;
    engine = booted;
    booted.start();
    note(`worker started (epoch ${epoch})`);
  };
  const crash = () => {
    sched.epoch += 1;
    store.crash(rng.chance(0.5));
    reader.reset();
    engine = undefined;
    journal = undefined;
    note('worker crashed');
  };
  const present = (card: SimCard) => {
    // Put in the field, a DESFire card powers up: whatever it held only while powered is gone.
    if (card.kind === 'desfire' && reader.card !== card) card.powered = powerOn();
    reader.card = card;
    note(`card ${card.uid} presented`);
    const running = engine;
    // As the service does: a card with an undecided write is settled as soon as it is seen.
    if (running?.uncertainCards.has(card.uid)) {
      reader.withCard((session) => running.settle(session)).catch(() => undefined);
    }
  };

  // The workload: requests, card moves, crashes and a key change, at random virtual times.
  const answers: Answer[] = [];
  const faultsUntil = 60_000;
  const heavy = rng.chance(0.5);
  network.faults = heavy
    ? { lostRequest: 0.05, lostAnswer: 0.08, late: 0.05, duplicate: 0.05, slow: 0.1 }
    : { lostRequest: 0.01, lostAnswer: 0.03, late: 0.02, duplicate: 0.02, slow: 0.05 };
  reader.tears = heavy ? { before: 0.1, after: 0.1 } : { before: 0.03, after: 0.03 };
  present(rng.pick(cards));
  const usedKeys: { key: string; body: string; kind: 'recharge' | 'discharge' }[] = [];
  const requests = rng.between(3, 14);
  for (let request = 0; request < requests; request += 1) {
    sched.at(
      rng.between(0, faultsUntil - 5_000),
      () => {
        const running = engine;
        if (!running) return; // the worker is down: connection refused
        const retry = usedKeys.length > 0 && rng.chance(0.25) ? rng.pick(usedKeys) : undefined;
        const kind = retry?.kind ?? (rng.chance(0.7) ? 'recharge' : 'discharge');
        const body = retry?.body ?? JSON.stringify({ credits: rng.between(1, 60) });
        const idempotencyKey = retry?.key ?? (rng.chance(0.4) ? `idem-${request}` : undefined);
        if (idempotencyKey && !retry) usedKeys.push({ key: idempotencyKey, body, kind });
        const print = fingerprint(currentKey);
        const idempotency = idempotencyKey
          ? {
              scope: `${print}:${idempotencyKey}`,
              requestHash: createHash('sha256').update(`${kind} ${body}`).digest('hex'),
            }
          : undefined;
        note(
          `request ${request}: ${kind} ${body}${idempotencyKey ? ` key ${idempotencyKey}` : ''}`,
        );
        const call =
          kind === 'recharge'
            ? rechargeCard(reader, running, {
                request: JSON.parse(body) as { credits: number },
                customer: { customerId: '', name: '', credits: 0, creditCost: '0.50' },
                keyFingerprint: print,
                idempotency,
              })
            : dischargeCard(reader, running, { keyFingerprint: print, idempotency });
        call.then(
          (answer) => {
            const card = cards.find((candidate) => candidate.uid === answer.cardId);
            answers.push({
              request,
              kind,
              status: 200,
              body: answer,
              cardBalance: card ? balanceOf(card) : null,
              replay: retry !== undefined,
            });
            note(`request ${request}: 200 ${JSON.stringify(answer)}`);
          },
          (error: unknown) => {
            const code = error instanceof AppError ? error.code : String(error);
            answers.push({
              request,
              kind,
              status: 500,
              body: code,
              cardBalance: null,
              replay: false,
            });
            note(`request ${request}: error ${code}`);
          },
        );
      },
      null,
    );
  }
  reader.onTear = (card) => {
    note(`write torn ${card.uid}`);
    if (rng.chance(0.7)) sched.at(rng.between(100, 3_000), () => present(card), null);
  };
  for (let i = rng.between(0, 10); i > 0; i -= 1) {
    sched.at(
      rng.between(0, faultsUntil),
      () => {
        if (rng.chance(0.3)) {
          reader.card = null;
          note('card taken away');
        } else present(rng.pick(cards));
      },
      null,
    );
  }
  for (let i = rng.chance(0.6) ? rng.between(1, 2) : 0; i > 0; i -= 1) {
    sched.at(
      rng.between(0, faultsUntil),
      () => {
        if (!engine) return;
        crash();
        // Unless the end of the faults started it already.
        sched.at(rng.between(0, 5_000), () => void (engine ?? boot()), null);
      },
      null,
    );
  }
  if (rng.chance(0.3)) {
    sched.at(
      rng.between(0, faultsUntil),
      () => {
        const previous = currentKey;
        currentKey = currentKey === SHOPS[0].key ? SHOPS[1].key : SHOPS[0].key;
        earlierKeys.add(previous);
        engine?.retireKey(previous);
        keyChanged = true;
        note(`key changed to ${fingerprint(currentKey)}`);
      },
      null,
    );
  }

  await boot();
  await sched.runUntil(faultsUntil);

  // The faults stop: the network is sound, the worker is up, every card comes back.
  network.faults = NO_FAULTS;
  reader.tears = { before: 0, after: 0 };
  note('faults stop');
  if (!engine) await boot();
  for (const card of cards) {
    sched.at(rng.between(0, 1_000), () => present(card), null);
    await sched.runUntil(sched.time + 5_000);
  }
  // Past the outbox's longest backoff, reconciliation's period and its grace time.
  await sched.runUntil(sched.time + 20 * 60_000);

  const problems = checkInvariants({
    ledger,
    cards,
    answers,
    journal,
    totalAtStart,
    total: total(),
  });
  // Cards only get credits through this till: none is above its account at the shop that
  // loaded it (pending movements counted), unless the key moved shops. A create that reaches
  // the ledger late (the till gave up on it and moved on) may carry a stale balance and flag
  // its card; that recharge never happens (it is voided). One that is posted never flagged.
  if (!keyChanged) {
    for (const [id, cardId] of ledger.flagged) {
      if (ledger.movements.get(id)?.state === 'posted') {
        problems.push(`card ${cardId} flagged card-above-account by recharge ${id}, posted`);
      }
    }
  }
  return { seed, problems, trace };
}

function checkInvariants(world: {
  ledger: SimLedger;
  cards: SimCard[];
  answers: Answer[];
  journal: MovementJournal | undefined;
  totalAtStart: number;
  total: number;
}): string[] {
  const problems: string[] = [];
  const { ledger, journal } = world;
  for (const movement of ledger.movements.values()) {
    if (movement.state === 'pending') {
      problems.push(
        `movement ${movement.id} (${movement.kind} ${movement.credits}) is still pending`,
      );
    }
    if (movement.transitions > 1)
      problems.push(`movement ${movement.id} resolved ${movement.transitions} times`);
  }
  // Nothing is pending any more and nobody spent offline: what the shops' card accounts say a
  // card holds is what it holds, or a discharge could pay out credits no shop put on it.
  for (const card of world.cards) {
    const accounts = [...ledger.shops.keys()].reduce(
      (sum, shop) => sum + ledger.cardAccount(shop, card.uid),
      0,
    );
    if (accounts !== balanceOf(card)) {
      problems.push(
        `card ${card.uid} holds ${balanceOf(card)} but its accounts at the shops add up to ${accounts}`,
      );
    }
  }
  if (world.total !== world.totalAtStart) {
    problems.push(
      `credits not conserved: cards + pools + pending were ${world.totalAtStart}, now ${world.total}`,
    );
  }
  for (const answer of world.answers) {
    if (answer.status !== 200 || answer.replay) continue;
    const body = answer.body as { credits?: number };
    const expected = answer.kind === 'recharge' ? body.credits : 0;
    if (answer.cardBalance !== expected) {
      problems.push(
        `request ${answer.request} was answered ${JSON.stringify(answer.body)} while its card held ${answer.cardBalance}`,
      );
    }
  }
  for (const movement of journal?.movements.values() ?? []) {
    const atLedger = ledger.movements.get(movement.id);
    if (phaseOf(movement) !== 'done') problems.push(`journal: movement ${movement.id} is not done`);
    if (movement.answer && atLedger?.state !== 'posted') {
      problems.push(
        `movement ${movement.id} was answered 200 but the ledger has it ${atLedger?.state ?? 'absent'}`,
      );
    }
    if (atLedger?.state === 'posted' && movement.card !== 'committed') {
      problems.push(
        `movement ${movement.id} is posted but its card write is ${movement.card ?? 'unknown'}`,
      );
    }
  }
  return problems;
}

function balanceOf(card: SimCard): number {
  if (card.kind === 'desfire') {
    const file = card.card.application(DEFAULT_DESFIRE_AID)?.files.get(VALUE_FILE);
    return file?.type === 'value' ? file.value : 0;
  }
  const state = decodeWallet(card.slots[0], card.slots[1]);
  return state.kind === 'valid' ? state.balance : 0;
}

function uuidFrom(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}
