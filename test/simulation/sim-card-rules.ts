/**
 * A shop's card rules of contract v1 (docs/cloud-api.md, "Lost cards, refunds and bonuses") in
 * the simulated ledger: blocks, the card list, replacements and corrections waiting for their
 * card, and the movements that apply them, refunds and block-clears. Each mirrors the SQL of
 * cloud/db/routines/ (named in its comment); sim-ledger-contract.test.ts compares the two.
 */
import { bonusFor } from '../../common/bonus-tiers.ts';
import { formatDecimal, parseStoredDecimal } from '../../common/decimal.ts';
import {
  ledgerErrorCodes,
  type CardBlock,
  type CardChange,
  type CardList,
  type CardRules,
  type MovementRequest,
} from '../../common/ledger-contract.ts';
import { pgInterval, pgSecondsUtc, pgTimestamptz } from './pg-text.ts';
import type { SimLedger, SimShop, StoredMovement } from './sim-ledger.ts';
import { SimLedgerError } from './sim-ledger.ts';

/** A refusal, with the real ledger's `detail` in its words (where its SQL gives one). */
const refuse = (name: keyof typeof ledgerErrorCodes, detail?: string): SimLedgerError =>
  new SimLedgerError(ledgerErrorCodes[name].status, ledgerErrorCodes[name].code, detail);

export const DEFAULT_CARD_RULES: CardRules = {
  undoWindowSeconds: 600,
  bonusTiers: [],
  bonusSpend: 'bonus-first',
};

interface SimChange extends Omit<CardChange, 'paidAmount'> {
  shop: string;
  paid: bigint;
}

/** ledger_payout_split: bonus first or last, paid credits at their average price. */
export function payoutSplit(
  account: { credits: number; bonus: number; paid: bigint },
  credits: number,
  bonusFirst: boolean,
  tiersOn: boolean,
  cost: bigint,
): { bonus: number; paidTaken: bigint; amount: bigint } {
  const paidCredits = account.credits - account.bonus;
  const bonus = bonusFirst ? Math.min(credits, account.bonus) : Math.max(0, credits - paidCredits);
  const paid = credits - bonus;
  const paidTaken =
    paid <= 0
      ? 0n
      : paid >= paidCredits
        ? account.paid
        : (account.paid * BigInt(paid)) / BigInt(paidCredits);
  const amount = !tiersOn && account.bonus === 0 ? BigInt(credits) * cost : paidTaken;
  return { bonus, paidTaken, amount };
}

/** ledger_take_back_split: a refund's or correction's credits, bonus first, at its price. */
export function takeBackSplit(
  account: { credits: number; bonus: number; paid: bigint },
  most: number,
  bonusLeft: number,
  cost: bigint,
): { credits: number; bonus: number; paidTaken: bigint; amount: bigint } {
  const capped = Math.max(0, Math.min(most, account.credits));
  const paidCredits = account.credits - account.bonus;
  const bonus = Math.max(0, Math.min(capped, bonusLeft, account.bonus));
  const paid = Math.min(capped - bonus, paidCredits);
  const full = BigInt(paid) * cost;
  const amount = full < account.paid ? full : account.paid;
  const paidTaken = paid > 0 && paid >= paidCredits ? account.paid : amount;
  return { credits: bonus + paid, bonus, paidTaken, amount };
}

export class SimCardRules {
  /** Open blocks, per shop and card. */
  readonly blocks = new Map<string, CardBlock>();
  readonly changes = new Map<string, SimChange>();
  readonly #ledger: SimLedger;
  readonly #now: () => number;

  constructor(ledger: SimLedger, now: () => number) {
    this.#ledger = ledger;
    this.#now = now;
  }

  rulesOf(shop: SimShop): CardRules {
    return shop.cards ?? DEFAULT_CARD_RULES;
  }

  /** The bonus a recharge paying for `paidCredits` gets at the shop (ledger_bonus_for). */
  bonusFor(shop: SimShop, paidCredits: number, cost: string): number {
    return bonusFor(this.rulesOf(shop).bonusTiers, paidCredits, parseStoredDecimal(cost));
  }

  blocked(shopId: string, cardId: string): boolean {
    return this.blocks.has(`${shopId} ${cardId}`);
  }

