/**
 * Contract v1 of the cloud ledger (docs/cloud-api.md) as an in-memory state machine, for the
 * deterministic simulation. Only what the worker calls: customer, create, post, void, the
 * pending list, the card accounts that bound every discharge, and till heartbeats (the
 * names the back office gives tills come back in their answer; sim-network.ts puts the HTTP
 * routes in front). sim-ledger-contract.test.ts runs the same call sequences against this and
 * the real ledger and compares every answer, so the two cannot drift apart.
 */
import {
  creditsForAmount,
  formatDecimal,
  parseDecimal,
  parseStoredDecimal,
} from '../../common/decimal.ts';
import {
  ledgerErrorCodes,
  type Customer,
  type Movement,
  type MovementKind,
  type MovementRequest,
  type ResolveRequest,
  type CardAccount,
  type CardFlagKind,
  type CardRules,
  type TillHeartbeat,
  type TillState,
  type FloatSettings,
  isRechargeOrPayout,
} from '../../common/ledger-contract.ts';
import { parseFloatMovementId } from '../../common/float-ids.ts';
import { NO_FLOAT, SimFloats } from './sim-floats.ts';
import { DEFAULT_CARD_RULES, payoutSplit, SimCardRules } from './sim-card-rules.ts';

/** A stored movement (or any ledger state) as JSON for a failing test's message: euros in
 * ten-thousandths are bigints, which JSON.stringify refuses. */
export function printable(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    typeof field === 'bigint' ? `${field}` : field,
  );
}

/** A refusal as the ledger answers it: HTTP status and `{ error: code }`. */
export class SimLedgerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** What is in the way, in the real ledger's words (its answer's `detail`). */
    readonly detail?: string,
  ) {
    super(`${status} ${code}${detail === undefined ? '' : `: ${detail}`}`);
  }
}

const refuse = (name: keyof typeof ledgerErrorCodes, detail?: string): SimLedgerError =>
  new SimLedgerError(ledgerErrorCodes[name].status, ledgerErrorCodes[name].code, detail);

/** CardStateMovedOn: `latest`, posted, was planned from the card state a create names. */
const movedOn = (cardId: string, latest: StoredMovement): SimLedgerError =>
  refuse(
    'cardStateMovedOn',
    `card ${cardId}: movement ${latest.id}, posted, was planned from the same card state`,
  );

export interface SimShop {
  id: string;
  name: string;
  credits: number;
  creditCost: string;
  /** The shop's float settings (none: no float). */
  float?: FloatSettings;
  /** Credits the shop bought (its pool at the start and top-ups): the book's source. */
  provided?: number;
  /** The shop's card rules (none: the defaults, no bonus tiers). */
  cards?: CardRules;
  /** The card list's sequence number and when it last changed. */
  cardListSeq?: number;
  cardListChangedAt?: string;
}

export interface StoredMovement {
  id: string;
  shop: string;
  kind: MovementKind;
  cardId: string;
  credits: number;
  requestedAmount: bigint | null;
  creditCost: string;
  state: Movement['state'];
  createdAt: string;
  resolvedAt: string | null;
  /** How many times its state changed after creation: the invariant says at most once. */
  transitions: number;
  tillId: string | null;
  cardBefore: string | null;
  compensates: string | null;
  resolvedByTill: string | null;
  evidence: string | null;
  /** An operator's word given without the card: the card is held until a till reads it. */
  awaitsCard: boolean;
  cardEvidence: string | null;
  /** A posted movement's time by its till's clock (the post's occurredAt, else the ledger's). */
  occurredAt: string | null;
  /** A float recharge's float and sequence number (null: a movement of the pool). */
  floatId: string | null;
  floatSeq: number | null;
  reportedAs: 'till' | 'found' | 'operator' | null;
  reportFlags: string[];
  /** The POS's reference of the sale, or null. */
  reference: string | null;
  /** Of credits, the bonus (given, forfeited, taken back or carried). */
  bonusCredits: number;
  /** Euros in ten-thousandths: charged or paid out, and put into or taken from the account. */
  amount: bigint;
  paidAmount: bigint;
  refunds: string | null;
  applies: string | null;
  tillTime: string | null;
  /** A compensation that takes back what its refund, correction, pickup or block-clear did. */
  undoes?: boolean;
}

