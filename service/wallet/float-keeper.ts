import { EventEmitter } from 'node:events';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { LedgerClient, LedgerCustomer } from '../cloud/ledger-client.ts';
import type { FloatAccount } from './float-account.ts';
import type { TillFloat } from './float-entries.ts';
import type { FloatReporter } from './float-reporter.ts';
import type { MovementBook } from './movement-book.ts';
import { FloatOpening, IDS_PER_REQUEST } from './float-opening.ts';
import { floatStatus, type FloatStatus } from './float-status.ts';
import { ReconcileSchedule } from './reconcile-schedule.ts';

/** Documented defaults (docs/integrators.md, "When the internet drops"). */
export const FLOAT_TIMING = {
  /** How often an online till reports, tops up and learns its float's state. */
  syncEveryMs: 60_000,
  /** How often an offline till tries the ledger again. */
  probeEveryMs: 15_000,
  /** A till whose last ledger answer is older than this is offline. */
  offlineAfterMs: 150_000,
  /** How often, at most, the journal notes that the ledger answered (the offline limit's start). */
  notedEveryMs: 10 * 60_000,
} as const;
/** The timing of a till's float (FLOAT_TIMING's defaults; the simulation's are quicker). */
export type FloatTiming = Record<keyof typeof FLOAT_TIMING, number>;
/** Fewer movement ids than this left: a top-up asks for more (IDS_PER_REQUEST). */
export const IDS_LOW = 50;

export type FloatLedger = Pick<
  LedgerClient,
  'openFloat' | 'topUpFloat' | 'getFloat' | 'getTillFloat' | 'closeFloat' | 'getCustomer'
> & {
  readonly lastAnsweredAt: number | null;
  readonly reachability: { readonly reachable: boolean | null };
};

export interface FloatKeeperOptions {
  ledger: FloatLedger;
  timing?: Partial<FloatTiming>;
  /** The shop of a key (the service's cached customer resolution); default: asked of the ledger. */
  customer?: (apiKey: string) => Promise<LedgerCustomer>;
}

/**
 * The till float's life at the ledger (docs/integrators.md, "When the internet drops"), in the
 * background: the float opened once the shop gives its tills one, topped up below its
 * low-water mark, its recharges reported, its state learnt (an operator may have closed it),
 * closed when the shop stops floats or the till's key moves to another shop. Every call is
 * journaled before it is sent, with an id that makes it idempotent, and its answer after: a
 * crash or a lost answer is asked again, the same id. A till that finds the ledger holding an
 * open float its journal does not know (the journal was lost) sells nothing from it until an
 * operator closed it. Also what the sales need: whether the ledger is reachable, since when not,
 * and the shop as last learnt.
 */
export class FloatKeeper extends EventEmitter<{ status: [FloatStatus] }> {
  readonly #book: MovementBook;
  readonly #account: FloatAccount;
  readonly #reporter: FloatReporter;
  readonly #ledger: FloatLedger;
  readonly #timing: FloatTiming;
  readonly #schedule: ReconcileSchedule;
  readonly #opening: FloatOpening;
  readonly #customer: (apiKey: string) => Promise<LedgerCustomer>;
  #lastStatus = '';
  #probe: unknown;
  #closed = false;