  /** ledger_block_card. */
  block(
    apiKey: string,
    cardId: string,
    block: boolean,
    by: string,
    reason: string,
  ): { changed: boolean; cardId: string; blocked: CardBlock | null; seq: number } {
    const shop = this.#ledger.authenticate(apiKey);
    const key = `${shop.id} ${cardId}`;
    const changed = block !== this.blocks.has(key);
    if (changed) {
      if (block) this.blocks.set(key, { since: this.#iso(), by, reason });
      else this.blocks.delete(key);
      this.listChanged(shop);
    }
    return { changed, cardId, blocked: this.blocks.get(key) ?? null, seq: shop.cardListSeq ?? 0 };
  }

  listChanged(shop: SimShop): void {
    shop.cardListSeq = (shop.cardListSeq ?? 0) + 1;
    shop.cardListChangedAt = this.#iso();
  }

  /** GET /v1/card-list. */
  list(apiKey: string): CardList {
    const shop = this.#ledger.authenticate(apiKey);
    return {
      seq: shop.cardListSeq ?? 0,
      changedAt: shop.cardListChangedAt ?? null,
      blocked: [...this.blocks.entries()]
        .filter(([key]) => key.startsWith(`${shop.id} `))
        .map(([key, block]) => ({ cardId: key.split(' ')[1] as string, since: block.since }))
        .sort((a, b) => (a.cardId < b.cardId ? -1 : 1)),
      waiting: [...this.changes.values()]
        .filter((change) => change.shop === shop.id && change.state === 'waiting')
        .sort((a, b) => (a.cardId < b.cardId ? -1 : a.cardId > b.cardId ? 1 : 0))
        .map(({ id, kind, cardId, credits, bonusCredits }) => ({
          id,
          kind,
          cardId,
          credits,
          bonusCredits,
        })),
      held: [...this.#ledger.movements.values()]
        .filter((movement) => movement.shop === shop.id && movement.awaitsCard)
        .map((movement) => ({
          movement,
          key: `${movement.cardId} ${movement.createdAt} ${movement.id}`,
        }))
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map(({ movement: { cardId, id, state } }) => ({
          cardId,
          movementId: id,
          state: state as 'posted' | 'voided',
        })),
    };
  }

  /** The changes of a card (waiting for it or made from it), newest first. */
  changesOf(shopId: string, cardId: string): CardChange[] {
    return [...this.changes.values()]
      .filter(
        (change) =>
          change.shop === shopId && (change.cardId === cardId || change.fromCard === cardId),
      )
      .reverse()
      .map((change) => this.view(change));
  }

  view(change: SimChange): CardChange {
    const { shop: _shop, paid, ...rest } = change;
    const pending = [...this.#ledger.movements.values()].find(
      (movement) => movement.applies === change.id && movement.state === 'pending',
    );
    return {
      ...rest,
      paidAmount: formatDecimal(paid),
      movementId: change.movementId ?? pending?.id ?? null,
    };
  }

  /** ledger_replace_card. */
  replace(
    apiKey: string,
    input: { id: string; cardId: string; newCardId: string; by: string; reason: string },
  ): { changed: boolean; change: CardChange } {
    const shop = this.#ledger.authenticate(apiKey);
    const id = input.id.toLowerCase();
    const earlier = this.changes.get(id);
    if (earlier) {
      if (
        earlier.shop !== shop.id ||
        earlier.kind !== 'replacement' ||
        earlier.fromCard !== input.cardId ||
        earlier.cardId !== input.newCardId
      ) {
        throw refuse('cardChangeConflict', `card change ${id} is another change`);
      }
      return { changed: false, change: this.view(earlier) };
    }
    const old = input.cardId;
    if (!this.blocked(shop.id, old)) {
      throw refuse('cardNotBlocked', `card ${old} is not blocked: block it before replacing it`);
    }
    if (this.blocked(shop.id, input.newCardId)) {
      throw refuse('cardBlocked', `card ${input.newCardId}, the new card, is blocked`);
    }
    const waiting = this.#waitingFor(shop.id, old)[0];
    if (waiting) {
      throw refuse(
        'cardChangeWaiting',
        `${waiting.kind} ${waiting.id} waits for card ${old}: cancel it first`,
      );
    }
    const busy = [...this.#ledger.movements.values()].find(
      (movement) =>
        movement.shop === shop.id &&
        movement.cardId === old &&
        (movement.state === 'pending' || movement.awaitsCard),
    );
    if (busy) {
      const what = busy.state === 'pending' ? 'pending' : 'awaiting its card';
      throw refuse(
        'cardMovementPending',
        `movement ${busy.id} of card ${old} is ${what}: decide it first`,
      );
    }
    const account = this.#ledger.cardAccountParts(shop.id, old);
    if (account.credits === 0) {
      throw refuse('nothingToReplace', `card ${old} has an account of 0 at this shop`);
    }
    const change = this.#add(shop, {
      id,
      kind: 'replacement',
      cardId: input.newCardId,
      fromCard: input.cardId,
      corrects: null,
      credits: account.credits,
      bonusCredits: account.bonus,
      paid: account.paid,
      reason: input.reason,
      by: input.by,
    });
    this.#ledger.changeCardAccount(
      shop.id,
      input.cardId,
      -account.credits,
      -account.bonus,
      -account.paid,
    );
    return { changed: true, change: this.view(change) };
  }