export class SimLedger {
  readonly shops = new Map<string, SimShop>();
  readonly #keys = new Map<string, string>();
  readonly movements = new Map<string, StoredMovement>();
  readonly #tombstones = new Map<string, string>();
  /** Per shop and card: what a discharge may still take (see cloud/card-accounts.ts). */
  readonly #cardAccounts = new Map<string, number>();
  /** Per shop and card: the bonus credits of its account, and the euros paid for the rest. */
  readonly #cardBonus = new Map<string, number>();
  readonly #cardPaid = new Map<string, bigint>();
  /** Per shop and card: the balance imported for it. */
  readonly #imported = new Map<string, number>();
  /** Ids of the recharges that flagged their card card-above-account, with the card. */
  readonly flagged = new Map<string, string>();
  /** Every flag raised, in order (card-above-account ones are also in `flagged`). */
  readonly flags: { kind: CardFlagKind; movementId: string; cardId: string; shopId: string }[] = [];
  /** Per shop and till: what its last heartbeat said, and the name the back office gave it. */
  readonly tills = new Map<string, TillState>();
  readonly #now: () => number;
  /** Whether a void of an unknown id leaves a tombstone (contract v1 says it does). */
  readonly tombstones: boolean;

  /** The till floats (sim-floats.ts). */
  readonly floats: SimFloats;
  /** Revoked keys and their shops: a revoked key still reports float movements. */
  readonly #revoked = new Map<string, string>();
  /** Blocks, replacements and corrections (sim-card-rules.ts). */
  readonly cardRules: SimCardRules;

  /** The card changes, as ShopLedger reads them. */
  get cardChanges(): SimCardRules['changes'] {
    return this.cardRules.changes;
  }

  constructor(now: () => number, { tombstones = true }: { tombstones?: boolean } = {}) {
    this.#now = now;
    this.tombstones = tombstones;
    this.floats = new SimFloats(this, now);
    this.cardRules = new SimCardRules(this, now);
  }

  addShop(shop: SimShop, keys: string[]): void {
    // The seed's bound (cloud/seed.ts, docs/cloud-api.md "Settings"): 1 minute to 30 days.
    const limit = shop.float?.offlineLimitSeconds;
    if (limit !== undefined && (limit < 60 || limit > 2_592_000)) {
      throw new Error(`InvalidSeed: float.offlineLimitSeconds ${limit} is not 60 to 2592000`);
    }
    this.shops.set(shop.id, { provided: shop.credits, ...shop });
    for (const key of keys) this.#keys.set(key, shop.id);
  }

  /** Revokes an API key, as the provider does once a till no longer needs it. */
  revokeKey(apiKey: string): void {
    const shop = this.#keys.get(apiKey);
    if (shop !== undefined) this.#revoked.set(apiKey, shop);
    this.#keys.delete(apiKey);
  }

  /** The shop of a key that may still report float movements (revoked or not). */
  authenticateReport(apiKey: string): { shop: SimShop; revoked: boolean } {
    const revokedShop = this.#revoked.get(apiKey);
    if (revokedShop !== undefined)
      return { shop: this.shops.get(revokedShop) as SimShop, revoked: true };
    return { shop: this.authenticate(apiKey), revoked: false };
  }

  /** Stores a movement made elsewhere (a float report). */
  store(movement: StoredMovement): StoredMovement {
    this.movements.set(movement.id, movement);
    return movement;
  }

  /** Flags a card (once per movement, as ledger_flag_card). */
  flagCard(shopId: string, cardId: string, kind: CardFlagKind, movementId: string): void {
    if (this.flags.some((flag) => flag.shopId === shopId && flag.movementId === movementId)) return;
    this.flags.push({ kind, movementId, cardId, shopId });
  }

  /** The whole state, to put back (a call that must leave nothing when it fails). */
  snapshot(): unknown {
    return structuredClone({
      shops: this.shops,
      movements: this.movements,
      cardAccounts: this.#cardAccounts,
      cardBonus: this.#cardBonus,
      cardPaid: this.#cardPaid,
      flags: this.flags,
      flagged: this.flagged,
      floats: this.floats.floats,
      tills: this.floats.tills,
    });
  }

