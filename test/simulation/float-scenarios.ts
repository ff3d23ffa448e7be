/**
 * The till float in the shop simulation (docs/testing.md, "The till float"): seeds run with
 * `--floats` give each shop a float (its size, low-water mark, offline cap, offline time limit
 * and card types drawn from the seed), every till sells from its float through the production
 * engine (TillFloats, with the service's customer resolution), and on top of world.ts's faults:
 * outages of the ledger from seconds to days while recharges go on, a till dying with
 * unreported float recharges (its disk lost, or not), cards carried between tills while their
 * float recharge is unreported, and at the end an operator closing the float of a till that
 * lost it (the admin CLI's `float close`: a final report of what the cards show, the rest written
 * off with a reason). Its draws come from a stream of their own, and seeds run without
 * `--floats` are the runs they were.
 *
 * Invariants (checked at the end; the book also after every request's answer and outage):
 * - the shop's book: cards + machine spending + pools + floats + pending recharges, less the
 *   float recharges on cards the ledger does not count yet, plus what operators wrote off (the
 *   cards still carry it) is what it was at the start;
 * - every float recharge whose write landed is counted at the ledger exactly once, and none whose
 *   write did not land;
 * - no float is drawn beyond what it was given (`overdrawn`), and no report was refused or
 *   flagged as a conflict, forged, another till's or beyond the float;
 * - no card is flagged for carrying another till's float recharge;
 * - every float recharge answered while its till was offline kept the offline cap and the
 *   offline time limit.
 */
import { canonicalJson } from '../../common/canonical-json.ts';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import { parseFloatMovementId } from '../../common/float-ids.ts';
import { CustomerDirectory } from '../../service/cloud/customer-directory.ts';
import type { LedgerClient, LedgerCustomer } from '../../service/cloud/ledger-client.ts';
import type { FloatTiming } from '../../service/wallet/float-keeper.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import { Rng, type Scheduler } from './scheduler.ts';
import { balanceOf, floatsShown, type LandedWrite, type SimCard } from './sim-cards.ts';
import type { SimNetwork } from './sim-network.ts';
import type { ShopLedger } from './shop-ledger.ts';

/** What the float scenarios see of the world and may do in it (world.ts's hooks). */
export interface FloatWorld<T extends FloatTill> {
  sched: Scheduler;
  network: SimNetwork;
  ledger: ShopLedger;
  tills: T[];
  cards: SimCard[];
  writes: LandedWrite[];
  note: (line: string) => void;
  reached: (path: string) => void;
  present: (card: SimCard, till: T) => void;
  /** The shops' ids at the ledger, by a till's `shop` index. */
  shopIds: readonly string[];
  ask: (till: T, kind: 'recharge' | 'discharge', request: { credits: number } | object) => void;
  /** The till's process dies; with `loseDisk`, its journal with it (its till id kept). */
  kill: (till: T, loseDisk: boolean) => void;
  boot: (till: T) => void;
}

export interface FloatTill {
  name: string;
  id: string;
  shop: number;
  key: string;
  engine: MovementEngine | undefined;
}

/** A float recharge answered 200 while its till was offline, and the terms it was sold on. */
interface OfflineSale {
  till: string;
  movementId: string;
  credits: number;
  cap: number | null;
  /** Virtual ms since the till's last ledger answer. */
  offlineForMs: number;
  limitMs: number;
}

export class FloatScenario {
  readonly rng: Rng;
  readonly settings: FloatSettings[];
  readonly #customers = new WeakMap<object, CustomerDirectory>();
  readonly #offlineSales: OfflineSale[] = [];
  readonly #problems: string[] = [];