  /** ledger_correct_card. */
  correct(
    apiKey: string,
    input: {
      id: string;
      cardId: string;
      recharge: string;
      credits: number;
      by: string;
      reason: string;
    },
  ): { changed: boolean; change: CardChange } {
    const shop = this.#ledger.authenticate(apiKey);
    const id = input.id.toLowerCase();
    const recharge = input.recharge.toLowerCase();
    const earlier = this.changes.get(id);
    if (earlier) {
      if (
        earlier.shop !== shop.id ||
        earlier.kind !== 'correction' ||
        earlier.cardId !== input.cardId ||
        earlier.corrects !== recharge ||
        earlier.credits !== input.credits
      ) {
        throw refuse('cardChangeConflict', `card change ${id} is another change`);
      }
      return { changed: false, change: this.view(earlier) };
    }
    const target = this.#ledger.movements.get(recharge);
    if (
      !target ||
      target.shop !== shop.id ||
      target.kind !== 'recharge' ||
      target.state !== 'posted' ||
      target.cardId !== input.cardId
    ) {
      throw refuse(
        'invalidRefund',
        `movement ${recharge} is no posted recharge of card ${input.cardId}`,
      );
    }
    if (this.blocked(shop.id, input.cardId)) {
      throw refuse('cardBlocked', `card ${input.cardId} is blocked: replace it instead`);
    }
    const claimed = [...this.changes.values()]
      .filter((change) => change.corrects === recharge && change.state === 'waiting')
      .reduce((sum, change) => sum + change.credits, 0);
    const left = target.credits - this.#takenBack(recharge).credits - claimed;
    if (input.credits > left) {
      throw refuse(
        'nothingToRefund',
        `recharge ${recharge} put ${target.credits} credits on card ${input.cardId}; ${Math.max(left, 0)} of them are not taken back or claimed`,
      );
    }
    const change = this.#add(shop, {
      id,
      kind: 'correction',
      cardId: input.cardId,
      fromCard: null,
      corrects: recharge,
      credits: input.credits,
      bonusCredits: 0,
      paid: 0n,
      reason: input.reason,
      by: input.by,
    });
    return { changed: true, change: this.view(change) };
  }

  /** ledger_cancel_card_change. */
  cancel(
    apiKey: string,
    rawId: string,
    by: string,
    reason: string,
  ): { changed: boolean; change: CardChange } {
    const shop = this.#ledger.authenticate(apiKey);
    const change = this.changes.get(rawId.toLowerCase());
    if (!change || change.shop !== shop.id) throw refuse('cardChangeNotFound');
    if (change.state === 'cancelled') return { changed: false, change: this.view(change) };
    if (change.state === 'applied') {
      throw refuse(
        'cardChangeTaken',
        `${change.kind} ${change.id} was applied by movement ${change.movementId}`,
      );
    }
    const applying = [...this.#ledger.movements.values()].find(
      (movement) => movement.applies === change.id && movement.state === 'pending',
    );
    if (applying) {
      throw refuse(
        'cardMovementPending',
        `movement ${applying.id} is applying ${change.kind} ${change.id}: it is decided on the card first`,
      );
    }
    change.state = 'cancelled';
    change.resolvedAt = this.#iso();
    change.cancelledBy = by;
    change.cancelReason = reason;
    if (change.kind === 'replacement') {
      this.#ledger.changeCardAccount(
        shop.id,
        change.fromCard as string,
        change.credits,
        change.bonusCredits,
        change.paid,
      );
    }
    this.listChanged(shop);
    return { changed: true, change: this.view(change) };
  }

  /** ledger_card_held_by_rules: CardBlocked, or CardChangeWaiting. */
  checkHeld(shopId: string, cardId: string, applying: string | null): void {
    const block = this.blocks.get(`${shopId} ${cardId}`);
    if (block) {
      throw refuse(
        'cardBlocked',
        `card ${cardId} is blocked since ${pgSecondsUtc(block.since)}: ${block.reason}`,
      );
    }
    const waiting = this.#waitingFor(shopId, cardId).filter(
      (change) =>
        change.id !== applying &&
        ![...this.#ledger.movements.values()].some(
          (movement) => movement.applies === change.id && movement.state !== 'voided',
        ),
    );
    if (waiting.length > 0) {
      const names = waiting.map((change) => `${change.kind} ${change.id}`).join(', ');
      const credits = waiting.map((change) => `${change.credits} credits`).join(', ');
      throw refuse(
        'cardChangeWaiting',
        `card ${cardId}: ${names} waits for it (${credits}): apply it first`,
      );
    }
  }

  /**
   * ledger_create_card_movement after the replay and tombstone checks: validates a refund,
   * correction, replacement or block-clear and answers what it moves. The caller stores it.
   */
  plan(
    shop: SimShop,
    request: MovementRequest,
    tillHolds: () => void,
  ): Pick<
    StoredMovement,
    'credits' | 'bonusCredits' | 'amount' | 'paidAmount' | 'refunds' | 'creditCost'
  > {
    const { kind, cardId } = request;
    const applies = request.applies?.toLowerCase() ?? null;
    let refunds = request.refunds?.toLowerCase() ?? null;
    let moved = { credits: 0, bonus: 0, paid: 0n, amount: 0n };
    if (kind === 'block-clear') {
      if (!this.blocked(shop.id, cardId)) {
        throw refuse('cardNotBlocked', `card ${cardId} is not blocked`);
      }
      moved.credits = request.cardCredits ?? 0;
    } else {
      this.checkHeld(shop.id, cardId, applies);
    }
    let change: SimChange | undefined;
    if (applies !== null) {
      change = this.changes.get(applies);
      if (!change || change.shop !== shop.id || change.cardId !== cardId || change.kind !== kind) {
        throw refuse(
          'invalidCardChange',
          `applies: ${applies} is no ${kind} waiting for card ${cardId}`,
        );
      }
      const taken = [...this.#ledger.movements.values()].find(
        (movement) => movement.applies === applies && movement.state !== 'voided',
      );
      if (taken || change.state !== 'waiting') {
        const how = taken ? `applied by movement ${taken.id} (${taken.state})` : change.state;
        throw refuse('cardChangeTaken', `${change.kind} ${change.id} is ${how}`);
      }
      if (kind === 'replacement') {
        moved = {
          credits: change.credits,
          bonus: change.bonusCredits,
          paid: change.paid,
          amount: 0n,
        };
      } else {
        refunds = change.corrects;
      }
    }
    let recharge: StoredMovement | undefined;
    if (refunds !== null) {
      recharge = this.#ledger.movements.get(refunds);
      if (
        !recharge ||
        recharge.shop !== shop.id ||
        recharge.kind !== 'recharge' ||
        recharge.state !== 'posted' ||
        recharge.cardId !== cardId
      ) {
        throw refuse(
          'invalidRefund',
          `refunds: ${refunds} is no posted recharge of card ${cardId}`,
        );
      }
    }
    if (kind === 'refund' && recharge) this.#checkUndo(shop, request, recharge);
    tillHolds();
    if (recharge) {
      const taken = this.#takenBack(recharge.id);
      const split = takeBackSplit(
        this.#ledger.cardAccountParts(shop.id, cardId),
        Math.min(
          recharge.credits - taken.credits,
          request.cardCredits ?? 0,
          kind === 'correction' ? (change?.credits ?? 0) : recharge.credits,
        ),
        recharge.bonusCredits - taken.bonus,
        parseStoredDecimal(recharge.creditCost),
      );
      moved = {
        credits: split.credits,
        bonus: split.bonus,
        paid: split.paidTaken,
        amount: split.amount,
      };
      if (moved.credits === 0 && kind === 'refund') {
        throw refuse(
          'nothingToRefund',
          `card ${cardId} holds nothing of recharge ${recharge.id} to take back`,
        );
      }
    }
    return {
      credits: moved.credits,
      bonusCredits: moved.bonus,
      amount: moved.amount,
      paidAmount: moved.paid,
      refunds,
      creditCost: recharge?.creditCost ?? shop.creditCost,
    };
  }

  /** A replacement or correction applied on its card (ledger_resolve_movement's post). */
  applied(shop: SimShop, movement: StoredMovement): void {
    const change = movement.applies === null ? undefined : this.changes.get(movement.applies);
    this.listChanged(shop);
    if (change?.state !== 'waiting') return;
    change.state = 'applied';
    change.resolvedAt = this.#iso();
    change.movementId = movement.id;
  }

  /** Whether a card change still waits for its card, applied by no movement not voided. */
  waiting(changeId: string): boolean {
    const taken = [...this.#ledger.movements.values()].some(
      (movement) => movement.applies === changeId && movement.state !== 'voided',
    );
    return !taken && this.changes.get(changeId)?.state === 'waiting';
  }

  /**
   * A compensation undoing a pickup, posted (ledger_resolve_movement): the credits wait again,
   * as a new replacement with the compensation's id.
   */
  waitAgain(shop: SimShop, compensation: StoredMovement): void {
    const pickup = this.#ledger.movements.get(compensation.compensates ?? '');
    const change = pickup?.applies ? this.changes.get(pickup.applies) : undefined;
    if (!pickup || !change) return;
    this.#add(shop, {
      id: compensation.id,
      kind: 'replacement',
      cardId: change.cardId,
      fromCard: change.fromCard,
      corrects: null,
      credits: compensation.credits,
      bonusCredits: compensation.bonusCredits,
      paid: compensation.paidAmount,
      reason: `pickup ${pickup.id} did not reach card ${compensation.cardId}: the replacement waits again`,
      by: 'ledger',
    });
  }

  #checkUndo(shop: SimShop, request: MovementRequest, recharge: StoredMovement): void {
    if (recharge.tillId !== (request.tillId?.toLowerCase() ?? null)) {
      throw refuse(
        'movementOfAnotherTill',
        `recharge ${recharge.id} was made by till ${recharge.tillId ?? '(unnamed)'}: a cashier undoes only this till's own`,
      );
    }
    // Taken back already, by a refund or a correction, pending or posted.
    const taken = [...this.#ledger.movements.values()].find(
      (other) => other.refunds === recharge.id && other.state !== 'voided',
    );
    if (taken) {
      throw refuse(
        'alreadyRefunded',
        `recharge ${recharge.id} is taken back by ${taken.id} already`,
      );
    }
    // Made after it: later in the map, which keeps the order of creation (virtual time may
    // give two movements the same millisecond; the real ledger's created_at tells them apart).
    const movements = [...this.#ledger.movements.values()];
    const made = movements.indexOf(recharge);
    // The newest of them is named (the real one's ORDER BY created_at DESC).
    const later = movements.findLast(
      (other, index) =>
        other.shop === shop.id &&
        other.cardId === recharge.cardId &&
        other.id !== recharge.id &&
        other.state !== 'voided' &&
        (index > made ||
          (other.occurredAt !== null &&
            recharge.occurredAt !== null &&
            other.occurredAt > recharge.occurredAt)),
    );
    if (later) {
      throw refuse(
        'undoNotNewest',
        `recharge ${recharge.id} is no longer card ${recharge.cardId}'s newest write: ${later.kind} ${later.id} came after it`,
      );
    }
    const seconds = this.rulesOf(shop).undoWindowSeconds;
    const window = seconds * 1000;
    const since = Date.parse(request.tillTime ?? '') - Date.parse(recharge.occurredAt ?? '');
    if (window === 0 || since > window || since < -window) {
      throw refuse(
        'undoWindowPassed',
        window === 0
          ? "this shop allows no cashier's undo"
          : `recharge ${recharge.id} happened at ${pgTimestamptz(recharge.occurredAt ?? '')} by the till's clock, ${pgInterval(since)} before it; the undo window is ${seconds} seconds`,
      );
    }
  }

  /** What refunds and corrections (not voided) took back of a recharge. */
  #takenBack(rechargeId: string): { credits: number; bonus: number } {
    let credits = 0;
    let bonus = 0;
    for (const movement of this.#ledger.movements.values()) {
      if (movement.refunds !== rechargeId || movement.state === 'voided') continue;
      // Undone by its compensation (its card never held it): it took nothing back.
      const undone = [...this.#ledger.movements.values()].some(
        (fix) => fix.compensates === movement.id && fix.undoes === true && fix.state === 'posted',
      );
      if (undone) continue;
      credits += movement.credits;
      bonus += movement.bonusCredits;
    }
    return { credits, bonus };
  }

  #waitingFor(shopId: string, cardId: string): SimChange[] {
    return [...this.changes.values()].filter(
      (change) => change.shop === shopId && change.cardId === cardId && change.state === 'waiting',
    );
  }

  #add(
    shop: SimShop,
    fields: Omit<
      SimChange,
      'shop' | 'state' | 'createdAt' | 'resolvedAt' | 'cancelledBy' | 'cancelReason' | 'movementId'
    >,
  ): SimChange {
    const change: SimChange = {
      ...fields,
      shop: shop.id,
      state: 'waiting',
      createdAt: this.#iso(),
      resolvedAt: null,
      cancelledBy: null,
      cancelReason: null,
      movementId: null,
    };
    this.changes.set(change.id, change);
    this.listChanged(shop);
    return change;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}
