/**
 * The deterministic simulation of a whole shop's money path (the method of TigerBeetle's VOPR
 * and FoundationDB's simulator): two shops on one simulated ledger, two to four tills each, every
 * till its own worker process (the production engine, its real journal over a simulated disk,
 * its real ledger client over a simulated network), reader, till id and API key; cards carried
 * between tills, shops and vending machines that spend offline; about a third of them MIFARE
 * DESFire cards (the virtual DESFire card under the production DESFire wallet session), the
 * rest MIFARE Classic. One seed picks everything, in virtual time, so every run of a seed is the
 * same run and a failing seed replays exactly.
 *
 * Faults: ledger calls refused, lost, late, duplicated, throttled or answered by a proxy, and
 * outages; card writes whole, lost, torn in half or garbled as the card leaves (a DESFire
 * CommitTransaction: the card leaving before or after it), some landing after the till that
 * sent them crashed; DESFire cards leaving at any command; tills crashing (their disks keep what
 * was synced, and perhaps a torn last line) or losing their disk; API keys replaced, by another key of the
 * shop or another shop's; cards starting at any generation, wrap-around included. Callers
 * (in most seeds) send their Idempotency-Keys again: after their till restarted (the tray
 * restarts it now and then, and right after an answer was stored; each start compacts the
 * journal), after an answer lost on its way, with the next customer's card on the reader, or
 * after the card was carried to another till; customers take a card away while a till works on
 * it and bring it back; a lost card is found and taken to two tills; some nights pass, so that
 * compaction drops yesterday's answers. Then the faults stop: every till is up, every card
 * comes back where it is awaited, an operator decides what no card can (with what really
 * happened, as evidence), a last request per card must succeed, and the invariants are checked
 * (invariants.ts).
 *
 * The ledger is the in-memory model (sim-ledger.ts), or, for a slice of seeds, the real one's
 * SQL on PGlite (real-ledger.ts): the world is the same, and so is the trace while the two
 * answer alike.
 */
import { createHash } from 'node:crypto';
import {
  encodeMovementRecord,
  RECORD_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { powerOn } from '../../service/card/simulator/virtual-desfire-card.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import {
  LedgerClient,
  LedgerRefusal,
  mayHaveLanded,
  type LedgerCustomer,
} from '../../service/cloud/ledger-client.ts';
import { CardListWatcher } from '../../service/cloud/card-list-watcher.ts';
import { AppError } from '../../service/errors.ts';
import type { Logger } from '../../service/logger.ts';
import type { CardAccess } from '../../service/wallet/card-access.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import {
  MovementEngine,
  type DischargeAnswer,
  type RechargeAnswer,
} from '../../service/wallet/movement-engine.ts';
import {
  ANSWER_RETENTION_MS,
  type Movement as JournalMovement,
} from '../../service/wallet/journal-entries.ts';
import { FileJournalStore } from '../../service/wallet/journal-file-store.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { settleCard } from '../../service/wallet/settle-card.ts';
import { undoRecharge } from '../../service/wallet/undo-recharge.ts';
import { checkInvariants, counted } from './invariants.ts';
import { Life, Rng, Scheduler } from './scheduler.ts';
import {
  balanceOf,
  DESFIRE_AID,
  NO_READER_FAULTS,
  SimReader,
  spendOffline,
  truthOf,
  valueBlock,
  writeShown,
  type CardTruth,
  type Chip,
  type LandedWrite,
  type RequestTrace,
  type SimCard,
} from './sim-cards.ts';
import { SimFiles } from './sim-files.ts';
import { RealLedger } from './real-ledger.ts';
import type { LedgerKind, ShopLedger } from './shop-ledger.ts';
import { SimLedger } from './sim-ledger.ts';
import { BlockScenario, CARD_LIST_EVERY_MS, type BlockWorld } from './block-scenarios.ts';
import { CardScenario, type UndoBody } from './card-scenarios.ts';
import { FloatScenario } from './float-scenarios.ts';
import { ledgerOverHttp, NO_FAULTS, SimNetwork, type LedgerEndpoint } from './sim-network.ts';

const SHOPS = [
  { id: '00000000-0000-4000-8000-00000000000a', name: 'Shop A' },
  { id: '00000000-0000-4000-8000-00000000000b', name: 'Shop B' },
] as const;
const SHOP_CREDITS = 5_000;
const CREDIT_COST_CENTS = 50;
/** Each till's keys: some of each shop, used one after the other as the operator replaces them. */
const KEYS_PER_SHOP = 3;
const keyOf = (till: number, shop: number, n: number) =>
  `sim-key-till-${till}-shop-${shop}-${n}-0123456789`;
/** The shop's operator, who blocks and replaces cards (block-scenarios.ts). */
const operatorKeyOf = (shop: number) => `sim-key-operator-shop-${shop}-0123456789`;
/**
 * Virtual time starts on a Monday morning: the ledger takes only timestamps of its time
 * (occurredAt from 2000 on), and the real one's clock is the simulation's (real-ledger.ts).
 */
const EPOCH = Date.UTC(2026, 0, 5, 8, 0, 0);
const FAULTS_UNTIL = 60_000;

/** Each shop's card master key (DESFire cards' keys are derived from it, AN10922). */
const cardMasterKey = (shop: number) =>
  createHash('sha256').update(`sim-card-master-shop-${shop}`).digest().subarray(0, 16);

const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export interface Till {
  name: string;
  id: string;
  /** The shop its current key belongs to. */
  shop: number;
  /**
   * The shop whose card keys its worker loaded: they are configuration, read at start (a live
   * change of the API key keeps them; a change of the card master key restarts the service).
   */
  cardShop: number;
  key: string;
  /** Keys it was given, per shop, not yet used. */
  spareKeys: string[][];
  /** The host's earlier keys still needed (the data folder's api-keys-in-use.json). */
  earlierKeys: Set<string>;
  life: Life;
  files: SimFiles;
  reader: SimReader;
  client: LedgerClient | undefined;
  engine: MovementEngine | undefined;
  journal: MovementJournal | undefined;
  postBeforeAnswer: boolean;
  /** When its disk was lost (virtual ms): its journal, and the keys' answers, with it. */
  disksLost: number[];
  /** Its journal's movements when it last stopped, to tell what the next start compacted. */
  lastJournal?: ReadonlyMap<string, JournalMovement>;
  /** The shop's card list as its worker learns it (with `--cards`: block-scenarios.ts). */
  cardList?: CardListWatcher;
  /** The list's file in its data folder, and the one before (a crash may keep either). */
  cardListFile: { text?: string; previous?: string };
  /** When the newest poll that had an answer was sent (ms since 1970), and with which key. */
  polled?: { at: number; key: string };
}

/** One POS request and what its caller was told. */
export interface RequestRecord {
  n: number;
  /** When it came (virtual ms). */
  at: number;
  till: string;
  /** The worker process that took it. */
  life: Life;
  kind: 'recharge' | 'discharge' | 'undo';
  request: { credits: number } | { amount: string } | { recharge: string } | Record<string, never>;
  idempotencyKey: string | undefined;
  scope: string | undefined;
  trace: RequestTrace;
  /** The card on the reader when it came. */
  card: SimCard | null;
  /** The answer came from an earlier attempt's (Idempotency-Key replay). */
  replayed: boolean;
  /** Its till's card list named its card blocked when it came (block-scenarios.ts). */
  knewBlock?: boolean;
  /** Whether the ledger counted the movement when the answer was given (invariants.ts). */
  countedWhenAnswered?: boolean;
  outcome?:
    | { status: 200; body: RechargeAnswer | DischargeAnswer | UndoBody }
    | { status: 500; code: string };
}

export interface SimResult {
  seed: number;
  problems: string[];
  /** What happened, for reading a failing seed. */
  trace: string[];
  /** How often the run reached each path worth reaching (see run-seeds.ts). */
  paths: Map<string, number>;
}

export interface SeedOptions {
  /** The in-memory model of the ledger (default), or the real one's SQL on PGlite. */
  ledger?: LedgerKind;
  /** The shops give their tills floats (float-scenarios.ts). */
  floats?: boolean;
  /** The shops give bonus tiers and cashiers undo recharges (card-scenarios.ts); either ledger. */
  cards?: boolean;
}