  constructor(seed: number) {
    this.rng = new Rng((seed ^ 0x5f10a7ed) >>> 0);
    const rng = this.rng;
    this.settings = [0, 1].map(() => {
      const size = rng.between(20, 400);
      return {
        size,
        lowWater: rng.between(0, size),
        offlineCap: rng.chance(0.5) ? null : rng.between(1, 15),
        // Short often, so the limit expires inside an outage; never below the ledger's minute
        // (its seed refuses less: seed 7 on the real ledger). The draw stays as it was, so
        // seeds whose limit was a minute or more run as before.
        offlineLimitSeconds: rng.chance(0.5) ? Math.max(60, rng.between(20, 600)) : 86_400,
        cardTypes: rng.chance(0.8) ? ['classic', 'desfire'] : [rng.pick(['classic', 'desfire'])],
      };
    });
    // Seconds, minutes, hours or a day and more.
    this.outages = Array.from({ length: rng.between(1, 2) }, () =>
      rng.pick([
        rng.between(2_000, 20_000),
        rng.between(30_000, 10 * 60_000),
        rng.between(60 * 60_000, 6 * 60 * 60_000),
        rng.between(24 * 60 * 60_000, 30 * 60 * 60_000),
      ]),
    );
    const scale = Math.max(1, Math.floor(Math.max(...this.outages) / (15 * 60_000)));
    // The tills' reconciliation too (RECONCILE_EVERY_MS), which lists pending movements, and
    // the longest backoff of what they send (the float's reports, posts and voids).
    this.engineTiming = {
      reconcileEveryMs: Math.min(60_000 * scale, 3_600_000),
      maxRetryMs: 60_000 * scale,
    };
    this.quietMs = 60_000 * scale;
    this.timing = {
      syncEveryMs: 20_000 * scale,
      probeEveryMs: 10_000 * scale,
      offlineAfterMs: 50_000 * scale,
      notedEveryMs: 30_000 * scale,
    };
  }

  /** The ledger's outages, from seconds to days (drawn first: the tills' timing follows them). */
  readonly outages: number[];

  /**
   * How often a till syncs, probes and counts itself offline: in the defaults' proportions (a
   * till that syncs is never counted offline between two syncs), quicker than they are, and
   * slower by as many quarter hours as the seed's longest outage lasts. An offline till tries the
   * ledger every probe, with retries: at a fixed pace a day-long outage is some 100,000 refused
   * calls (half a minute of a seed), and a few hundred probes show what thousands would.
   */
  readonly timing: FloatTiming;
  readonly engineTiming: { reconcileEveryMs: number; maxRetryMs: number };
  /** Time for every till to have synced, probed and reported (the longest backoff). */
  readonly quietMs: number;

  /**
   * The engine's float options for a till, and its customer resolution as the service's
   * (customers.resolve, answering the shop last learnt while the ledger cannot be reached).
   */
  engineFloats(
    till: object,
    client: LedgerClient,
    now: () => number,
    engine: () => MovementEngine | undefined,
  ) {
    const customers = new CustomerDirectory(client, {
      now,
      learnt: (apiKey) => engine()?.floats?.learntShop(apiKey),
      onResolved: (apiKey, customer) =>
        void engine()
          ?.floats?.keeper.learnShop(apiKey, customer)
          .catch(() => undefined),
    });
    this.#customers.set(till, customers);
    return {
      ledger: client,
      timing: this.timing,
      customer: (apiKey: string) => customers.resolve(apiKey),
    };
  }

  /** The shop as a request of the till resolves it (LedgerUnavailable and the like throw). */
  customer(till: FloatTill): Promise<LedgerCustomer> {
    const customers = this.#customers.get(till);
    if (!customers) throw new Error(`${till.name} has no customer directory`);
    return customers.resolve(till.key);
  }