  restore(snapshot: unknown): void {
    const state = structuredClone(snapshot) as {
      shops: Map<string, SimShop>;
      movements: Map<string, StoredMovement>;
      cardAccounts: Map<string, number>;
      cardBonus: Map<string, number>;
      cardPaid: Map<string, bigint>;
      flags: SimLedger['flags'];
      flagged: Map<string, string>;
      floats: SimFloats['floats'];
      tills: SimFloats['tills'];
    };
    const refill = <K, V>(target: Map<K, V>, source: Map<K, V>) => {
      target.clear();
      for (const [key, value] of source) target.set(key, value);
    };
    refill(this.shops, state.shops);
    refill(this.movements, state.movements);
    refill(this.#cardAccounts, state.cardAccounts);
    refill(this.#cardBonus, state.cardBonus);
    refill(this.#cardPaid, state.cardPaid);
    refill(this.flagged, state.flagged);
    refill(this.floats.floats, state.floats);
    refill(this.floats.tills, state.tills);
    this.flags.splice(0, this.flags.length, ...state.flags);
  }

  /** Gives a card an account at a shop, as `card-wallet-cloud card import` does. */
  importCard(shopId: string, cardId: string, credits: number): void {
    this.#imported.set(`${shopId} ${cardId}`, credits);
    const shop = this.shops.get(shopId) as SimShop;
    this.changeCardAccount(
      shopId,
      cardId,
      credits,
      0,
      BigInt(credits) * parseStoredDecimal(shop.creditCost),
    );
  }

  /**
   * `GET /v1/cards/{cardId}`: the card's account at the key's shop and its movements there,
   * newest first. Flags are counted (`suspect`) but not described: the worker reads only
   * `movements` (POST /cards/settle).
   */
  cardAccountOf(apiKey: string, cardId: string): CardAccount {
    const shop = this.authenticate(apiKey);
    const suspect = this.flags.some((flag) => flag.cardId === cardId && flag.shopId === shop.id);
    const parts = this.cardAccountParts(shop.id, cardId);
    return {
      cardId,
      credits: parts.credits,
      bonusCredits: parts.bonus,
      paidAmount: formatDecimal(parts.paid),
      blocked: this.cardRules.blocks.get(`${shop.id} ${cardId}`) ?? null,
      changes: this.cardRules.changesOf(shop.id, cardId),
      // The shop simulation never labels a card (holder labels are the back office's).
      holderLabel: null,
      importedCredits: this.#imported.get(`${shop.id} ${cardId}`) ?? null,
      suspect,
      flags: [],
      movements: [...this.movements.values()]
        .filter((movement) => movement.shop === shop.id && movement.cardId === cardId)
        .reverse()
        .slice(0, 100)
        .map((movement) => this.#view(movement)),
    };
  }

  /** What a discharge of this card at this shop may still take. */
  cardAccount(shopId: string, cardId: string): number {
    return this.#cardAccounts.get(`${shopId} ${cardId}`) ?? 0;
  }

  /** A card's account with its bonus credits and the euros paid (ten-thousandths). */
  cardAccountParts(
    shopId: string,
    cardId: string,
  ): { credits: number; bonus: number; paid: bigint } {
    const key = `${shopId} ${cardId}`;
    return {
      credits: this.cardAccount(shopId, cardId),
      bonus: this.#cardBonus.get(key) ?? 0,
      paid: this.#cardPaid.get(key) ?? 0n,
    };
  }

  /** The bonus credits a shop's card accounts hold, all cards together. */
  bonusHeld(shopId: string): number {
    let held = 0;
    for (const [key, bonus] of this.#cardBonus) if (key.startsWith(`${shopId} `)) held += bonus;
    return held;
  }

  changeCardAccount(shopId: string, cardId: string, delta: number, bonus = 0, paid = 0n): void {
    const key = `${shopId} ${cardId}`;
    this.#cardAccounts.set(key, this.cardAccount(shopId, cardId) + delta);
    this.#cardBonus.set(key, (this.#cardBonus.get(key) ?? 0) + bonus);
    this.#cardPaid.set(key, (this.#cardPaid.get(key) ?? 0n) + paid);
  }

  authenticate(apiKey: string): SimShop {
    const id = this.#keys.get(apiKey);
    const shop = id === undefined ? undefined : this.shops.get(id);
    if (!shop) throw refuse('invalidApiKey');
    return shop;
  }

  customer(apiKey: string): Customer {
    const shop = this.authenticate(apiKey);
    return {
      customerId: shop.id,
      name: shop.name,
      credits: shop.credits,
      creditCost: canonical(shop.creditCost),
      floatCredits: this.floats.floatCredits(shop.id),
      float: shop.float ?? NO_FLOAT,
      cards: shop.cards ?? DEFAULT_CARD_RULES,
    };
  }

  create(apiKey: string, request: MovementRequest): { movement: Movement; replayed: boolean } {
    const shop = this.authenticate(apiKey);
    const id = request.id.toLowerCase();
    const tillId = request.tillId?.toLowerCase() ?? null;
    const compensates = request.compensates?.toLowerCase() ?? null;
    const requestedAmount =
      request.amount === undefined ? null : (parseDecimal(request.amount) ?? null);
    if (parseFloatMovementId(id) !== undefined) throw new SimLedgerError(400, 'InvalidMovement');
    const byRules = !isRechargeOrPayout(request.kind);
    const existing = this.movements.get(id);
    if (existing) {
      const same =
        existing.shop === shop.id &&
        existing.kind === request.kind &&
        existing.cardId === request.cardId &&
        existing.tillId === tillId &&
        (byRules && compensates !== null
          ? existing.compensates === compensates
          : byRules
            ? existing.applies === (request.applies?.toLowerCase() ?? null) &&
              (request.kind !== 'refund' ||
                existing.refunds === (request.refunds?.toLowerCase() ?? null))
            : existing.compensates === compensates &&
              (requestedAmount === null
                ? existing.requestedAmount === null && existing.credits === request.credits
                : existing.requestedAmount === requestedAmount));
      if (!same) throw refuse('movementIdConflict');
      return { movement: this.#view(existing), replayed: true };
    }
    const tombstone = this.#tombstones.get(id);
    if (tombstone !== undefined) {
      throw tombstone === shop.id ? refuse('movementAlreadyVoided') : refuse('movementIdConflict');
    }
    if (byRules && compensates !== null) {
      return this.#compensateByRules(shop, id, tillId, request, compensates);
    }
    if (byRules) return this.#createByRules(shop, id, tillId, request);
    const cost = parseStoredDecimal(shop.creditCost);
    let credits =
      requestedAmount === null
        ? (request.credits ?? 0)
        : Number(creditsForAmount(requestedAmount, cost));
    if (credits < 1) throw refuse('amountBelowOneCredit');
    let amount = BigInt(credits) * cost;
    let bonusCredits = 0;
    if (requestedAmount !== null && compensates === null) {
      bonusCredits = this.cardRules.bonusFor(shop, credits, shop.creditCost);
      credits += bonusCredits;
    }
    if (credits > 2_147_483_647) throw new SimLedgerError(400, 'InvalidMovement');
    if (compensates === null) this.cardRules.checkHeld(shop.id, request.cardId, null);
    if (compensates !== null) {
      const original = this.movements.get(compensates);
      if (
        !original ||
        original.shop !== shop.id ||
        original.cardId !== request.cardId ||
        original.state === 'pending'
      ) {
        throw refuse(
          'invalidCompensation',
          `compensates: ${compensates} is no resolved movement of this shop and card`,
        );
      }
      this.#checkNotCompensated(shop, compensates);
      if (request.kind === 'recharge' && original.credits === credits) {
        // A recharge set right puts back what it put on: its bonus and what was paid.
        bonusCredits = original.bonusCredits;
        amount = original.paidAmount;
      }
    }
    // A compensation the ledger takes or refuses (flagged) ends the wait for the card.
    const cardRead = () => {
      const original = compensates === null ? undefined : this.movements.get(compensates);
      if (original) this.#cardReadFor(shop, original);
    };
    const flag = (kind: CardFlagKind) =>
      this.flags.push({
        kind: compensates === null ? kind : 'compensation-refused',
        movementId: id,
        cardId: request.cardId,
        shopId: shop.id,
      });
    if (request.kind === 'recharge' && shop.credits < credits) {
      if (compensates !== null) {
        flag('compensation-refused');
        cardRead();
      }
      throw refuse('noCredits');
    }
    if (tillId !== null && compensates === null) this.#checkTillHolds(shop, request.cardId, tillId);
    const recordFlagged = compensates === null && this.#flagRecord(shop.id, id, request, credits);
    if (request.kind === 'recharge' && request.cardCredits !== undefined && compensates === null) {
      const pending = [...this.movements.values()]
        .filter(
          (movement) =>
            movement.shop === shop.id &&
            movement.cardId === request.cardId &&
            movement.state === 'pending',
        )
        .reduce((sum, movement) => sum + movement.credits, 0);
      const allowed = this.cardAccount(shop.id, request.cardId) + pending;
      if (request.cardCredits > allowed) {
        this.flagged.set(id, request.cardId);
        flag('card-above-account');
        if (request.refuseAboveAccount) throw refuse('cardAccountExceeded');
      }
    }
    if (request.kind === 'discharge' && this.cardAccount(shop.id, request.cardId) < credits) {
      flag('discharge-exceeds-account');
      cardRead();
      throw refuse(recordFlagged ? 'cardRecordMismatch' : 'cardAccountExceeded');
    }
    if (request.kind === 'discharge' && recordFlagged) throw refuse('cardRecordMismatch');
    if (request.cardBefore !== undefined && compensates === null) {
      const latest = this.#latestPosted(shop.id, request.cardId);
      if (latest?.cardBefore === request.cardBefore) throw movedOn(request.cardId, latest);
    }
    let paidAmount = amount;
    if (request.kind === 'discharge') {
      const split = payoutSplit(
        this.cardAccountParts(shop.id, request.cardId),
        credits,
        this.cardRules.rulesOf(shop).bonusSpend === 'bonus-first',
        this.cardRules.rulesOf(shop).bonusTiers.length > 0,
        cost,
      );
      bonusCredits = split.bonus;
      amount = split.amount;
      paidAmount = split.paidTaken;
    }
    if (request.kind === 'recharge') shop.credits -= credits;
    // A pending discharge already counts against the card's account; a void gives it back.
    if (request.kind === 'discharge') {
      this.changeCardAccount(shop.id, request.cardId, -credits, -bonusCredits, -paidAmount);
    }
    const stored: StoredMovement = {
      id,
      shop: shop.id,
      kind: request.kind,
      cardId: request.cardId,
      credits,
      requestedAmount,
      creditCost: shop.creditCost,
      state: 'pending',
      createdAt: new Date(this.#now()).toISOString(),
      resolvedAt: null,
      transitions: 0,
      tillId,
      cardBefore: request.cardBefore ?? null,
      compensates,
      resolvedByTill: null,
      evidence: null,
      awaitsCard: false,
      cardEvidence: null,
      occurredAt: null,
      floatId: null,
      floatSeq: null,
      reportedAs: null,
      reportFlags: [],
      reference: request.reference ?? null,
      bonusCredits,
      amount,
      paidAmount,
      refunds: null,
      applies: null,
      tillTime: null,
    };
    this.movements.set(id, stored);
    if (tillId !== null) this.floats.heardFrom(shop.id, tillId);
    cardRead();
    return { movement: this.#view(stored), replayed: false };
  }

  /** ledger_create_card_movement: a refund, correction, replacement or block-clear. */
  #createByRules(
    shop: SimShop,
    id: string,
    tillId: string | null,
    request: MovementRequest,
  ): { movement: Movement; replayed: boolean } {
    const planned = this.cardRules.plan(shop, request, () => {
      if (tillId === null) return;
      this.#checkTillHolds(shop, request.cardId, tillId, true);
      if (request.cardBefore !== undefined) {
        const latest = this.#latestPosted(shop.id, request.cardId);
        if (latest?.cardBefore === request.cardBefore) throw movedOn(request.cardId, latest);
      }
    });
    const stored: StoredMovement = {
      id,
      shop: shop.id,
      kind: request.kind,
      cardId: request.cardId,
      credits: planned.credits,
      requestedAmount: null,
      creditCost: planned.creditCost,
      state: 'pending',
      createdAt: new Date(this.#now()).toISOString(),
      resolvedAt: null,
      transitions: 0,
      tillId,
      cardBefore: request.cardBefore ?? null,
      compensates: null,
      resolvedByTill: null,
      evidence: null,
      awaitsCard: false,
      cardEvidence: null,
      occurredAt: null,
      floatId: null,
      floatSeq: null,
      reportedAs: null,
      reportFlags: [],
      bonusCredits: planned.bonusCredits,
      amount: planned.amount,
      paidAmount: planned.paidAmount,
      refunds: planned.refunds,
      applies: request.applies?.toLowerCase() ?? null,
      tillTime: request.tillTime ?? null,
      reference: null,
    };
    this.movements.set(id, stored);
    if (tillId !== null) this.floats.heardFrom(shop.id, tillId);
    if (stored.kind === 'refund' || stored.kind === 'correction') {
      this.changeCardAccount(
        shop.id,
        stored.cardId,
        -stored.credits,
        -stored.bonusCredits,
        -stored.paidAmount,
      );
    }
    return { movement: this.#view(stored), replayed: false };
  }

  /**
   * ledger_compensate_card_movement: a refund, correction, replacement or block-clear that
   * sets right the ledger's final word on one of its kind, as its card shows it: redone when
   * that one was voided, undone (`undoes`) when it was posted.
   */
  #compensateByRules(
    shop: SimShop,
    id: string,
    tillId: string | null,
    request: MovementRequest,
    compensates: string,
  ): { movement: Movement; replayed: boolean } {
    const original = this.movements.get(compensates);
    if (
      !original ||
      original.shop !== shop.id ||
      original.cardId !== request.cardId ||
      original.state === 'pending' ||
      original.compensates !== null
    ) {
      throw refuse(
        'invalidCompensation',
        `compensates: ${compensates} is no resolved movement of this shop and card`,
      );
    }
    if (original.kind !== request.kind) {
      throw refuse(
        'invalidCompensation',
        `compensates: ${compensates} is a ${original.kind}: its compensation is a ${original.kind} too`,
      );
    }
    if (request.credits !== undefined && request.credits !== original.credits) {
      throw refuse(
        'invalidCompensation',
        `credits: ${compensates} moved ${original.credits} credits, its compensation moves as many`,
      );
    }
    this.#checkNotCompensated(shop, compensates);
    const undoes = original.state === 'posted';
    const takeBack = original.kind === 'refund' || original.kind === 'correction';
    const fromAccount = (takeBack && !undoes) || (original.kind === 'replacement' && undoes);
    let refused: keyof typeof ledgerErrorCodes | undefined;
    let detail: string | undefined;
    if (takeBack && undoes && shop.credits < original.credits) refused = 'noCredits';
    if (fromAccount) {
      const account = this.cardAccountParts(shop.id, request.cardId);
      if (
        account.bonus < original.bonusCredits ||
        account.credits - account.bonus < original.credits - original.bonusCredits ||
        account.paid < original.paidAmount
      ) {
        refused = 'cardAccountExceeded';
        detail = `card ${request.cardId}'s account holds less than ${compensates} took`;
      }
    }
    if (original.applies !== null && !undoes && !this.cardRules.waiting(original.applies)) {
      refused = 'cardChangeTaken';
      detail = `card change ${original.applies} no longer waits for card ${request.cardId}`;
    }
    if (refused !== undefined) {
      this.flags.push({
        kind: 'compensation-refused',
        movementId: id,
        cardId: request.cardId,
        shopId: shop.id,
      });
      this.#cardReadFor(shop, original);
      throw refuse(refused, detail);
    }
    const stored: StoredMovement = {
      ...original,
      id,
      state: 'pending',
      createdAt: new Date(this.#now()).toISOString(),
      resolvedAt: null,
      transitions: 0,
      tillId,
      cardBefore: null,
      compensates,
      resolvedByTill: null,
      evidence: null,
      awaitsCard: false,
      cardEvidence: null,
      occurredAt: null,
      reference: null,
      refunds: undoes ? null : original.refunds,
      applies: undoes ? null : original.applies,
      tillTime: null,
      undoes,
    };
    this.movements.set(id, stored);
    if (tillId !== null) this.floats.heardFrom(shop.id, tillId);
    this.#cardReadFor(shop, original);
    if (takeBack && undoes) shop.credits -= stored.credits;
    if (fromAccount) {
      this.changeCardAccount(
        shop.id,
        stored.cardId,
        -stored.credits,
        -stored.bonusCredits,
        -stored.paidAmount,
      );
    }
    return { movement: this.#view(stored), replayed: false };
  }

  /** MovementCompensated: another compensation of the movement (any state) came first. */
  #checkNotCompensated(shop: SimShop, compensates: string): void {
    const other = [...this.movements.values()].find(
      (movement) => movement.shop === shop.id && movement.compensates === compensates,
    );
    if (other) {
      throw refuse(
        'movementCompensated',
        `movement ${compensates} is compensated by ${other.id} already`,
      );
    }
  }

  /**
   * Another till's movement pending on the card, an operator's word awaiting it, a float report;
   * refused with the detail ledger_create_movement gives (`byRules`: ledger_create_card_movement).
   */
  #checkTillHolds(shop: SimShop, cardId: string, tillId: string, byRules = false): void {
    const other = [...this.movements.values()].find(
      (movement) =>
        movement.shop === shop.id &&
        movement.cardId === cardId &&
        movement.compensates === null &&
        ((movement.state === 'pending' && movement.tillId !== tillId) || movement.awaitsCard),
    );
    if (other) {
      const of = `movement ${other.id} of till ${other.tillId ?? '(unnamed)'}`;
      const pending = other.state === 'pending';
      throw refuse(
        'cardMovementPending',
        byRules
          ? `${of} is ${pending ? 'pending' : 'awaiting its card'} on card ${cardId}`
          : pending
            ? `${of} is pending on card ${cardId}`
            : `${of}, ${other.state} by an operator, awaits card ${cardId}`,
      );
    }
    const unreported = this.floats.reportPending(shop.id, cardId);
    if (unreported !== undefined) throw refuse('floatReportPending', unreported);
  }

  /** ledger_card_read_for: the card an operator's word waited for was read; the list moves on. */
  #cardReadFor(shop: SimShop, movement: StoredMovement): void {
    if (!movement.awaitsCard) return;
    movement.awaitsCard = false;
    this.cardRules.listChanged(shop);
  }

  /** The card's latest posted movement, unless a posted compensation set it right. */
  #latestPosted(shopId: string, cardId: string): StoredMovement | undefined {
    return [...this.movements.values()]
      .filter(
        (movement) =>
          movement.shop === shopId &&
          movement.cardId === cardId &&
          movement.state === 'posted' &&
          movement.compensates === null &&
          ![...this.movements.values()].some(
            (other) => other.compensates === movement.id && other.state === 'posted',
          ),
      )
      .at(-1);
  }

  /**
   * The record flags of a movement (cloud/db/routines/ledger-flag-card-record.ts): the card
   * holds more than its newest record's value after, or the record names a movement of this
   * shop and card the ledger voided, with no compensation and no operator's word awaiting the
   * card. True when either is raised.
   */
  #flagRecord(shopId: string, id: string, request: MovementRequest, credits: number): boolean {
    const record = request.cardRecord;
    if (record === undefined) return false;
    const flag = (kind: CardFlagKind) =>
      this.flags.push({ kind, movementId: id, cardId: request.cardId, shopId });
    const held = request.kind === 'discharge' ? credits : request.cardCredits;
    let flagged = false;
    if (held !== undefined && held > record.valueAfter) {
      flag('card-above-record');
      flagged = true;
    }
    const named = this.movements.get(record.movementId.toLowerCase());
    if (
      named?.shop === shopId &&
      named.cardId === request.cardId &&
      named.state === 'voided' &&
      !named.awaitsCard &&
      ![...this.movements.values()].some(
        (fix) => fix.shop === shopId && fix.compensates === named.id && fix.state !== 'voided',
      )
    ) {
      flag('record-of-voided-movement');
      flagged = true;
    }
    return flagged;
  }

  resolve(
    apiKey: string,
    rawId: string,
    target: 'posted' | 'voided',
    by: ResolveRequest = {},
  ): Movement {
    return this.#resolve(this.authenticate(apiKey), rawId, target, by);
  }

  /** The provider's admin command (resolveByOperator): an operator's word, naming no till. */
  decide(id: string, state: 'posted' | 'voided', evidence: string): void {
    const shop = this.shops.get(this.movements.get(id)?.shop ?? '');
    if (!shop) throw refuse('movementNotFound');
    this.#resolve(shop, id, state, { evidence });
  }

  #resolve(
    shop: SimShop,
    rawId: string,
    target: 'posted' | 'voided',
    by: ResolveRequest,
  ): Movement {
    const id = rawId.toLowerCase();
    const movement = this.movements.get(id);
    if (!movement || movement.shop !== shop.id) {
      // The first void's shop keeps the tombstone.
      if (!movement && target === 'voided' && this.tombstones && !this.#tombstones.has(id)) {
        this.#tombstones.set(id, shop.id);
      }
      throw refuse('movementNotFound');
    }
    const tillId = by.tillId?.toLowerCase() ?? null;
    if (movement.state === target) {
      // A till read the card and it agrees with the operator's word: the card is free again.
      if (
        movement.awaitsCard &&
        tillId !== null &&
        (by.evidence !== undefined || tillId === movement.tillId)
      ) {
        this.#cardReadFor(shop, movement);
        movement.cardEvidence = by.evidence ?? null;
      }
      return this.#view(movement);
    }
    if (movement.state === 'voided') throw refuse('movementAlreadyVoided');
    if (movement.state === 'posted') throw refuse('movementAlreadyPosted');
    if (
      movement.tillId !== null &&
      tillId !== null &&
      tillId !== movement.tillId &&
      by.evidence === undefined
    ) {
      throw refuse('movementOfAnotherTill', `movement ${id} was made by till ${movement.tillId}`);
    }
    movement.state = target;
    movement.resolvedAt = new Date(this.#now()).toISOString();
    movement.occurredAt =
      target === 'posted' ? new Date(by.occurredAt ?? movement.resolvedAt).toISOString() : null;
    movement.transitions += 1;
    movement.resolvedByTill = tillId;
    movement.evidence = by.evidence ?? null;
    // Decided by an operator without a till, so without the card: it awaits its card.
    movement.awaitsCard =
      tillId === null &&
      by.evidence !== undefined &&
      movement.cardBefore !== null &&
      movement.compensates === null;
    // Held now: the card list names it.
    if (movement.awaitsCard) this.cardRules.listChanged(shop);
    const undoes = movement.undoes === true;
    const takeBack = movement.kind === 'refund' || movement.kind === 'correction';
    // A compensation undoing a refund or correction moves credits as a recharge does.
    const takes = movement.kind === 'discharge' || (takeBack && !undoes);
    const gives =
      movement.kind === 'recharge' ||
      (movement.kind === 'replacement' && !undoes) ||
      (takeBack && undoes);
    if (movement.kind === 'recharge' && target === 'voided') this.floats.release(shop, movement);
    if (takeBack && undoes && target === 'voided') shop.credits += movement.credits;
    if (takes && target === 'posted') shop.credits += movement.credits;
    if (movement.applies !== null && target === 'posted') this.cardRules.applied(shop, movement);
    if (movement.kind === 'replacement' && undoes && target === 'posted') {
      this.cardRules.waitAgain(shop, movement);
    }
    // A card's account grows when a recharge or replacement is final, and gets back what a
    // voided payout, refund or correction took (or a voided compensation undoing a pickup).
    if (
      (gives && target === 'posted') ||
      ((takes || (movement.kind === 'replacement' && undoes)) && target === 'voided')
    ) {
      this.changeCardAccount(
        shop.id,
        movement.cardId,
        movement.credits,
        movement.bonusCredits,
        movement.paidAmount,
      );
    }
    return this.#view(movement);
  }

  get(apiKey: string, rawId: string): Movement {
    const shop = this.authenticate(apiKey);
    const movement = this.movements.get(rawId.toLowerCase());
    if (!movement || movement.shop !== shop.id) throw refuse('movementNotFound');
    return this.#view(movement);
  }

  /** Newest first, like the real list; of one till when `tillId` is given. */
  /**
   * `POST /v1/tills/{tillId}/heartbeat`: kept per shop and till, answered as the ledger knows
   * the till (the body is the worker's own, valid; the real ledger's checks are its tests').
   */
  heartbeat(apiKey: string, rawTillId: string, heartbeat: TillHeartbeat): TillState {
    const shop = this.authenticate(apiKey);
    const tillId = rawTillId.toLowerCase();
    const key = `${shop.id} ${tillId}`;
    const now = new Date(this.#now()).toISOString();
    const known = this.tills.get(key);
    const till: TillState = {
      tillId,
      name: known?.name ?? null,
      firstSeenAt: known?.firstSeenAt ?? now,
      lastSeenAt: now,
      version: heartbeat.version,
      reader: heartbeat.reader,
      pendingMovements: heartbeat.pendingMovements,
      waitingMovements: heartbeat.waitingMovements,
      float: heartbeat.float ?? null,
    };
    this.tills.set(key, till);
    return till;
  }

  /** The back office names a till (the name its next heartbeat's answer carries). */
  nameTill(shopId: string, tillId: string, name: string | null): void {
    const key = `${shopId} ${tillId.toLowerCase()}`;
    const known = this.tills.get(key);
    if (known) this.tills.set(key, { ...known, name });
  }

  listPending(apiKey: string, tillId?: string): Movement[] {
    const shop = this.authenticate(apiKey);
    return [...this.movements.values()]
      .filter(
        (movement) =>
          movement.shop === shop.id &&
          movement.state === 'pending' &&
          (tillId === undefined || movement.tillId === tillId.toLowerCase()),
      )
      .reverse()
      .map((movement) => this.#view(movement));
  }

  /** A shop's movements with one POS reference, newest first, like the real list. */
  listByReference(apiKey: string, reference: string): Movement[] {
    const shop = this.authenticate(apiKey);
    return [...this.movements.values()]
      .filter((movement) => movement.shop === shop.id && movement.reference === reference)
      .reverse()
      .map((movement) => this.#view(movement));
  }

  #view(movement: StoredMovement): Movement {
    const shop = this.shops.get(movement.shop) as SimShop;
    return {
      id: movement.id,
      kind: movement.kind,
      cardId: movement.cardId,
      state: movement.state,
      credits: movement.credits,
      amount: formatDecimal(movement.amount),
      creditCost: canonical(movement.creditCost),
      customerCredits: shop.credits,
      createdAt: movement.createdAt,
      resolvedAt: movement.resolvedAt,
      tillId: movement.tillId,
      cardBefore: movement.cardBefore,
      compensates: movement.compensates,
      resolvedByTill: movement.resolvedByTill,
      evidence: movement.evidence,
      awaitsCard: movement.awaitsCard,
      cardEvidence: movement.cardEvidence,
      occurredAt: movement.occurredAt,
      floatId: movement.floatId,
      reportedAs: movement.reportedAs,
      reportFlags: movement.reportFlags,
      reference: movement.reference,
      bonusCredits: movement.bonusCredits,
      refunds: movement.refunds,
      applies: movement.applies,
    };
  }
}

function canonical(decimal: string): string {
  return formatDecimal(parseStoredDecimal(decimal));
}
