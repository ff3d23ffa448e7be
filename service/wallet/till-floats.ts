import { EventEmitter } from 'node:events';
import { ledgerErrorCodes, type TillFloatReport } from '../../common/ledger-contract.ts';
import { amountForCredits, formatDecimal, parseDecimal } from '../../common/decimal.ts';
import { parseFloatMovementId } from '../../common/float-ids.ts';
import type { CardWallet } from '../card/card-face.ts';
import { LedgerRefusal, type LedgerClient, type LedgerCustomer } from '../cloud/ledger-client.ts';
import { errors, type AppError } from '../errors.ts';
import {
  hasBonusTiers,
  quoteAmount,
  quoteByLearntTiers,
  type AmountQuote,
} from './amount-quote.ts';
import { FloatAccount } from './float-account.ts';
import type { TillFloat } from './float-entries.ts';
import { FloatKeeper, IDS_LOW, type FloatKeeperOptions } from './float-keeper.ts';
import { FloatReporter, type FloatReporterOptions } from './float-reporter.ts';
import type { FloatStatus } from './float-status.ts';
import type { MovementBook } from './movement-book.ts';
import type { RechargeRequest } from './recharge-request.ts';

export type TillFloatsLedger = FloatKeeperOptions['ledger'] &
  Pick<LedgerClient, 'reportFloatMovements'> &
  Partial<Pick<LedgerClient, 'getBonusQuote'>>;

/** A recharge the float pays: its movement id and what it is sold at. */
export interface FloatPlan {
  float: TillFloat;
  id: string;
  seq: number;
  credits: number;
  /** Euros: the credits paid for x the credit cost it is sold at, exactly. */
  amount: string;
  creditCost: string;
  /** Of `credits`, the bonus the shop's tiers give a recharge by amount (0: none). */
  bonusCredits: number;
}

/**
 * The till float as the use cases see it (docs/integrators.md, "When the internet drops"):
 * whether a recharge is paid from it and on what terms, what a card shows of other floats'
 * recharges (reported as found), reporting a card's recharges before the ledger decides
 * anything on it, and the float's state for the tray and the POS. Its parts: FloatAccount (the
 * till's count), FloatReporter (reports), FloatKeeper (open, top up, close, learn).
 */
export class TillFloats extends EventEmitter<{ status: [FloatStatus] }> {
  readonly account: FloatAccount;
  readonly reporter: FloatReporter;
  readonly keeper: FloatKeeper;
  readonly #book: MovementBook;
  readonly #ledger: TillFloatsLedger;

  constructor(
    book: MovementBook,
    options: Omit<FloatKeeperOptions, 'ledger'> & {
      ledger: TillFloatsLedger;
      retryMs: number;
      maxRetryMs: number;
      compensate?: FloatReporterOptions['compensate'];
      settleFound?: FloatReporterOptions['settleFound'];
    },
  ) {
    super();
    this.#book = book;
    this.#ledger = options.ledger;
    this.account = new FloatAccount(book);
    this.reporter = new FloatReporter(book, this.account, options);
    this.keeper = new FloatKeeper(book, this.account, this.reporter, options);
    this.keeper.on('status', (status) => this.emit('status', status));
  }

  start(): void {
    this.reporter.kick(0);
    this.keeper.start();
  }

  async close(): Promise<void> {
    await this.keeper.close();
    await this.reporter.close();
  }

  status(): FloatStatus {
    return this.keeper.status();
  }

  /**
   * The float as the till's heartbeat tells the back office (null: this till holds none): what
   * is left by the till's own count, and what it sold that the ledger does not count yet (its
   * own sales only, counted as their credits are: not what it found on other tills' cards).
   */
  heartbeatReport(): TillFloatReport | null {
    const status = this.keeper.status();
    if (status.floatId === null) return null;
    const sales = this.account.unreportedSales();
    return {
      credits: status.left,
      unreportedMovements: sales.movements,
      unreportedCredits: sales.credits,
      offlineSince: status.offlineSince,
    };
  }