  /**
   * Notes what a float recharge's 200 was sold on while its till was offline (from when it was
   * asked to its answer), and how long it had been offline when asked (`offlineForMs`); the path
   * it reached (sold from the float online or offline), if any.
   */
  answered(
    till: FloatTill,
    sale: {
      movementId: string | undefined;
      credits: number;
      offlineForMs: number;
      onlineWhenAsked: boolean;
    },
  ): string | undefined {
    const { movementId, credits } = sale;
    const floats = till.engine?.floats;
    if (!floats || movementId === undefined || !parseFloatMovementId(movementId)) return;
    if (sale.onlineWhenAsked || floats.keeper.online) return 'float-sold-online';
    const settings = this.settings[till.shop] as FloatSettings;
    this.#offlineSales.push({
      till: till.name,
      movementId,
      credits,
      cap: settings.offlineCap,
      offlineForMs: sale.offlineForMs,
      limitMs: settings.offlineLimitSeconds * 1000,
    });
    return 'float-sold-offline';
  }

  /** The path a refusal reached: which of the float's bounds, or the report it waits for. */
  refused(code: string, detail: string | undefined): string | undefined {
    if (code === 'FloatRechargeUnreported') return 'float-refused-unreported';
    if (code === 'ErrorTrackingDischargeMovement' && detail?.includes('cannot be reached'))
      return 'float-payout-refused-offline';
    if (code !== 'NoCredits' || !detail?.startsWith('offline:')) return undefined;
    const bounds: [string, string][] = [
      ['offline time limit passed', 'limit'],
      ['credits per recharge while', 'cap'],
      ['the float is used up', 'used-up'],
      ["awaits an operator's close", 'awaits-close'],
      ['are not recharged from the float', 'card-type'],
    ];
    const bound = bounds.find(([text]) => detail.includes(text))?.[1];
    return bound === undefined ? undefined : `float-refused-${bound}`;
  }

  /**
   * The path a Classic card's float reference reached when a till read it (the card showed the
   * recharge): at the till that sold it, or at another, which journals it as found.
   */
  referenceRead(
    world: { ledger: ShopLedger; writes: readonly LandedWrite[]; till: string; tillId: string },
    movementId: string,
  ): string | undefined {
    const { ledger, writes, till, tillId } = world;
    // A reference counts only once the slot written after it landed (docs/card-format.md,
    // section 6a): one that names a recharge whose slot never landed would be found, and
    // counted, though the card never held it.
    if (!writes.some((write) => write.movementId === movementId && write.how === 'whole')) {
      this.#problems.push(
        `${till} read a float reference naming ${movementId}, whose slot write never landed`,
      );
    }
    const parsed = parseFloatMovementId(movementId);
    const float = [...ledger.floats.floats.values()].find((f) => f.prefix === parsed?.prefix);
    if (!float) return undefined;
    return float.tillId === tillId
      ? 'float-classic-reference-read-at-its-till'
      : 'float-classic-reference-read-elsewhere';
  }

  /**
   * The float's workload, on top of the world's: outages of seconds to days, recharges at every
   * till through them, a till dying with unreported float recharges, and cards carried from
   * till to till while their float recharge is unreported.
   */
  schedule<T extends FloatTill>(world: FloatWorld<T>, from: number): number {
    const { rng } = this;
    const { sched, network } = world;
    let at = from + rng.between(1_000, 20_000);
    for (const length of this.outages) {
      const start = at;
      sched.at(
        start - sched.time,
        () => {
          network.down = true;
          world.note(`float: the ledger goes down for ${Math.round(length / 1000)} s`);
          world.reached('float-outage');
          this.#sales(world, length);
        },
        null,
        rng,
      );
      sched.at(
        start + length - sched.time,
        () => {
          network.down = false;
          world.note('float: the ledger is back');
          this.checkBook(world, 'after an outage');
        },
        null,
        rng,
      );
      at = start + length + rng.between(1_000, 30_000);
    }
    // Time enough after the last outage for the tills to report and come back.
    return at + this.quietMs;
  }

  /** Recharges through an outage: cards carried between tills, and perhaps a till dying. */
  #sales<T extends FloatTill>(world: FloatWorld<T>, length: number): void {
    const { rng } = this;
    const { sched, tills, cards } = world;
    const count = rng.between(3, 12);
    const dies = rng.chance(0.4) ? rng.pick(tills) : undefined;
    for (let i = 0; i < count; i += 1) {
      sched.at(
        Math.floor((length * (i + 1)) / (count + 1)),
        () => {
          const card = rng.pick(cards);
          const here = tills.filter((till) => till.shop === card.home);
          const till = rng.pick(here.length > 0 ? here : tills);
          world.present(card, till);
          world.ask(till, 'recharge', { credits: rng.between(1, 20) });
          // Carried on to another till of its shop, its recharge unreported: a recharge there,
          // or a payout (refused until the report lands).
          if (rng.chance(0.4)) {
            sched.at(
              rng.between(2_000, 8_000),
              () => {
                const other = rng.pick(here.filter((candidate) => candidate !== till));
                if (!other) return;
                world.present(card, other);
                if (rng.chance(0.7)) world.ask(other, 'recharge', { credits: rng.between(1, 10) });
                else world.ask(other, 'discharge', {});
                world.reached('float-card-carried');
              },
              null,
              rng,
            );
          }
        },
        null,
        rng,
      );
    }
    if (dies) {
      sched.at(
        Math.floor(length / 2) + 1,
        () => {
          const loseDisk = rng.chance(0.6);
          world.note(`float: ${dies.name} dies${loseDisk ? ', its disk lost' : ''}`);
          world.kill(dies, loseDisk);
          world.reached(loseDisk ? 'float-till-lost-disk' : 'float-till-died');
          // Back some time after the outage (or not before the end).
          if (rng.chance(0.7))
            sched.at(length + rng.between(0, 60_000), () => world.boot(dies), null, rng);
        },
        null,
        rng,
      );
    }
  }

  /**
   * The end: an operator closes every open float whose till cannot (its journal lost it),
   * reporting what its cards show and writing off the rest; every card is read once at a till
   * of its shop, so what it carries is reported as found.
   */
  async settle<T extends FloatTill>(world: FloatWorld<T>): Promise<void> {
    const { sched, ledger, tills, cards } = world;
    for (const card of cards) {
      const till = tills.find((candidate) => candidate.shop === card.home && candidate.engine);
      if (!till) continue;
      world.present(card, till);
      world.ask(till, 'recharge', { credits: 1 });
      await sched.runUntil(sched.time + 5_000);
    }
    await sched.runUntil(sched.time + this.quietMs);
    for (const float of ledger.floats.floats.values()) {
      if (float.state !== 'open') continue;
      const till = tills.find((candidate) => candidate.id === float.tillId);
      const knows = till?.engine?.floats?.account.float?.floatId === float.id;
      if (knows) continue;
      // What the float's movements left on cards and the ledger does not count: found.
      const found = world.writes.filter(
        (write) =>
          write.how === 'whole' &&
          write.movementId !== undefined &&
          parseFloatMovementId(write.movementId)?.prefix === float.prefix &&
          !ledger.movements.has(write.movementId),
      );
      const unaccounted = found.reduce((sum, write) => sum + (delta(write) ?? 0), 0);
      const closed = ledger.floats.closeByOperator(float.shop, float.id, {
        movements: [],
        writeOff: Math.min(unaccounted, float.credits),
        reason: unaccounted > 0 ? 'the till is gone: recharges its cards may still show' : null,
      });
      // The model closes at once; the real ledger's close is awaited (an await of the model's
      // would let the tills' work run a turn, and its seeds replay as they always did).
      const closing = closed instanceof Promise ? await closed : closed;
      // Members in one order: the real ledger's view is PostgreSQL's jsonb, in its own order.
      world.note(
        `operator: closed float ${float.id} of till ${float.tillId}, ${unaccounted} written off: ${canonicalJson(closing.float)}`,
      );
      world.reached('float-closed-by-operator');
    }
    // The tills that lost their float learn it is closed and open a new one.
    await sched.runUntil(sched.time + this.quietMs);
    for (const card of cards) {
      const till = tills.find((candidate) => candidate.shop === card.home && candidate.engine);
      if (!till) continue;
      world.present(card, till);
      world.ask(till, 'recharge', { credits: 1 });
      await sched.runUntil(sched.time + 5_000);
    }
    await sched.runUntil(sched.time + this.quietMs);
    await this.#comeBack(world);
    this.checkBook(world, 'at the end');
  }

  /**
   * A float recharge sold onto a card of another shop, by a till that is gone: the card's own
   * shop's tills find it but may not count it (`other-shop`: one shop's tills never change
   * another's books), so its credits are in the closed float's write-off (seed 635123118). That
   * is checked here; then the customer brings the card back to a till of the float's shop,
   * which finds it and takes it back from the write-off (check() then wants it counted).
   */
  async #comeBack<T extends FloatTill>(world: FloatWorld<T>): Promise<void> {
    const { sched, ledger, tills, cards } = world;
    const elsewhere = new Map<string, { card: SimCard; shop: number; credits: number }>();
    const byFloat = new Map<string, number>();
    for (const write of world.writes) {
      const id = write.movementId;
      const parsed = id ? parseFloatMovementId(id) : undefined;
      if (!id || !parsed || write.how !== 'whole' || countedAs(ledger, id)) continue;
      const float = [...ledger.floats.floats.values()].find((f) => f.prefix === parsed.prefix);
      const card = cards.find((candidate) => candidate.uid === write.cardId);
      const shop = float ? world.shopIds.indexOf(float.shop) : -1;
      if (!float || !card || shop === card.home || elsewhere.has(id)) continue;
      const credits = delta(write) ?? 0;
      elsewhere.set(id, { card, shop, credits });
      byFloat.set(float.id, (byFloat.get(float.id) ?? 0) + credits);
    }
    for (const [id, credits] of byFloat) {
      const float = ledger.floats.floats.get(id);
      if (float?.state !== 'closed' || float.writtenOff < credits) {
        this.#problems.push(
          `float ${id}: ${credits} credits of its recharges are on cards only other shops saw, but it is ${float?.state} with ${float?.writtenOff} written off`,
        );
      }
    }
    for (const [id, { card, shop }] of elsewhere) {
      const till = tills.find((candidate) => candidate.shop === shop && candidate.engine);
      if (!till) continue;
      world.note(`${card.uid} comes back to ${till.name}, where ${id} was sold`);
      world.present(card, till);
      world.ask(till, 'recharge', { credits: 1 });
      world.reached('float-found-back-at-its-shop');
      await sched.runUntil(sched.time + 5_000);
    }
    if (elsewhere.size > 0) await sched.runUntil(sched.time + this.quietMs);
  }

  /** The float's part of the book: floats held, less what cards carry uncounted, plus write-offs. */
  inBook(ledger: ShopLedger, writes: readonly LandedWrite[]): number {
    let sum = 0;
    for (const float of ledger.floats.floats.values()) {
      sum += float.credits + float.writtenOff - float.overdrawn;
    }
    return sum - this.uncounted(ledger, writes);
  }

  /** Float recharges whose write landed whole that the ledger does not count yet. */
  uncounted(ledger: ShopLedger, writes: readonly LandedWrite[]): number {
    let sum = 0;
    const seen = new Set<string>();
    for (const write of writes) {
      const id = write.movementId;
      if (write.how !== 'whole' || id === undefined || seen.has(id) || !parseFloatMovementId(id))
        continue;
      seen.add(id);
      if (countedAs(ledger, id) === undefined) sum += delta(write) ?? 0;
    }
    return sum;
  }

  #book?: { atStart: number; total: () => number };
  /** The world's book (its total, this scenario's part included), to check along the way. */
  watchBook(total: () => number): void {
    this.#book = { atStart: total(), total };
  }

  /**
   * The movements still pending whose write landed on their card: world.ts's total counts a
   * pending recharge's reservation and, once its write landed, its credits on the card too, and
   * a pending payout's credits neither on the card nor yet back in the pool. At the end every
   * movement is decided, so its total needs no such term; along the way, a till that died with
   * one pending (or an outage) leaves it so for hours. So is one an operator voided without
   * its card (a card reported lost) until the card is seen and a compensation sets it right,
   * and until that compensation is posted (pending, it is counted as a reservation already).
   * One an operator posted without its card is counted right as it is (what the card gained
   * left the pool, or what it lost came back), however long it awaits its card.
   * Float movements are uncounted()'s.
   */
  landedWhilePending(ledger: ShopLedger, writes: readonly LandedWrite[]): number {
    const compensating = new Set<string>();
    for (const movement of ledger.movements.values()) {
      if (movement.compensates !== null && movement.state === 'pending') {
        compensating.add(movement.compensates);
      }
    }
    let sum = 0;
    for (const write of writes) {
      const id = write.movementId;
      if (write.how !== 'whole' || id === undefined) continue;
      const movement = ledger.movements.get(id);
      if (!movement || movement.floatId !== null) continue;
      const held =
        movement.state === 'pending' ||
        (movement.awaitsCard && movement.state === 'voided') ||
        compensating.has(id);
      if (!held) continue;
      sum -= delta(write) ?? 0;
    }
    return sum;
  }

  /** What the book was off by when last checked (each new difference is reported once). */
  #off = 0;

  /** The book: after every request's answer, every outage, and at the end. */
  checkBook(
    world: { ledger: ShopLedger; writes: readonly LandedWrite[]; sched: Scheduler },
    when: string,
  ): void {
    if (!this.#book) return;
    const now = this.#book.total() + this.landedWhilePending(world.ledger, world.writes);
    const off = now - this.#book.atStart;
    if (off === this.#off) return;
    this.#off = off;
    if (off !== 0) {
      this.#problems.push(
        `float: the shops' book does not add up ${when} (at ${world.sched.time}): ${this.#book.atStart} at the start, ${now} now`,
      );
    }
  }

  /**
   * Float recharges that landed and that nobody can report any more, held by their float's
   * write-off (docs/cloud-api.md, "What is still unreported holds the card": a closed float's
   * unreported ids are written off). Each: a recharge the ledger never heard of, of a float an
   * operator closed (its till lost its journal), on a card that no longer shows it because a
   * later write landed over its evidence (a Classic card shows only its newest float recharge;
   * a DESFire card keeps its nine newest records), within what the float's write-off still
   * holds. Seed 23: T1a sold 2 credits onto a Classic card, sold 8 more over them (the
   * reference now named those), and lost its disk; the card's last reference was found, the 2
   * credits were written off at the close. Every other landed recharge the ledger does not
   * count is still a problem (check()); a float whose write-off is short of these is one too.
   */
  writtenOffUnseen(world: {
    ledger: ShopLedger;
    writes: readonly LandedWrite[];
    cards: readonly SimCard[];
  }): { movements: Map<string, { cardId: string; credits: number }>; problems: string[] } {
    const { ledger, writes, cards } = world;
    const byFloat = new Map<string, Map<string, { cardId: string; credits: number }>>();
    for (const write of writes) {
      const id = write.movementId;
      const parsed = id === undefined ? undefined : parseFloatMovementId(id);
      if (!id || !parsed || write.how !== 'whole' || ledger.movements.has(id)) continue;
      const float = [...ledger.floats.floats.values()].find((f) => f.prefix === parsed.prefix);
      const card = cards.find((candidate) => candidate.uid === write.cardId);
      if (float?.state !== 'closed' || float.closedBy !== 'operator' || !card) continue;
      // Another movement's write landed on the card after it, and the card no longer shows it.
      const coveredLater = writes.some(
        (later) =>
          later.cardId === write.cardId &&
          later.how === 'whole' &&
          later.movementId !== id &&
          later.at > write.at,
      );
      if (!coveredLater || floatsShown(card).includes(id)) continue;
      const held = byFloat.get(float.id) ?? new Map<string, { cardId: string; credits: number }>();
      // Its first write, as uncounted() counts it (a write sent again lands nothing new).
      if (held.has(id)) continue;
      held.set(id, { cardId: write.cardId, credits: delta(write) ?? 0 });
      byFloat.set(float.id, held);
    }
    const movements = new Map<string, { cardId: string; credits: number }>();
    const problems: string[] = [];
    for (const [floatId, held] of byFloat) {
      const float = ledger.floats.floats.get(floatId);
      const sum = [...held.values()].reduce((total, { credits }) => total + credits, 0);
      if (!float || sum > float.writtenOff) {
        problems.push(
          `float ${floatId}: ${sum} credits of its recharges landed on cards that no longer show them, but only ${float?.writtenOff} are written off`,
        );
        continue;
      }
      for (const [id, entry] of held) movements.set(id, entry);
    }
    return { movements, problems };
  }

  /** The float's invariants (above), at the end. */
  check(world: {
    ledger: ShopLedger;
    writes: readonly LandedWrite[];
    start: number;
    cards: readonly SimCard[];
    shopIds: readonly string[];
    /** writtenOffUnseen()'s: not counted by their movement, but by their float's write-off. */
    writtenOff: ReturnType<FloatScenario['writtenOffUnseen']>;
  }): string[] {
    const { ledger, writes, writtenOff } = world;
    const problems = [...this.#problems, ...writtenOff.problems];
    const landed = new Map<string, LandedWrite>();
    for (const write of writes) {
      const id = write.movementId;
      if (id === undefined || !parseFloatMovementId(id)) continue;
      if (write.how === 'whole') landed.set(id, write);
    }
    for (const [id, write] of landed) {
      const stored = ledger.movements.get(id);
      const counted = countedAs(ledger, id);
      if (writtenOff.movements.has(id)) continue;
      if (counted === undefined) {
        problems.push(
          `float recharge ${id} landed on ${write.cardId} but the ledger ${stored ? `has it ${stored.state}` : 'does not know it'}`,
        );
      } else if (counted.credits !== delta(write)) {
        problems.push(
          `float recharge ${id} put ${delta(write)} on ${write.cardId}, the ledger counts ${counted.credits}`,
        );
      }
    }
    for (const movement of ledger.movements.values()) {
      if (movement.floatId === null || movement.state !== 'posted') continue;
      if (!landed.has(movement.id)) {
        problems.push(
          `float recharge ${movement.id} counted at the ledger, its write never landed`,
        );
      }
      const flags = movement.reportFlags ?? [];
      const wrong = flags.filter((flag) =>
        ['forged-id', 'conflict', 'other-till', 'other-shop', 'beyond-float'].includes(flag),
      );
      if (wrong.length > 0)
        problems.push(`float recharge ${movement.id} flagged ${wrong.join(', ')}`);
    }
    for (const float of ledger.floats.floats.values()) {
      if (float.overdrawn > 0) {
        problems.push(
          `float ${float.id} of till ${float.tillId} drawn ${float.overdrawn} beyond what it was given`,
        );
      }
    }
    for (const flag of ledger.flags) {
      // Only a card its own shop's tills alone wrote (as invariants.ts): another shop's credits
      // on a card are above this shop's account of it, and rightly flagged.
      const card = world.cards.find((candidate) => candidate.uid === flag.cardId);
      const own =
        card !== undefined &&
        world.shopIds[card.home] === flag.shopId &&
        [...card.writtenAt].every((shop) => shop === card.home);
      if (!own) continue;
      if (flag.kind === 'forged-float-movement' || flag.kind === 'card-above-account') {
        // A float recharge of the flagging shop on the card when it flagged it.
        const flaggedBy = ledger.movements.get(flag.movementId);
        // A recharge that flagged the card but was never counted, as invariants.ts: its create
        // may have reached the ledger late, after a payout moved the account on, with the card's
        // credits as read before (seed 150: the card read holding 217, its account 3 once a
        // payout of the 217 had landed first; seed 225 the same with 98 and 0): then voided.
        if (flag.kind === 'card-above-account' && flaggedBy?.state !== 'posted') continue;
        const flaggedAt = flaggedBy ? Date.parse(flaggedBy.createdAt) - world.start : Infinity;
        const floatOnCard = writes.some((write) => {
          const parsed = write.movementId ? parseFloatMovementId(write.movementId) : undefined;
          if (write.cardId !== flag.cardId || !parsed || write.at > flaggedAt) return false;
          const float = [...ledger.floats.floats.values()].find(
            (candidate) => candidate.prefix === parsed.prefix,
          );
          return float?.shop === flag.shopId;
        });
        if (floatOnCard)
          problems.push(
            `card ${flag.cardId} flagged ${flag.kind} (${flag.movementId}) carrying a float recharge`,
          );
      }
    }
    for (const sale of this.#offlineSales) {
      if (sale.cap !== null && sale.credits > sale.cap) {
        problems.push(
          `${sale.till} sold ${sale.credits} offline (${sale.movementId}), beyond the cap of ${sale.cap}`,
        );
      }
      if (sale.offlineForMs >= sale.limitMs) {
        problems.push(
          `${sale.till} sold ${sale.movementId} offline ${sale.offlineForMs} ms after its last ledger answer, past the limit of ${sale.limitMs} ms`,
        );
      }
    }
    // The book counts what the write-off holds as on cards and uncounted (inBook): so it is.
    let heldByWriteOff = 0;
    for (const { credits } of writtenOff.movements.values()) heldByWriteOff += credits;
    const uncounted = this.uncounted(ledger, writes) - heldByWriteOff;
    if (uncounted !== 0) {
      problems.push(`float recharges on cards still not counted at the end: ${uncounted} credits`);
    }
    return problems;
  }
}

/** What a landed write added to its card. */
function delta(write: LandedWrite): number | undefined {
  const before = balanceOf(write.before);
  const after = balanceOf(write.after);
  return after - before;
}

/**
 * What counts a float recharge at the ledger: the movement posted, or, voided (by an operator
 * without its card, say), the posted compensation a till made when the card showed it.
 */
function countedAs(ledger: ShopLedger, id: string): { credits: number } | undefined {
  const movement = ledger.movements.get(id);
  if (movement?.state === 'posted') return movement;
  if (movement?.state !== 'voided') return undefined;
  return [...ledger.movements.values()].find(
    (other) => other.compensates === id && other.state === 'posted',
  );
}