/** Runs one seed and checks the invariants. */
export async function runSeed(seed: number, options: SeedOptions = {}): Promise<SimResult> {
  const opened: RealLedger[] = [];
  try {
    return await runWorld(
      seed,
      options.ledger ?? 'model',
      opened,
      options.floats === true,
      options.cards === true,
    );
  } finally {
    for (const ledger of opened) await ledger.close();
  }
}

async function runWorld(
  seed: number,
  kind: LedgerKind,
  opened: RealLedger[],
  withFloats: boolean,
  withCards: boolean,
): Promise<SimResult> {
  const floats = withFloats ? new FloatScenario(seed) : undefined;
  const cardRules = withCards ? new CardScenario(seed) : undefined;
  const blocks = withCards ? new BlockScenario(seed) : undefined;
  const rng = new Rng(seed);
  const sched = new Scheduler(rng, EPOCH);
  // The callers' retries across restarts and with other cards, the restarts that compact the
  // journal and the night that ages its answers draw from a stream of their own: a seed without
  // them runs as it did before they were added.
  const callers = new Rng((seed ^ 0x31c0ffee) >>> 0);
  const retrying = callers.chance(0.6);
  const trace: string[] = [];
  const paths = new Map<string, number>();
  const reached = (path: string) => paths.set(path, (paths.get(path) ?? 0) + 1);
  const note = (line: string) => trace.push(`${String(sched.time).padStart(7)} ${line}`);

  // Tills first: the ledger knows their keys.
  const tillCounts = [rng.between(2, 4), rng.between(2, 4)];
  let ledger: ShopLedger;
  let endpoint: LedgerEndpoint;
  if (kind === 'sql') {
    const real = await RealLedger.open(
      () => sched.now(),
      (message) => note(`ledger error: ${message}`),
    );
    opened.push(real);
    ledger = real;
    endpoint = (call) => real.call(call);
  } else {
    const model = new SimLedger(() => sched.now());
    ledger = model;
    endpoint = ({ method, url, apiKey, body, ifNoneMatch }) =>
      ledgerOverHttp(model, method, url, apiKey, body, ifNoneMatch);
  }
  /** What the world does at the ledger from a callback: done before the next event. */
  const atLedger = (work: void | Promise<void>) => {
    if (work) sched.track(work);
  };
  // Whether the two shops' cards open with the same keys (the transport key, say). Otherwise a
  // card at the other shop's till fails authentication.
  const sharedKeys = rng.chance(0.4);
  // A shop's card keys (its master key; both shops' are the first shop's when they share).
  const walletKeys = SHOPS.map(
    (_, shop) =>
      new WalletKeys({
        key: Buffer.alloc(6, 0xff),
        type: 0x60,
        sector: 1,
        masterKey: cardMasterKey(sharedKeys ? 0 : shop),
        desfireAid: DESFIRE_AID,
      }),
  );
  const tillShops = tillCounts.flatMap((count, shop) => Array.from({ length: count }, () => shop));
  for (const [shop, { id, name }] of SHOPS.entries()) {
    const keys = tillShops.flatMap((_, till) =>
      Array.from({ length: KEYS_PER_SHOP }, (__, n) => keyOf(till, shop, n)),
    );
    if (blocks) keys.push(operatorKeyOf(shop));
    const float = floats?.settings[shop];
    await ledger.addShop(
      {
        id,
        name,
        credits: SHOP_CREDITS,
        creditCost: '0.50',
        ...(float ? { float } : {}),
        ...(cardRules ? { cards: cardRules.rules[shop] } : {}),
      },
      keys,
    );
  }
  const network = new SimNetwork(sched, endpoint);
  const writes: LandedWrite[] = [];
  const tills: Till[] = tillShops.map((shop, index) => {
    const name = `T${index}${shop === 0 ? 'a' : 'b'}`;
    const spareKeys = SHOPS.map((_, s) =>
      Array.from({ length: KEYS_PER_SHOP }, (__, n) => keyOf(index, s, n)),
    );
    const till: Till = {
      name,
      id: uuidFrom(rng),
      shop,
      cardShop: shop,
      key: spareKeys[shop]?.shift() as string,
      spareKeys,
      earlierKeys: new Set(),
      life: new Life(),
      files: new SimFiles(sched),
      reader: new SimReader(sched, name, () => till.shop),
      client: undefined,
      engine: undefined,
      journal: undefined,
      postBeforeAnswer: rng.chance(0.3),
      disksLost: [],
      cardListFile: {},
    };
    till.life.alive = false;
    till.reader.onLanded = (write) => {
      writes.push(write);
      note(
        `${name}: ${write.how} write landed on ${write.cardId} (${describe(write.before)} -> ${describe(write.after)})`,
      );
    };
    till.reader.onPath = reached;
    till.reader.onReference = (write) => {
      const names = write.names
        ? `names ${write.names.movementId} (${write.names.credits} credits, generation ${write.names.generation})`
        : 'names nothing';
      note(
        `${name}: ${write.how} ${write.clears ? 'clearing of the float reference' : 'float reference'} landed on ${write.cardId}: ${names}`,
      );
    };
    till.reader.onReferenceRead = (movementId) => {
      const path = floats?.referenceRead(
        { ledger, writes, till: name, tillId: till.id },
        movementId,
      );
      if (path) reached(path);
    };
    till.reader.opens = (card) => sharedKeys || card.home === till.cardShop;
    till.reader.desfireKeys = (cardId) =>
      (walletKeys[till.cardShop] as WalletKeys).desfireKeysFor(cardId);
    // Crashes at the worst moments: with a block write on its way, in the middle of an fsync.
    till.reader.onWriteSent = () => crashAtRandom(till);
    till.files.onSync = () => crashAtRandom(till);
    till.reader.onPulled = (card) => {
      note(`${name}: card ${card.uid} left the reader mid-operation`);
      // The customer puts it back, often.
      if (rng.chance(0.6)) {
        sched.at(
          rng.between(100, 3_000),
          () => {
            if (card.at === null) present(card, till);
          },
          null,
        );
      }
    };
    return till;
  });

  const cards: SimCard[] = Array.from({ length: rng.between(2, 5) }, (_, i) => {
    const home = rng.int(2);
    // About a third DESFire (7-byte UIDs), the rest Classic (4 bytes).
    const desfire = rng.chance(0.35);
    const uid = `04A0B0${desfire ? 'D0E0F0' : ''}${i.toString(16).toUpperCase().padStart(2, '0')}`;
    const card: SimCard = {
      uid,
      chip: desfire
        ? initialDesfire(rng, uid, walletKeys[home] as WalletKeys)
        : { type: 'classic', slots: initialSlots(rng), spare: Buffer.alloc(16) },
      home,
      at: null,
      spentOffline: 0,
      writtenAt: new Set(),
      lost: false,
    };
    note(`card ${card.uid} of shop ${home}: ${describe(truthOf(card))}`);
    return card;
  });
  // Sold at their shop before the tills used the ledger: imported there.
  for (const card of cards) {
    await ledger.importCard(SHOPS[card.home]?.id as string, card.uid, balanceOf(truthOf(card)));
  }
  const total = () =>
    cards.reduce((sum, card) => sum + balanceOf(truthOf(card)) + card.spentOffline, 0) +
    [...ledger.shops.values()].reduce((sum, shop) => sum + shop.credits, 0) +
    [...ledger.movements.values()]
      .filter((movement) => movement.kind === 'recharge' && movement.state === 'pending')
      .reduce((sum, movement) => sum + movement.credits, 0) +
    (floats ? floats.inBook(ledger, writes) : 0);
  const totalAtStart = total();
  blocks?.openBooks(
    ledger,
    SHOPS.map((shop) => shop.id),
    cards,
  );
  floats?.watchBook(total);

  const logOf = (till: Till): Logger => ({
    debug: () => undefined,
    info: (message) =>
      process.env.SIM_VERBOSE ? note(`${till.name} info: ${message}`) : undefined,
    warn: (message) =>
      process.env.SIM_VERBOSE ? note(`${till.name} warn: ${message}`) : undefined,
    error: (message) => note(`${till.name} error: ${message}`),
  });

  const boot = async (till: Till) => {
    if (till.life.alive) return;
    const life = new Life();
    till.life = life;
    till.files.life = life;
    till.reader.reset(life);
    till.cardShop = till.shop;
    note(`${till.name}: starting`);
    const journal = new MovementJournal(new FileJournalStore('/data', till.files));
    await journal.open(sched.now());
    // What the start's compaction dropped: movements done whose answers are past retention.
    for (const [id, movement] of till.lastJournal ?? []) {
      const answeredAt = movement.answer ? Date.parse(movement.answer.at) : 0;
      if (!journal.movements.has(id) && sched.now() - answeredAt > ANSWER_RETENTION_MS) {
        reached('compaction-dropped');
      }
    }
    till.lastJournal = undefined;
    const keys = new KeyRing(() => till.key, fingerprint);
    keys.on('released', (key) => {
      till.earlierKeys.delete(key);
      // The provider revokes a key the till no longer needs, sometimes at once.
      if (rng.chance(0.5)) atLedger(ledger.revokeKey(key));
      note(`${till.name}: key ${fingerprint(key)} released`);
    });
    const client = new LedgerClient({
      baseUrl: 'http://ledger.sim',
      adapter: network.adapter(life),
      time: { now: () => sched.now(), sleep: (ms) => sched.sleep(ms, life) },
      random: () => rng.next(),
    });
    // The precondition of a create that may land though its last try was refused (counted).
    const create = client.createMovement.bind(client);
    client.createMovement = (apiKey, movement) => {
      // Its customer may not wait for the ledger's answer (hop, below).
      const calm = sched.time >= FAULTS_UNTIL;
      if (retrying && !calm && movement.compensates === undefined && callers.chance(0.1)) {
        sched.at(callers.between(5, 150), () => hop(till), null, callers);
      }
      return create(apiKey, movement).catch((error: unknown) => {
        const refused =
          error instanceof LedgerRefusal || (error instanceof AppError && error.status < 500);
        if (refused && mayHaveLanded(error)) reached('create-refused-after-unanswered-try');
        throw error;
      });
    };
    const engine = new MovementEngine({
      journal,
      ledger: client,
      keys,
      tillId: till.id,
      log: logOf(till),
      clock: sched.clock(life),
      newId: () => uuidFrom(rng),
      postBeforeAnswer: till.postBeforeAnswer,
      ...(floats
        ? {
            ...floats.engineTiming,
            floats: floats.engineFloats(
              till,
              client,
              () => sched.now(),
              () => till.engine,
            ),
          }
        : {}),
    });
    for (const key of till.earlierKeys) engine.retireKey(key);
    if (blocks) watchCardList(till, client, life);
    till.client = client;
    till.journal = journal;
    till.engine = engine;
    engine.start();
    note(`${till.name}: started`);
  };
  /**
   * The production card-list watcher of a worker process, over its ledger client (the
   * simulated network), polled on the simulation's clock as the service's timer would, its
   * file on the till's disk (block-scenarios.ts).
   */
  const watchCardList = (till: Till, client: LedgerClient, life: Life) => {
    const file = till.cardListFile;
    const watcher = new CardListWatcher({
      ledger: {
        getCardList: (apiKey, heldSeq) => {
          const sent = { at: sched.now(), key: apiKey };
          return client.getCardList(apiKey, heldSeq).then((list) => {
            if (sent.at >= (till.polled?.at ?? 0)) till.polled = sent;
            return list;
          });
        },
      },
      apiKey: () => till.key,
      fingerprint,
      dataDir: '/data',
      file: {
        name: '/data/card-list.json',
        read: () => file.text,
        write: (text) => {
          file.previous = file.text;
          file.text = text;
        },
      },
      everyMs: CARD_LIST_EVERY_MS,
      log: logOf(till),
    });
    till.cardList = watcher;
    till.polled = undefined;
    const draw = (blocks as BlockScenario).rng;
    const poll = () => {
      void watcher.poll();
      sched.at(CARD_LIST_EVERY_MS, poll, life, draw);
    };
    sched.at(0, poll, life, draw);
  };
  /**
   * Movements a till's journal has decided from their card (what the card showed, or a
   * compensation): kept when its worker stops, as the journal had them durable then, though a
   * later start's compaction may drop them.
   */
  const decidedFromCard = new Set<string>();
  const decidedIn = (journaled: ReadonlyMap<string, JournalMovement>): Set<string> => {
    const decided = new Set<string>();
    for (const movement of journaled.values()) {
      if (movement.card !== undefined && movement.learnt !== true) decided.add(movement.id);
      if (movement.compensates !== undefined) decided.add(movement.compensates);
    }
    return decided;
  };
  /** The worker process ends: what it was doing dies with it. */
  const stop = (till: Till) => {
    for (const id of decidedIn(till.journal?.movements ?? new Map())) decidedFromCard.add(id);
    till.life.alive = false;
    till.lastJournal = till.journal?.movements;
    till.client = undefined;
    till.engine = undefined;
    till.journal = undefined;
    till.cardList?.close();
    till.cardList = undefined;
    if (retrying) retryUnanswered(till);
  };
  const crash = (till: Till) => {
    if (!till.life.alive) return;
    stop(till);
    till.files.crash(rng);
    // The card list is written whole and renamed, unsynced: a crash keeps the new or the old.
    if (blocks?.rng.chance(0.3)) till.cardListFile.text = till.cardListFile.previous;
    if (rng.chance(0.05)) {
      till.files.lose();
      till.cardListFile = {};
      till.disksLost.push(sched.time);
      till.lastJournal = undefined;
      reached('disk-lost');
      // The tray app keeps the till id in its settings too; the headless service only there.
      const keptId = rng.chance(0.5);
      if (!keptId) till.id = uuidFrom(rng);
      note(`${till.name}: crashed, and its disk is lost${keptId ? '' : ' with its till id'}`);
    } else note(`${till.name}: crashed`);
    reached('crash');
  };
  /**
   * The service stops and starts again, its disk whole (the tray restarts it: an update, a
   * setting): its start compacts the journal. Callers waiting on it get no answer.
   */
  const restart = (till: Till, why: string) => {
    if (!till.life.alive) return;
    stop(till);
    note(`${till.name}: restarted (${why})`);
    reached('forced-restart');
    sched.at(callers.between(0, 3_000), () => void boot(till), null, callers);
  };
  // How likely a till crashes at each block write sent and each fsync, in this run.
  const crashiness = rng.chance(0.3) ? rng.between(2, 10) / 100 : 0;
  const crashAtRandom = (till: Till) => {
    if (sched.time >= FAULTS_UNTIL || !rng.chance(crashiness)) return;
    sched.at(
      rng.between(0, 2),
      () => {
        crash(till);
        sched.at(rng.between(0, 5_000), () => void boot(till), null);
      },
      null,
    );
  };

  /** The provider's admin command: posts or voids a movement at the ledger, with evidence. */
  const operatorDecides = (id: string, state: 'posted' | 'voided', evidence: string) => {
    note(`operator: ${id} ${state} (${evidence})`);
    return ledger.decide(id, state, evidence);
  };

  /** Takes a card from wherever it is (a reader, a machine): its customer holds it. */
  const takeAway = (card: SimCard) => {
    for (const till of tills) if (till.reader.card === card) till.reader.remove();
    card.at = null;
  };
  const present = (card: SimCard, till: Till) => {
    if (card.lost) return;
    takeAway(card);
    const previous = till.reader.card;
    if (previous) takeAway(previous);
    till.reader.place(card);
    note(`card ${card.uid} presented at ${till.name}`);
    // As the service does: a card with an undecided write is settled as soon as it is seen.
    const engine = till.engine;
    if (engine?.uncertainCards.has(card.uid)) {
      till.reader.withCard((session) => engine.settle(session)).catch(() => undefined);
    }
  };

  /**
   * The operator presents `card` at `till` and calls POST /cards/settle there (nothing when the
   * till's worker is down), noting the answer; the world runs on for `ms`, and `path` is reached.
   */
  const operatorSettles = async (card: SimCard, till: Till, ms: number, path: string) => {
    const { engine, client } = till;
    if (!engine || !client) return;
    present(card, till);
    settleCard(till.reader, engine, client, till.key).then(
      (answer) => note(`operator: settled at ${till.name}: ${JSON.stringify(answer)}`),
      (error: unknown) => note(`operator: settle at ${till.name}: ${(error as Error).message}`),
    );
    await sched.runUntil(sched.time + ms);
    reached(path);
  };

  const requests: RequestRecord[] = [];
  const ask = (
    till: Till,
    kind: RequestRecord['kind'],
    request: RequestRecord['request'],
    idempotencyKey?: string,
  ): RequestRecord | undefined => {
    const engine = till.engine;
    const n = requests.length;
    const what = `request ${n} at ${till.name}: ${kind} ${JSON.stringify(request)}${idempotencyKey ? ` key ${idempotencyKey}` : ''}`;
    if (!engine) {
      note(`${what}: connection refused (the worker is down)`);
      return undefined;
    }
    const print = fingerprint(till.key);
    const body = JSON.stringify(request);
    const record: RequestRecord = {
      n,
      at: sched.time,
      till: till.name,
      life: till.life,
      kind,
      request,
      idempotencyKey,
      scope: idempotencyKey ? `${print}:${idempotencyKey}` : undefined,
      trace: { shop: till.shop, writes: [] },
      card: till.reader.card,
      replayed: false,
    };
    requests.push(record);
    note(what);
    if (idempotencyKey && !keyed.has(idempotencyKey)) {
      keyed.set(idempotencyKey, { first: record, tries: 0 });
    }
    const idempotency = record.scope
      ? {
          scope: record.scope,
          requestHash: createHash('sha256').update(`${kind} ${body}`).digest('hex'),
        }
      : undefined;
    const access: CardAccess = { withCard: (run) => till.reader.withCard(run, record.trace) };
    const journal = till.journal;
    const movements = traced(engine, record, () =>
      [...(journal?.movements.values() ?? [])]
        .filter((movement) => movement.idempotency?.scope === record.scope)
        .at(-1),
    );
    // The till's card list: blocked cards refused and emptied, replacements picked up.
    const cardList = till.cardList;
    if (cardList && record.card) {
      const polled = till.polled?.key === till.key ? till.polled.at : undefined;
      blocks?.asked(record, till, cardList.blockOf(record.card.uid) !== undefined, polled);
    }
    const rules = cardList ? { blocks: cardList, changes: cardList } : {};
    const recharge = (customer: LedgerCustomer) =>
      rechargeCard(access, movements, {
        request: request as { credits: number },
        customer,
        keyFingerprint: print,
        idempotency,
        ...rules,
        ...(cardList ? { holds: cardList } : {}),
      });
    // Whether the till was online when asked: a sale offline from start to answer kept the
    // offline bounds (its till may learn it is offline while the card is written). How long it
    // had been offline when asked: the till decides a sale before its card write, so one asked
    // inside the offline time limit may be answered a few milliseconds past it.
    const onlineWhenAsked = engine.floats?.keeper.online ?? false;
    const askedAt = sched.now();
    const lastAnsweredWhenAsked = engine.floats?.keeper.lastAnsweredAt;
    const call: Promise<RechargeAnswer | DischargeAnswer | UndoBody> =
      kind === 'recharge'
        ? floats
          ? floats.customer(till).then(recharge)
          : recharge({ customerId: '', name: '', credits: 0, creditCost: '0.50' })
        : kind === 'undo'
          ? undoRecharge(access, movements, {
              recharge: (request as { recharge: string }).recharge,
              keyFingerprint: print,
              idempotency,
              ...(cardList ? { blocks: cardList } : {}),
            })
          : dischargeCard(access, movements, { keyFingerprint: print, idempotency, ...rules });
    call.then(
      (answer) => {
        record.outcome = { status: 200, body: answer };
        floats?.checkBook({ ledger, writes, sched }, `after request ${n}`);
        if (floats && 'credits' in request && !record.replayed) {
          const path = floats.answered(till, {
            movementId: record.trace.movementId,
            credits: request.credits,
            offlineForMs: askedAt - (lastAnsweredWhenAsked ?? Number.NEGATIVE_INFINITY),
            onlineWhenAsked,
          });
          if (path) reached(path);
        }
        const movementId = record.trace.movementId;
        record.countedWhenAnswered = movementId !== undefined && counted(ledger, movementId);
        note(`request ${n}: 200 ${JSON.stringify(answer)}${record.replayed ? ' (replayed)' : ''}`);
        if (record.replayed) reached('replayed-answer');
        if (kind === 'undo') reached(record.replayed ? 'undo-replayed' : 'undo-refunded');
        if ('bonusCredits' in answer && (answer.bonusCredits ?? 0) > 0) reached('bonus-given');
        if (
          record.replayed &&
          idempotencyKey &&
          keyed.get(idempotencyKey)?.first.life !== record.life
        ) {
          reached('replayed-after-restart');
        }
        if (!retrying || !idempotencyKey || sched.time >= FAULTS_UNTIL) return;
        // The answer is stored: the till restarts now and then (its start compacts the
        // journal), and the answer sometimes never reaches the POS, which sends the key again.
        const lost = callers.chance(0.25);
        if (lost) note(`request ${n}: its answer was lost on the way to the POS`);
        if (callers.chance(lost ? 0.5 : 0.1)) restart(till, 'an answer just stored');
        if (lost) retry(idempotencyKey, callers.between(300, 6_000));
      },
      (error: unknown) => {
        const code = error instanceof AppError ? error.code : String(error);
        record.outcome = { status: 500, code };
        floats?.checkBook({ ledger, writes, sched }, `after request ${n}`);
        // With floats or card rules, why (a NoCredits says which of the float's bounds; a
        // CardBlocked, CardChangeWaiting or refused undo says what the ledger held against it).
        const detail =
          (floats || cardRules) && error instanceof AppError ? error.detail : undefined;
        note(`request ${n}: error ${code}${detail ? ` (${detail})` : ''}`);
        if (code === 'IdempotencyKeyOtherCard') reached('refused-other-card');
        if (kind === 'undo') reached(`undo-refused-${code}`);
        if (code === 'CardBlocked') {
          reached(record.knewBlock ? 'blocked-refused-by-list' : 'blocked-refused-by-ledger');
        }
        const floatPath = floats?.refused(code, detail);
        if (floatPath) reached(floatPath);
        // The POS retries with the same Idempotency-Key, often after putting the card back.
        if (idempotencyKey && rng.chance(0.6) && sched.time < FAULTS_UNTIL) {
          if (retrying) return retry(idempotencyKey, callers.between(300, 4_000));
          const card = record.card;
          sched.at(
            rng.between(300, 4_000),
            () => {
              if (card && card.at === null && rng.chance(0.8)) present(card, till);
              ask(till, kind, request, idempotencyKey);
            },
            null,
          );
        }
      },
    );
    return record;
  };
  /** Each Idempotency-Key's first request, and how often its caller sent it again. */
  const keyed = new Map<string, { first: RequestRecord; tries: number }>();
  /**
   * The caller sends an Idempotency-Key again, at its till, after `delay`: mostly with its
   * card put back; sometimes with the next customer's card on the reader, or after its card
   * was carried to another till (and perhaps used there). A till still down is waited for.
   */
  const retry = (idempotencyKey: string, delay: number) => {
    const key = keyed.get(idempotencyKey);
    if (!key || key.tries >= 4) return;
    key.tries += 1;
    const { first } = key;
    const till = tills.find((candidate) => candidate.name === first.till) as Till;
    const card = first.card;
    const again = () => {
      const record = ask(till, first.kind, first.request, idempotencyKey);
      if (record && record.life !== first.life) reached('retried-after-restart');
      if (record && card && record.card !== card) reached('retried-with-other-card');
    };
    sched.at(
      delay,
      () => {
        if (!till.engine) {
          key.tries -= 1;
          return retry(idempotencyKey, callers.between(1_000, 4_000));
        }
        const roll = callers.next();
        // A card goes only where its customer may take it (tillsFor).
        const others = cards.filter(
          (candidate) =>
            candidate !== card &&
            candidate.at === null &&
            !candidate.lost &&
            tillsFor(candidate).includes(till),
        );
        const movable = card && !card.lost ? tillsFor(card) : [];
        const elsewhere = movable.filter((candidate) => candidate !== till);
        if (roll < 0.2 && others.length > 0) {
          const other = callers.pick(others);
          note(`the caller of key ${idempotencyKey} has the next customer's card ${other.uid}`);
          present(other, till);
        } else if (roll < 0.35 && card && elsewhere.length > 0) {
          const there = callers.pick(elsewhere);
          note(`card ${card.uid} of key ${idempotencyKey} was carried to ${there.name}`);
          present(card, there);
          reached('retried-after-card-moved');
          // Its customer used it there, perhaps.
          if (callers.chance(0.3)) ask(there, 'recharge', { credits: callers.between(1, 30) });
          else if (callers.chance(0.2)) ask(there, 'discharge', {});
          sched.at(
            callers.between(1_000, 6_000),
            () => {
              if (callers.chance(0.6) && !card.lost && tillsFor(card).includes(till)) {
                present(card, till);
              }
              again();
            },
            null,
            callers,
          );
          return;
        } else if (card && card.at !== till.name && movable.includes(till) && callers.chance(0.8)) {
          present(card, till);
        }
        again();
      },
      null,
      callers,
    );
  };
  /** A till stopped: each caller it left without an answer sends its key again, mostly. */
  const retryUnanswered = (till: Till) => {
    for (const record of requests) {
      if (record.life !== till.life || record.outcome || !record.idempotencyKey) continue;
      if (sched.time >= FAULTS_UNTIL || !callers.chance(0.8)) continue;
      note(`request ${record.n}: no answer (its worker stopped)`);
      retry(record.idempotencyKey, callers.between(1_000, 9_000));
    }
  };
  let keysUsed = 0;
  const posRequest = (till: Till) => {
    const kind = rng.chance(0.65) ? 'recharge' : 'discharge';
    const request: RequestRecord['request'] =
      kind === 'discharge'
        ? {}
        : rng.chance(0.25)
          ? { amount: `${rng.between(0, 30)}.${rng.between(50, 99)}` }
          : { credits: rng.between(1, 60) };
    ask(till, kind, request, rng.chance(0.5) ? `pos-${(keysUsed += 1)}` : undefined);
  };
  const tillsOf = (shop: number) => tills.filter((till) => till.shop === shop);
  /**
   * Whether the ledger holds the card for an operator's word given without it (`awaitsCard`)
   * that no till has decided from the card yet: no till's journal holds what the card showed
   * of it, nor a compensation of it. Its customer presents it at a till before a machine: a
   * Classic card spent from after a write landed cannot tell the write any more, and the
   * operator's word then stands (docs/card-format.md, section 6; docs/testing.md, "What it
   * cannot see").
   */
  const awaitsTill = (card: SimCard): boolean =>
    [...ledger.movements.values()].some(
      (movement) =>
        movement.cardId === card.uid &&
        movement.awaitsCard &&
        !decidedFromCard.has(movement.id) &&
        !tills.some((till) => till.journal && decidedIn(till.journal.movements).has(movement.id)),
    );
  /**
   * The tills a customer may carry a card to: any, but its shop's only while a movement of it
   * is pending there and the shops' cards share keys (see the customers below).
   */
  // The movement the ledger holds the card for: one pending, or one an operator decided without
  // the card (`awaitsCard`, a card reported lost) that waits for a till to read it.
  const holding = (card: SimCard) =>
    [...ledger.movements.values()].find(
      (movement) =>
        movement.cardId === card.uid && (movement.state === 'pending' || movement.awaitsCard),
    );
  const tillsFor = (card: SimCard): Till[] => {
    const held = holding(card);
    const shop = held && SHOPS.findIndex((candidate) => candidate.id === held.shop);
    return sharedKeys && shop !== undefined ? tillsOf(shop) : tills;
  };

  // The workload: customers carry cards to tills (of their shop, sometimes the other) and to
  // vending machines; tills crash, keys change, the network fails, all at random virtual times.
  const heavy = rng.chance(0.5);
  network.faults = heavy
    ? {
        refused: 0.02,
        lostRequest: 0.04,
        lostAnswer: 0.06,
        late: 0.04,
        duplicate: 0.04,
        slow: 0.08,
        unavailable: 0.03,
        badGateway: 0.03,
        throttled: 0.03,
      }
    : {
        refused: 0.01,
        lostRequest: 0.01,
        lostAnswer: 0.02,
        late: 0.01,
        duplicate: 0.02,
        slow: 0.04,
        unavailable: 0.01,
        badGateway: 0.01,
        throttled: 0.01,
      };
  const readerFaults = heavy
    ? {
        pullBefore: 0.04,
        pullAfter: 0.06,
        tear: 0.05,
        garble: 0.04,
        unverified: 0.02,
        pullOnApdu: 0.01,
      }
    : {
        pullBefore: 0.02,
        pullAfter: 0.02,
        tear: 0.02,
        garble: 0.01,
        unverified: 0.01,
        pullOnApdu: 0.005,
      };
  for (const till of tills) till.reader.faults = readerFaults;
  note(`${tills.length} tills, ${cards.length} cards, ${heavy ? 'heavy' : 'light'} faults`);

  for (let i = rng.between(6, 18); i > 0; i -= 1) {
    sched.at(
      rng.between(0, FAULTS_UNTIL - 8_000),
      () => {
        const card = rng.pick(cards);
        if (card.lost) return;
        if (rng.chance(0.2)) {
          if (awaitsTill(card)) return;
          takeAway(card);
          card.at = `machine of shop ${card.home}`;
          // A machine holds the debit key of its shop's cards; the card may leave too soon.
          const pulled = rng.chance(0.1);
          const keys = () => (walletKeys[card.home] as WalletKeys).desfireKeysFor(card.uid);
          const desfire = card.chip.type === 'desfire';
          void spendOffline(card, rng.between(1, 15), keys, pulled).then((price) => {
            note(
              `card ${card.uid} at a machine: spent ${price} offline${pulled && desfire ? ' (pulled before the commit)' : ''} (${describe(truthOf(card))})`,
            );
            if (price > 0) reached(desfire ? 'desfire-spent-offline' : 'spent-offline');
            if (desfire && pulled) reached('desfire-machine-pulled');
          });
          sched.at(
            rng.between(1_000, 5_000),
            () => {
              if (card.at?.startsWith('machine')) takeAway(card);
            },
            null,
          );
          return;
        }
        // Shops sharing keys: the ledger holds a card with an undecided movement for the tills
        // of that movement's shop only, and another shop's write over it would leave the card
        // unable to tell (docs/testing.md): the customer stays at that shop meanwhile.
        const held = holding(card);
        const heldAt = held && SHOPS.findIndex((candidate) => candidate.id === held.shop);
        const shop =
          sharedKeys && heldAt !== undefined
            ? heldAt
            : rng.chance(0.85)
              ? card.home
              : 1 - card.home;
        const candidates = tillsOf(shop);
        if (candidates.length === 0) return;
        const till = rng.pick(candidates);
        present(card, till);
        let at = rng.between(20, 500);
        for (let k = rng.between(1, 3); k > 0; k -= 1) {
          sched.at(at, () => posRequest(till), null);
          at += rng.between(200, 4_000);
        }
      },
      null,
    );
  }
  /**
   * A customer who does not wait: while a till works on a request for the card on its reader
   * (waiting on the ledger, say), its customer takes the card to another till, asks the same
   * there (or something else), and brings it back. The first till's create may reach the
   * ledger after the card moved on from the state it was planned from: the same request from
   * the same state plans the same block.
   */
  const hop = (at?: Till) => {
    const running = (till: Till) =>
      requests.findLast(
        (record) => record.till === till.name && record.life === till.life && !record.outcome,
      );
    const busy = tills.filter((till) => till.reader.card !== null && running(till));
    const from = at ?? (busy.length > 0 ? callers.pick(busy) : undefined);
    const card = from?.reader.card;
    if (!from || !card) return;
    const others = tillsFor(card).filter((till) => till !== from && till.engine);
    if (others.length === 0) return;
    const to = callers.pick(others);
    // Shops sharing keys: the till's create may still be on its way to the ledger, so nothing
    // holds the card there yet (tillsFor), and another shop's till writing the card from the
    // same state would leave it unable to tell whose write it holds (docs/testing.md, "What it
    // cannot see"; seed 3209): the customer asks at a till of the same shop only.
    if (sharedKeys && to.shop !== from.shop) return;
    const same = running(from);
    note(`card ${card.uid} taken from ${from.name} while it works, to ${to.name}`);
    present(card, to);
    if (same && callers.chance(0.6)) ask(to, same.kind, same.request);
    else if (callers.chance(0.7)) ask(to, 'recharge', { credits: callers.between(1, 20) });
    else ask(to, 'discharge', {});
    sched.at(
      callers.between(300, 4_000),
      () => {
        if (card.at !== to.name || !tillsFor(card).includes(from)) return;
        present(card, from);
        reached('card-hopped-back');
      },
      null,
      callers,
    );
  };
  for (let i = retrying ? callers.between(0, 6) : 0; i > 0; i -= 1) {
    sched.at(callers.between(0, FAULTS_UNTIL), () => hop(), null, callers);
  }
  // Requests with whatever is on the reader, and cards taken away at any moment.
  for (let i = rng.between(0, 4); i > 0; i -= 1) {
    sched.at(rng.between(0, FAULTS_UNTIL - 5_000), () => posRequest(rng.pick(tills)), null);
  }
  for (let i = rng.between(0, 6); i > 0; i -= 1) {
    sched.at(
      rng.between(0, FAULTS_UNTIL),
      () => {
        const till = rng.pick(tills);
        if (till.reader.card) {
          note(`card ${till.reader.card.uid} taken away from ${till.name}`);
          takeAway(till.reader.card);
        }
      },
      null,
    );
  }
  for (const till of tills) {
    if (!rng.chance(0.35)) continue;
    for (let i = rng.between(1, 2); i > 0; i -= 1) {
      sched.at(
        rng.between(0, FAULTS_UNTIL),
        () => {
          crash(till);
          sched.at(rng.between(0, 5_000), () => void boot(till), null);
        },
        null,
      );
    }
  }
  if (rng.chance(0.3)) {
    const till = rng.pick(tills);
    sched.at(
      rng.between(0, FAULTS_UNTIL),
      () => {
        const shop = rng.chance(0.5) ? till.shop : 1 - till.shop;
        const next = till.spareKeys[shop]?.shift();
        if (next === undefined) return;
        const previous = till.key;
        till.key = next;
        till.shop = shop;
        till.earlierKeys.add(previous);
        till.engine?.retireKey(previous);
        reached(shop === tillShops[tills.indexOf(till)] ? 'key-replaced' : 'key-to-other-shop');
        note(`${till.name}: key replaced by ${fingerprint(next)} of shop ${shop}`);
        // The other shop's cards need its card master key too, and the tray restarts the service
        // for that (a restart is at worst a crash).
        if (shop !== till.cardShop && !sharedKeys) {
          crash(till);
          sched.at(rng.between(0, 5_000), () => void boot(till), null);
        }
      },
      null,
    );
  }
  if (rng.chance(0.3)) {
    sched.at(
      rng.between(0, FAULTS_UNTIL - 20_000),
      () => {
        network.down = true;
        note('ledger down');
        sched.at(
          rng.between(2_000, 20_000),
          () => {
            network.down = false;
            note('ledger up');
          },
          null,
        );
      },
      null,
    );
  }

  /**
   * A customer reports a card lost while a movement of it waits for it: the operator voids that
   * movement at the ledger (the admin command). The card turns up later. The movement's shop
   * and the card, if there was one.
   */
  const loseCard = (draw: Rng): { shop: number; card: SimCard } | undefined => {
    const waiting = [...ledger.movements.values()].filter((movement) => {
      const card = cards.find((candidate) => candidate.uid === movement.cardId);
      const till = tills.some((candidate) => candidate.id === movement.tillId);
      // A card that can still decide it (one that cannot, only the operator's word does).
      return (
        movement.state === 'pending' &&
        movement.compensates === null &&
        card?.at === null &&
        till &&
        writeShown(movement, card) !== 'unknown'
      );
    });
    if (waiting.length === 0) return undefined;
    const movement = draw.pick(waiting);
    const card = cards.find((candidate) => candidate.uid === movement.cardId) as SimCard;
    card.lost = true;
    atLedger(operatorDecides(movement.id, 'voided', 'operator: the card was reported lost'));
    reached('voided-card-lost');
    return { shop: SHOPS.findIndex((candidate) => candidate.id === movement.shop), card };
  };
  if (rng.chance(0.15)) {
    sched.at(rng.between(10_000, FAULTS_UNTIL - 5_000), () => void loseCard(rng), null);
  }
  // A lost card is also found while the faults go on, and taken to two tills of its shop, one
  // right after the other: each may set the books right for the operator's word, and the
  // ledger takes one compensation per movement.
  if (retrying && callers.chance(0.4)) {
    sched.at(
      callers.between(10_000, FAULTS_UNTIL - 15_000),
      () => {
        const lost = loseCard(callers);
        if (!lost) return;
        const { shop, card } = lost;
        const ask2 = (till: Till) => {
          present(card, till);
          ask(till, 'recharge', { credits: callers.between(1, 10) });
        };
        sched.at(
          callers.between(2_000, 10_000),
          () => {
            card.lost = false;
            const open = tills.filter((till) => till.shop === shop && till.reader.opens(card));
            if (open.length < 2) return;
            const first = callers.pick(open);
            const second = callers.pick(open.filter((till) => till !== first));
            note(`card ${card.uid}, reported lost, is found`);
            ask2(first);
            sched.at(callers.between(50, 1_500), () => ask2(second), null, callers);
            reached('lost-card-found-at-two-tills');
          },
          null,
          callers,
        );
      },
      null,
      callers,
    );
  }

  // The tray restarts a service now and then: its start compacts the journal.
  for (const till of retrying ? tills : []) {
    for (let i = callers.between(0, 2); i > 0; i -= 1) {
      sched.at(
        callers.between(0, FAULTS_UNTIL),
        () => restart(till, 'the tray restarted the service'),
        null,
        callers,
      );
    }
  }

  // Bonus tiers and the cashier's undo (card-scenarios.ts): a recharge by amount, and the
  // cashier undoing this till's newest recharge of the card on the reader, soon or too late.
  if (cardRules) {
    const draw = cardRules.rng;
    const undo = (till: Till) => {
      const card = till.reader.card;
      const newest = requests.findLast(
        (record) =>
          record.till === till.name &&
          record.kind === 'recharge' &&
          record.card === card &&
          record.outcome?.status === 200,
      );
      const body = newest?.outcome?.status === 200 ? newest.outcome.body : undefined;
      if (!body || !('movementId' in body) || typeof body.movementId !== 'string') return;
      const key = draw.chance(0.6) ? `undo-${(keysUsed += 1)}` : undefined;
      ask(till, 'undo', { recharge: body.movementId }, key);
      reached('undo-asked');
    };
    for (let i = draw.between(4, 12); i > 0; i -= 1) {
      sched.at(
        draw.between(1_000, FAULTS_UNTIL + 30_000),
        () => {
          const till = draw.pick(tills);
          const own = cards.filter((card) => card.home === till.shop);
          const card = draw.pick(own.length > 0 ? own : cards);
          present(card, till);
          ask(till, 'recharge', { amount: cardRules.amount() });
          // The cashier undoes it: soon, after the window, after a machine or another till,
          // or with the next customer's card on the reader.
          sched.at(
            draw.pick([draw.between(500, 4_000), draw.between(10_000, 40_000)]),
            () => {
              if (draw.chance(0.2)) present(draw.pick(cards), till);
              else if (till.reader.card !== card) present(card, till);
              undo(till);
              // Twice, under a key of its own: refused when the first took it back (AlreadyUndone).
              if (draw.chance(0.3))
                sched.at(draw.between(200, 3_000), () => undo(till), null, draw);
            },
            null,
            draw,
          );
        },
        null,
        draw,
      );
    }
  }

  // Blocked cards, found cards and replacements (block-scenarios.ts).
  const blockWorld: BlockWorld | undefined = blocks && {
    sched,
    ledger,
    cards,
    tillsOf,
    tillsFor,
    note,
    reached,
    present,
    ask: (till, kind, request) => void ask(till, kind, request as RequestRecord['request']),
    newCard: (shop, draw) => {
      const n = cards.length;
      const desfire = draw.chance(0.35);
      const uid = `04A0B0${desfire ? 'D0E0F0' : ''}${(0x80 + n).toString(16).toUpperCase()}`;
      const chip: Chip = desfire
        ? {
            type: 'desfire',
            card: desfireWalletCard(
              Buffer.from(uid, 'hex'),
              DESFIRE_AID,
              0,
              (walletKeys[shop] as WalletKeys).desfireKeysFor(uid).own,
            ),
            powered: powerOn(),
          }
        : { type: 'classic', slots: [Buffer.alloc(16), valueBlock(0, 0)], spare: Buffer.alloc(16) };
      const card: SimCard = {
        uid,
        chip,
        home: shop,
        at: null,
        spentOffline: 0,
        writtenAt: new Set(),
        lost: false,
      };
      note(`card ${uid} of shop ${shop}, new: ${describe(truthOf(card))}`);
      return card;
    },
    operatorCall: (shop, url, body) =>
      endpoint({
        method: 'POST',
        url,
        apiKey: operatorKeyOf(shop),
        body,
        text: JSON.stringify(body),
      }),
    newId: (draw) => uuidFrom(draw),
  };
  if (blockWorld) blocks?.schedule(blockWorld, FAULTS_UNTIL);

  for (const till of tills) sched.at(0, () => void boot(till), null);
  await sched.runUntil(FAULTS_UNTIL);

  // The faults stop: the network is sound, every till is up, and every card comes back to
  // each till awaiting it, until none awaits one.
  network.faults = NO_FAULTS;
  network.down = false;
  for (const till of tills) till.reader.faults = NO_READER_FAULTS;
  note('faults stop');
  for (const card of cards) card.lost = false;
  for (const till of tills) sched.at(0, () => void boot(till), null);
  await sched.runUntil(sched.time + 10_000);
  // Some customers come back much later (longer than any grace time a till could wait).
  const late = new Set(cards.filter(() => rng.chance(0.3)));
  const bringBack = async (which: (card: SimCard) => boolean) => {
    for (let round = 0; round < 3; round += 1) {
      for (const till of tills) {
        for (const uid of till.engine?.uncertainCards ?? []) {
          const card = cards.find((candidate) => candidate.uid === uid) as SimCard;
          if (!which(card)) continue;
          present(card, till);
          await sched.runUntil(sched.time + 3_000);
        }
      }
      // A reconciliation: adopted movements show up, other tills' decisions are learnt.
      await sched.runUntil(sched.time + 70_000);
    }
  };
  await bringBack((card) => !late.has(card));
  if (retrying && callers.chance(0.3)) {
    // The shop closes for the night and the tills are shut down. In the morning each starts
    // again and its start compacts the journal: yesterday's answers, past their 24 h, go.
    note('the shop closes for the night');
    for (const till of tills) if (till.life.alive) stop(till);
    await sched.runUntil(sched.time + 25 * 60 * 60_000);
    for (const till of tills)
      sched.at(callers.between(0, 60_000), () => void boot(till), null, callers);
    await sched.runUntil(sched.time + 70_000);
    reached('night');
  }
  if (late.size > 0) {
    await sched.runUntil(sched.time + 6 * 60_000);
    await bringBack((card) => late.has(card));
    reached('card-back-late');
  }
  if (floats) {
    // The till float's outages, dying tills and carried cards, then an operator's closes.
    const floatWorld = {
      sched,
      network,
      ledger,
      tills,
      cards,
      writes,
      shopIds: SHOPS.map((shop) => shop.id),
      note,
      reached,
      present,
      ask: (till: Till, kind: RequestRecord['kind'], request: object) =>
        void ask(till, kind, request as RequestRecord['request']),
      kill: (till: Till, loseDisk: boolean) => {
        if (!till.life.alive) return;
        stop(till);
        till.files.crash(rng);
        if (!loseDisk) return;
        till.files.lose();
        till.disksLost.push(sched.time);
        till.lastJournal = undefined;
      },
      boot: (till: Till) => void boot(till),
    };
    const until = floats.schedule(floatWorld, sched.time);
    await sched.runUntil(until);
    for (const till of tills) sched.at(0, () => void boot(till), null);
    await bringBack(() => true);
    await floats.settle(floatWorld);
  }

  // The movements of a till gone for good (its disk and its till id lost), or moved to another
  // shop, are decided by their cards at another till of the
  // shop: the operator presents each and calls POST /cards/settle. (What an operator decided
  // without the card holds the card until a till reads it: any request with the card does.)
  for (const movement of [...ledger.movements.values()]) {
    if (movement.state !== 'pending') continue;
    const card = cards.find((candidate) => candidate.uid === movement.cardId) as SimCard;
    const own = tills.find((candidate) => candidate.id === movement.tillId);
    const shop = SHOPS.findIndex((candidate) => candidate.id === movement.shop);
    // Its own till decides it, unless it now works for another shop (it no longer lists this
    // shop's movements) or cannot open the card.
    if (own?.shop === shop && own.reader.opens(card)) continue;
    const till = tills.find(
      (candidate) => candidate.shop === shop && candidate.engine && candidate !== own,
    );
    if (till) await operatorSettles(card, till, 3_000, 'settled-at-another-till');
  }
  // What no card can decide (a write another writer covered), an operator decides with what
  // really happened as evidence; each till learns it from the ledger.
  for (const movement of ledger.movements.values()) {
    if (movement.state !== 'pending' || movement.compensates !== null) continue;
    const card = cards.find((candidate) => candidate.uid === movement.cardId);
    if (!card || writeShown(movement, card) !== 'unknown') continue;
    const landed = writes.some(
      (write) => write.movementId === movement.id && write.how === 'whole',
    );
    await operatorDecides(
      movement.id,
      landed ? 'posted' : 'voided',
      `operator: the card's write ${landed ? 'landed' : 'never landed'}`,
    );
    reached('operator-decided');
  }
  // Each till learns the operator's words at its next reconciliation (slower with floats).
  await sched.runUntil(sched.time + Math.max(150_000, 2 * (floats?.quietMs ?? 0)));
  // A card a shop holds for an operator's word given without it is decided by the next request
  // with it at a till of that shop (its own till, when it can, decides it on sight).
  for (const movement of [...ledger.movements.values()]) {
    if (!movement.awaitsCard) continue;
    const card = cards.find((candidate) => candidate.uid === movement.cardId) as SimCard;
    const shop = SHOPS.findIndex((candidate) => candidate.id === movement.shop);
    const opens = tills.filter(
      (candidate) => candidate.shop === shop && candidate.engine && candidate.reader.opens(card),
    );
    if (floats && movement.floatId !== null) {
      // A float recharge's: a request would be sold from a float without asking the ledger,
      // which frees the card only on a create it refuses; the operator settles the card at a
      // till of the shop (POST /cards/settle), its own when it can, and the card's word, or
      // the operator's where it shows neither side (another writer's block at the planned
      // generation, seeds 96 and 116), is told to the ledger.
      const till = opens.find((candidate) => candidate.id === movement.tillId) ?? opens[0];
      if (till) await operatorSettles(card, till, 10_000, 'held-float-card-settled');
      continue;
    }
    const till = opens[0];
    if (!till) continue;
    present(card, till);
    ask(till, 'recharge', { credits: rng.between(1, 5) });
    await sched.runUntil(sched.time + 10_000);
    reached('held-card-asked');
  }
  // The replacements not made yet are made, and each new card still waited for is presented.
  if (blockWorld) {
    // The real ledger's calls are awaited; the model's answers are not (no turn for the tills).
    const settled = blocks?.settle(blockWorld);
    if (settled) await settled;
    await sched.runUntil(sched.time + 15_000);
  }

  // Liveness: with the faults gone, a recharge and a payout of every card at a till of its shop
  // succeed (unless the card is corrupt, or holds more than that shop put on it).
  const probes: { card: SimCard; records: (RequestRecord | undefined)[] }[] = [];
  for (const card of cards) {
    const home = tillsOf(card.home);
    const last = [...writes].reverse().find((write) => write.cardId === card.uid);
    // A card a till of its shop still has a movement pending for goes back to that till, as
    // MovementPendingAtOtherTill tells the cashier (a pickup the replacements above left
    // unfinished, the new card pulled mid-write, has no other way to be decided).
    const pending = [...ledger.movements.values()].find(
      (movement) => movement.cardId === card.uid && movement.state === 'pending',
    );
    const till =
      home.find((candidate) => candidate.id === pending?.tillId) ??
      home.find((candidate) => candidate.name === last?.till) ??
      home[0];
    if (!till) continue;
    present(card, till);
    const recharge = ask(till, 'recharge', { credits: rng.between(1, 5) }, `probe-${card.uid}`);
    await sched.runUntil(sched.time + 10_000);
    const discharge = ask(till, 'discharge', {});
    await sched.runUntil(sched.time + 10_000);
    probes.push({ card, records: [recharge, discharge] });
  }
  await sched.runUntil(sched.time + 120_000);

  // An operator's word given without the card, that a till then read the card for.
  for (const movement of ledger.movements.values()) {
    const byOperator = movement.resolvedByTill === null && movement.evidence !== null;
    if (byOperator && movement.cardBefore !== null && movement.compensates === null) {
      if (!movement.awaitsCard) reached('operator-word-decided-by-card');
    }
  }
  // Float recharges nobody can report any more, which their closed float's write-off holds.
  const writtenOff = floats?.writtenOffUnseen({ ledger, writes, cards });
  const floatProblems =
    floats && writtenOff
      ? floats.check({
          ledger,
          writes,
          start: sched.start,
          cards,
          shopIds: SHOPS.map((shop) => shop.id),
          writtenOff,
        })
      : [];
  const problems = checkInvariants({
    ledger,
    shopIds: SHOPS.map((shop) => shop.id),
    cards,
    tills,
    requests,
    writes,
    probes,
    totalAtStart,
    // What emptyings of blocked cards took off them, less what replacements put on new ones.
    total: total() + (blocks ? blocks.bookDelta(ledger) : 0),
    creditCostCents: CREDIT_COST_CENTS,
    ...(writtenOff ? { writtenOff: writtenOff.movements } : {}),
    ...(blocks
      ? {
          blocks: {
            blockedAtHome: (card: SimCard) => blocks.blockedAtHome(card),
            accountGap: (card: SimCard) => blocks.accountGap(ledger, card),
          },
        }
      : {}),
  });
  problems.push(...floatProblems);
  // The real ledger's books as the provider checks them (`card-wallet-cloud check`).
  if (ledger.check) {
    problems.push(
      ...(await ledger.check()).map((problem) => `card-wallet-cloud check: ${problem}`),
    );
  }
  if (cardRules) {
    const undos = requests.flatMap((record) =>
      record.kind === 'undo' && record.outcome?.status === 200
        ? [
            {
              n: record.n,
              body: record.outcome.body as UndoBody,
              movementId: record.trace.movementId,
            },
          ]
        : [],
    );
    problems.push(
      ...cardRules.check(
        ledger,
        SHOPS.map((shop) => shop.id),
        undos,
      ),
    );
  }
  if (blocks) {
    problems.push(
      ...blocks.check(
        ledger,
        SHOPS.map((shop) => shop.id),
        cards,
        requests,
      ),
    );
  }
  for (const [fate, count] of network.fates) paths.set(`network-${fate}`, count);
  if (writtenOff && writtenOff.movements.size > 0) {
    paths.set('float-written-off-unseen', writtenOff.movements.size);
  }
  const topUpsAskedAgain = floats ? ledger.floats.topUpsAskedAgain : 0;
  if (topUpsAskedAgain > 0) paths.set('float-top-up-asked-again', topUpsAskedAgain);
  for (const [code, count] of network.refusals) {
    paths.set(`ledger-refused-${code.replace(/\W+/g, '-')}`, count);
  }
  if (network.landedAfterRefusal > 0) {
    paths.set('create-landed-after-its-refusal', network.landedAfterRefusal);
  }
  for (const till of tills) if (till.files.tornTails > 0) reached('journal-torn-tail');
  for (const movement of ledger.movements.values()) {
    if (movement.compensates !== null) reached(`compensation-${movement.state}`);
    if (movement.kind === 'block-clear' && movement.state === 'posted') {
      reached('blocked-card-emptied');
    }
    if (movement.kind === 'replacement' && movement.state === 'posted') {
      reached('replacement-picked-up');
    }
    if (movement.evidence !== null) reached('decided-on-evidence');
  }
  for (const till of tills) {
    for (const movement of till.journal?.movements.values() ?? []) {
      if (movement.adopted) reached('adopted');
    }
  }
  return { seed, problems, trace, paths };
}