  /**
   * The shop last learnt for a key, when the shop gives its tills a float: customer resolution
   * answers it when the ledger cannot be reached, so a recharge is decided by plan() (sold
   * within the float's bounds, or NoCredits saying which bound: past the offline limit too)
   * rather than failing as LedgerUnavailable. A key revoked meanwhile keeps selling until the
   * ledger answers again (docs/integrators.md).
   */
  learntShop(apiKey: string): LedgerCustomer | undefined {
    const shop = this.keeper.shopOf(this.#book.keys.fingerprintOf(apiKey));
    const settings = shop?.customer.float;
    if (!shop || !settings || settings.size === 0) return undefined;
    return shop.customer;
  }

  /**
   * The ledger's word on what a recharge by amount buys, for a float sale while the ledger
   * answers and the shop gives bonuses: the tiers live at the ledger, so an online till never
   * sells a bonus by its own guess (docs/integrators.md, "Bonus tiers"). Undefined when not
   * needed (a recharge by credits, no tiers, offline, no float here): plan() then sells by
   * what the till learnt last. A ledger that stops answering meanwhile: the learnt quote.
   */
  async ledgerQuote(input: {
    keyFingerprint: string;
    customer: LedgerCustomer;
    request: RechargeRequest;
  }): Promise<AmountQuote | undefined> {
    const { request, customer } = input;
    if (request.amount === undefined || !hasBonusTiers(customer)) return undefined;
    const apiKey = this.#book.keys.keyFor(input.keyFingerprint);
    const getBonusQuote = this.#ledger.getBonusQuote?.bind(this.#ledger);
    if (!this.keeper.online || !this.account.float || apiKey === undefined || !getBonusQuote) {
      return undefined;
    }
    return quoteAmount({ getBonusQuote }, apiKey, customer, request.amount);
  }

  /**
   * How a recharge is paid: from the float (a plan), by the ledger (undefined: online, and the
   * float does not apply or cannot cover it), or not at all (a refusal: offline, and the float
   * cannot: 500 NoCredits with a detail saying why; nothing moves).
   */
  plan(input: {
    keyFingerprint: string;
    customer: LedgerCustomer;
    wallet: CardWallet;
    request: RechargeRequest;
    /** The ledger's quote of a recharge by amount (ledgerQuote); else the tiers learnt last. */
    quote?: AmountQuote;
  }): FloatPlan | { refusal: AppError } | undefined {
    const { customer, wallet, request } = input;
    const settings = customer.float;
    const online = this.keeper.online;
    const refuse = (why: string) =>
      online ? undefined : { refusal: errors.noCredits(`offline: ${why}`) };
    if (!settings || settings.size === 0) return refuse('this shop gives its tills no float');
    const float = this.account.float;
    if (!float || float.keyFingerprint !== input.keyFingerprint) {
      return refuse(
        this.#book.journal.floats.lost
          ? "this till's float awaits an operator's close: no float sales until then"
          : 'this till holds no float',
      );
    }
    const cardType = wallet.before.startsWith('desfire:') ? 'desfire' : 'classic';
    if (!settings.cardTypes.includes(cardType)) {
      return refuse(`${cardType} cards are not recharged from the float`);
    }
    if (wallet.carriesFloat !== true) {
      return refuse(
        'this card cannot carry a float recharge (a DESFire card personalized before v2 records)',
      );
    }
    // By amount: the credits paid for and the bonus (out of the float like any credit).
    const terms =
      request.amount === undefined
        ? undefined
        : (input.quote ?? quoteByLearntTiers(customer, request.amount));
    const creditCost = terms?.creditCost ?? customer.creditCost;
    const credits = terms?.credits ?? request.credits ?? 0;
    const available = this.account.available(float);
    if (!online) {
      const since = this.keeper.lastAnsweredAt;
      const limitMs = settings.offlineLimitSeconds * 1000;
      if (since === undefined || this.#book.clock.now() - since >= limitMs) {
        const at = since === undefined ? '' : ` at ${new Date(since + limitMs).toISOString()}`;
        return {
          refusal: errors.noCredits(
            `offline: the offline time limit passed${at}; sales from the float resume when the ledger answers`,
          ),
        };
      }
      if (settings.offlineCap !== null && credits > settings.offlineCap) {
        return {
          refusal: errors.noCredits(
            `offline: at most ${settings.offlineCap} credits per recharge while the ledger cannot be reached`,
          ),
        };
      }
    }
    if (credits > available) {
      return refuse(`the float is used up: ${available} credits left`);
    }
    const next = this.account.nextId(float);
    if (!next) return refuse('the float has no movement ids left');
    return {
      float,
      id: next.id,
      seq: next.seq,
      credits,
      amount:
        terms?.rechargeAmount ??
        formatDecimal(amountForCredits(credits, parseDecimal(creditCost) ?? 0n)),
      creditCost,
      bonusCredits: terms?.bonusCredits ?? 0,
    };
  }

  /**
   * What a card shows of float recharges that are not this till's own: journaled as found, so
   * they are reported (once each), whatever this till writes to the card next.
   */
  async noteEvidence(wallet: CardWallet): Promise<void> {
    for (const evidence of wallet.floatEvidence ?? []) {
      if (this.#book.movements.has(evidence.movementId)) continue;
      if (this.#book.journal.floats.found.has(evidence.movementId)) continue;
      if (!parseFloatMovementId(evidence.movementId)) continue;
      await this.#book.append({
        type: 'found',
        movementId: evidence.movementId,
        cardId: wallet.cardId,
        credits: evidence.credits,
      });
    }
    if ((wallet.floatEvidence ?? []).length > 0) this.reporter.kick(0);
  }

  /**
   * Before the ledger decides anything on a card (a payout, a reservation): every float
   * recharge this till made, and what it found on cards, is reported first, so the card's
   * account at the ledger counts them. LedgerUnavailable when the ledger did not take them.
   */
  async reportBeforeLedger(): Promise<void> {
    if (!(await this.reporter.flush())) {
      throw errors.ledgerUnavailable(
        undefined,
        'the float recharges on this card could not be reported to the ledger first',
      );
    }
  }

  /**
   * A float recharge sold: reported in the background, and the float topped up if low in
   * credits or in movement ids (quick small sales use ids up long before credits; waiting for
   * the minute's sync could leave an outage starting now with none).
   */
  sold(customer: LedgerCustomer): void {
    this.reporter.kick(0);
    const float = this.account.float;
    const lowWater = customer.float?.lowWater ?? 0;
    const low =
      !float || this.account.available(float) < lowWater || this.account.idsLeft(float) < IDS_LOW;
    if (low) this.keeper.syncSoon();
  }
}

/**
 * The ledger held the card back: it may carry float recharges not all reported
 * (FloatReportPending): 500 FloatRechargeUnreported, its detail naming the till.
 */
export function floatReportRefusal(error: unknown): AppError | undefined {
  if (error instanceof LedgerRefusal && error.code === ledgerErrorCodes.floatReportPending.code) {
    return errors.floatRechargeUnreported(error.detail);
  }
  return undefined;
}