  constructor(
    book: MovementBook,
    account: FloatAccount,
    reporter: FloatReporter,
    options: FloatKeeperOptions,
  ) {
    super();
    this.#book = book;
    this.#account = account;
    this.#reporter = reporter;
    this.#ledger = options.ledger;
    this.#timing = { ...FLOAT_TIMING, ...options.timing };
    this.#opening = new FloatOpening(book, options.ledger);
    this.#customer = options.customer ?? ((apiKey) => options.ledger.getCustomer(apiKey));
    this.#schedule = new ReconcileSchedule(book.clock, this.#timing.syncEveryMs, () => this.sync());
    reporter.on('reported', () => this.#publish());
  }

  start(): void {
    this.#schedule.soon();
  }

  /** Syncs soon: after a sale, or when the float runs low. */
  syncSoon(): void {
    this.#schedule.soon();
  }

  close(): Promise<void> {
    this.#closed = true;
    if (this.#probe !== undefined) this.#book.clock.clearTimer(this.#probe);
    this.#probe = undefined;
    return this.#schedule.close();
  }

  /** When the ledger last answered, as far as this till knows (across restarts). */
  get lastAnsweredAt(): number | undefined {
    const noted = this.#book.journal.floats.ledgerSeenAt;
    const times = [this.#ledger.lastAnsweredAt, noted === undefined ? null : Date.parse(noted)];
    const known = times.filter((time): time is number => time !== null);
    return known.length > 0 ? Math.max(...known) : undefined;
  }

  /**
   * Whether the till is online: its last ledger call was answered, and not longer ago than
   * FLOAT_TIMING.offlineAfterMs.
   */
  get online(): boolean {
    const last = this.#ledger.lastAnsweredAt;
    return (
      this.#ledger.reachability.reachable === true &&
      last !== null &&
      this.#book.clock.now() - last <= this.#timing.offlineAfterMs
    );
  }

  /** The shop last learnt for a key (what an offline till works from), with when. */
  shopOf(keyFingerprint: string): { customer: LedgerCustomer; at: string } | undefined {
    return this.#book.journal.floats.shops.get(keyFingerprint);
  }

  /**
   * Notes the shop a key resolved to, when it changed (the float settings, the credit cost, the
   * card rules: an offline float sale gives the bonus of the tiers learnt last).
   */
  async learnShop(apiKey: string, customer: LedgerCustomer): Promise<void> {
    const keyFingerprint = this.#book.keys.fingerprintOf(apiKey);
    const known = this.shopOf(keyFingerprint)?.customer;
    const same =
      known !== undefined &&
      known.customerId === customer.customerId &&
      known.creditCost === customer.creditCost &&
      JSON.stringify(known.float) === JSON.stringify(customer.float) &&
      JSON.stringify(known.cards) === JSON.stringify(customer.cards);
    if (!same) {
      const { customerId, name, creditCost, float, cards } = customer;
      const learnt = {
        customerId,
        name,
        credits: customer.credits,
        creditCost,
        ...(float ? { float } : {}),
        ...(cards ? { cards } : {}),
      };
      await this.#book.append({ type: 'shop', keyFingerprint, customer: learnt });
      if (known?.float?.size !== customer.float?.size) this.syncSoon();
    }
    await this.#noteSeen();
  }

  status(): FloatStatus {
    const apiKey = this.#book.keys.all()[0] as string;
    const settings = this.shopOf(this.#book.keys.fingerprintOf(apiKey))?.customer.float;
    return floatStatus({
      now: this.#book.clock.now(),
      online: this.online,
      lastAnsweredAt: this.lastAnsweredAt,
      settings,
      folds: this.#book.journal.floats,
      float: this.#account.float,
      available: (float) => this.#account.available(float),
      toReport: this.#reporter.pending,
    });
  }

  /** One pass: report, then keep the float as the shop's settings want it. */
  async sync(): Promise<void> {
    try {
      await this.#reporter.flush();
      const apiKey = this.#book.keys.all()[0] as string;
      const customer = await this.#customer(apiKey);
      await this.learnShop(apiKey, customer);
      await this.#keep(apiKey, customer.float);
    } catch (error) {
      this.#book.log.warn(`float: ${(error as Error).message}`);
    } finally {
      this.#publish();
      if (!this.online) this.#retrySoon();
    }
  }

  async #keep(apiKey: string, settings: FloatSettings | undefined): Promise<void> {
    const folds = this.#book.journal.floats;
    const keyFingerprint = this.#book.keys.fingerprintOf(apiKey);
    if (folds.lost) {
      await this.#opening.stillLost(apiKey, folds.lost.floatId);
      if (this.#book.journal.floats.lost) return;
    }
    const float = folds.float && !folds.float.closed ? folds.float : undefined;
    if (float) {
      const ended =
        float.closing || float.keyFingerprint !== keyFingerprint || (settings?.size ?? 0) === 0;
      if (ended) return this.#close(float);
      const atLedger = await this.#ledger.getFloat(apiKey, float.floatId);
      if (atLedger.state === 'closed') {
        this.#book.log.warn(`float ${float.floatId} was closed at the ledger (by an operator)`);
        await this.#book.append({ type: 'float-closed', floatId: float.floatId });
      } else {
        return this.#topUp(apiKey, float, settings as FloatSettings);
      }
    }
    if ((settings?.size ?? 0) > 0) await this.#opening.open(apiKey, keyFingerprint);
  }

  /** A top-up asked and not answered is asked again; below the low-water mark, a new one. */
  async #topUp(apiKey: string, float: TillFloat, settings: FloatSettings): Promise<void> {
    for (const [id, asked] of float.topUps) {
      if (asked.granted === undefined) await this.#sendTopUp(apiKey, float, id, asked);
    }
    const available = this.#account.available(float);
    const lowIds = this.#account.idsLeft(float) < IDS_LOW;
    if (available >= settings.lowWater && available > 0 && !lowIds) return;
    const credits = Math.max(0, settings.size - available);
    if (credits === 0 && !lowIds) return;
    const asked = { credits, ids: lowIds ? IDS_PER_REQUEST : 0 };
    const id = this.#book.newId();
    await this.#book.append({ type: 'float-topup', floatId: float.floatId, id, ...asked });
    await this.#sendTopUp(apiKey, float, id, asked);
  }

  async #sendTopUp(
    apiKey: string,
    float: TillFloat,
    id: string,
    asked: { credits: number; ids: number },
  ): Promise<void> {
    const answer = await this.#ledger.topUpFloat(apiKey, float.floatId, {
      id,
      credits: asked.credits,
      ids: asked.ids,
      tillId: this.#book.tillId,
    });
    await this.#book.append({
      type: 'float-granted',
      floatId: float.floatId,
      id,
      granted: answer.topUp.granted,
      idsIssued: answer.float.idsIssued,
    });
  }

  /** Closes the float: every recharge of it reported first, then the rest back to the pool. */
  async #close(float: TillFloat): Promise<void> {
    if (!float.closing) await this.#book.append({ type: 'float-closing', floatId: float.floatId });
    const apiKey = this.#book.keys.keyFor(float.keyFingerprint);
    if (apiKey === undefined) return;
    if (!(await this.#reporter.flush())) return;
    const open = this.#account.salesOf(float).some((movement) => this.#book.owned.has(movement.id));
    if (open) return;
    await this.#ledger.closeFloat(apiKey, float.floatId, { tillId: this.#book.tillId });
    await this.#book.append({ type: 'float-closed', floatId: float.floatId });
    this.#book.log.info(`float ${float.floatId} closed: what it held went back to the pool`);
  }

  /**
   * Notes when the ledger itself last answered: not when a shop was learnt, which an offline
   * till resolves from its cache or journal. Noted at the learning's time, every offline sync
   * would push the offline limit on, and an outage would never stop float sales.
   */
  async #noteSeen(): Promise<void> {
    const answered = this.#ledger.lastAnsweredAt;
    if (answered === null) return;
    const noted = this.#book.journal.floats.ledgerSeenAt;
    if (noted === undefined || answered - Date.parse(noted) >= this.#timing.notedEveryMs) {
      await this.#book.append({ type: 'ledger-seen', seenAt: new Date(answered).toISOString() });
    }
  }

  /** One probe waits at a time: every failed sync setting its own would multiply them. */
  #retrySoon(): void {
    if (this.#probe !== undefined || this.#closed) return;
    this.#probe = this.#book.clock.setTimer(() => {
      this.#probe = undefined;
      this.#schedule.soon();
    }, this.#timing.probeEveryMs);
  }

  #publish(): void {
    const status = this.status();
    const key = JSON.stringify(status);
    if (key === this.#lastStatus) return;
    this.#lastStatus = key;
    this.emit('status', status);
  }
}