/**
 * The engine as one request sees it: its movement, and whether its answer is a replay (and of
 * which earlier movement: `earlier`, the journal's latest under the request's key).
 */
function traced(
  engine: MovementEngine,
  record: RequestRecord,
  earlier: () => { id: string } | undefined,
): MovementEngine {
  return new Proxy(engine, {
    get(target, property) {
      if (property === 'commit') {
        return (...args: Parameters<MovementEngine['commit']>) => {
          record.trace.movementId = args[0].movement.id;
          return target.commit(...args);
        };
      }
      if (property === 'replay') {
        return async (...args: Parameters<MovementEngine['replay']>) => {
          const answer = await target.replay(...args);
          if (answer !== undefined) {
            record.replayed = true;
            record.trace.movementId = earlier()?.id;
          }
          return answer;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A new card: blank, personalized (slot 1 at 0, generation 0), or holding credits at any generation. */
function initialSlots(rng: Rng): [Buffer, Buffer] {
  const roll = rng.next();
  if (roll < 0.15) return [Buffer.alloc(16), Buffer.alloc(16)];
  if (roll < 0.3) return [Buffer.alloc(16), valueBlock(0, 0)];
  // Near the wrap-around (255 -> 0) often.
  const generation = rng.chance(0.4) ? rng.between(250, 255) : rng.int(256);
  const active = valueBlock(rng.between(0, 200), generation);
  const backup = rng.chance(0.3)
    ? Buffer.alloc(16)
    : valueBlock(rng.between(0, 300), (generation + 255) & 0xff);
  return rng.chance(0.5) ? [active, backup] : [backup, active];
}

/**
 * A new DESFire card, personalized by its shop (its own keys): holding 0 and no record, or
 * credits under the records of earlier till writes (machines may have debited it since).
 */
function initialDesfire(rng: Rng, uid: string, shopKeys: WalletKeys): Chip {
  const id = Buffer.from(uid, 'hex');
  const balance = rng.chance(0.2) ? 0 : rng.between(0, 200);
  const card = desfireWalletCard(id, DESFIRE_AID, balance, shopKeys.desfireKeysFor(uid).own);
  const records = card.application(DESFIRE_AID)?.files.get(RECORD_FILE);
  if (balance > 0 && records?.type === 'cyclic-record') {
    const newest = rng.between(1, 5_000);
    // The file keeps its 9 newest records.
    for (let counter = Math.max(1, newest - rng.int(9)); counter <= newest; counter += 1) {
      const record = encodeMovementRecord({
        counter,
        movementId: Buffer.from(uuidFrom(rng).replaceAll('-', ''), 'hex'),
        valueAfter: counter === newest ? balance + rng.int(20) : rng.int(200),
      });
      records.records.push(record);
    }
  }
  return { type: 'desfire', card, powered: powerOn() };
}

function describe(truth: CardTruth): string {
  return truth.kind === 'valid'
    ? `${truth.balance} at generation ${truth.generation}`
    : truth.kind === 'desfire'
      ? `${truth.balance} after record ${truth.counter}`
      : truth.kind;
}

function uuidFrom(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}
