import { errors } from '../errors.ts';
import type { MovementBook } from './movement-book.ts';
import {
  ANSWER_RETENTION_MS,
  occurredAtOf,
  type Idempotency,
  type Movement,
} from './journal-entries.ts';
import { phaseOf, replayable } from './movement-phases.ts';
import type { MovementResolver } from './movement-resolver.ts';

/**
 * The receipt in every money answer: the movement (null: a payout of a card at 0 moved
 * nothing), when it happened by this till's clock (its card write proven), and the POS's
 * reference of the sale. Answers stored before receipts existed are replayed without them.
 */
export type Receipt = {
  movementId: string | null;
  occurredAt: string | null;
  reference: string | null;
};

/**
 * The spec's 200 bodies of the two card-writing endpoints, with their receipt. A recharge by
 * amount that the shop's bonus tiers gave a bonus says how many of the credits it put on the
 * card were that bonus (`bonusCredits`, absent: none); `rechargeAmount` stays what was paid.
 */
export type RechargeAnswer = {
  cardId: string;
  credits: number;
  rechargeAmount: number;
  bonusCredits?: number;
} & Receipt;
export type DischargeAnswer = {
  cardId: string;
  dischargedCredits: number;
  dischargedAmount: number;
} & Receipt;

/**
 * POST /cards/undo's 200 body: the card's balance after the undo, what it took off the card and
 * the euros the cashier gives back (the ledger's decision), and the recharge it undid.
 */
export type UndoAnswer = {
  cardId: string;
  credits: number;
  refundedCredits: number;
  refundedAmount: number;
  refunds: string;
} & Receipt;

/** What the caller is told for a movement that landed on the card. */
export function answerOf(movement: Movement): RechargeAnswer | DischargeAnswer | UndoAnswer {
  const reserved = movement.reserved;
  if (!reserved?.intent) throw new Error(`movement ${movement.id} has no planned write`);
  // The ledger's amounts are exact decimal strings; JSON carries them as numbers (spec).
  const amount = Number(reserved.amount);
  const receipt: Receipt = {
    movementId: movement.id,
    occurredAt: occurredAtOf(movement),
    reference: movement.reference ?? null,
  };
  if (movement.kind === 'refund' && movement.refunds !== undefined) {
    return {
      cardId: movement.cardId,
      credits: reserved.intent.value,
      refundedCredits: reserved.credits,
      refundedAmount: amount,
      refunds: movement.refunds,
      ...receipt,
    };
  }
  return movement.kind === 'recharge'
    ? {
        cardId: movement.cardId,
        credits: reserved.intent.value,
        rechargeAmount: amount,
        ...(reserved.bonusCredits ? { bonusCredits: reserved.bonusCredits } : {}),
        ...receipt,
      }
    : {
        cardId: movement.cardId,
        dischargedCredits: reserved.credits,
        dischargedAmount: amount,
        ...receipt,
      };
}

/**
 * The answer a movement's caller got, or would have got: the journaled one, else, for a write
 * that landed, answerOf: a crash came between the card line and the answer line, or the
 * ledger's word said it landed when its card could no longer tell (learnt). That is its
 * answer, as of the card line.
 */
export function answerFor(movement: Movement): Movement['answer'] {
  if (movement.answer) return movement.answer;
  if (movement.card !== 'committed' || !movement.reserved?.intent) return undefined;
  return { status: 200, body: answerOf(movement), at: movement.cardAt ?? movement.startedAt };
}

/**
 * Idempotency-Key requests and their answers (docs/integrators.md, "Idempotency-Key"). The
 * answers are the journal's: a landed movement's answer is journaled with it and replayed for
 * the same key, but only as the ledger's final word allows.
 */
export class AnswerStore {
  readonly #book: MovementBook;
  readonly #resolver: MovementResolver;
  /** Idempotency-Key scopes of running requests. */
  readonly #running = new Set<string>();

  constructor(book: MovementBook, resolver: MovementResolver) {
    this.#book = book;
    this.#resolver = resolver;
  }

  /** Records the answer for a landed movement, so the same Idempotency-Key replays it. */
  async record(movement: Movement): Promise<RechargeAnswer | DischargeAnswer | UndoAnswer> {
    const body = answerOf(movement);
    await this.#book.append({ type: 'answered', id: movement.id, status: 200, body });
    return body;
  }

  /**
   * Runs a request under an Idempotency-Key (when given): a repeat with another body is 422;
   * a repeat while the first still runs is 409. The replay of a finished first attempt is
   * decided on the card (see replay()). Failures are not replayed: nothing moved.
   */
  async idempotent<T>(
    idempotency: Idempotency | undefined,
    run: (idempotency: Idempotency | undefined) => Promise<T>,
  ): Promise<T> {
    if (!idempotency) return run(undefined);
    if (this.#running.has(idempotency.scope)) throw errors.idempotencyKeyInUse();
    const earlier = this.#book.latestFor(idempotency.scope);
    if (earlier?.idempotency && earlier.idempotency.requestHash !== idempotency.requestHash) {
      throw errors.idempotencyKeyReused();
    }
    this.#running.add(idempotency.scope);
    try {
      return await run(idempotency);
    } finally {
      this.#running.delete(idempotency.scope);
    }
  }

  /**
   * For a request under an Idempotency-Key, once the card is on the reader (after settle()):
   * the first attempt's answer when it landed, without touching the card. The answer belongs
   * to one card: with another card on the reader it is IdempotencyKeyOtherCard, and an
   * earlier attempt still undecided on another card (or decided by the ledger's word while that
   * card was away) is MovementUnsettled.
   *
   * A stored answer is replayed only as the ledger's final word: once it posted the movement
   * (or, voided against its card, the compensating movement). Not confirmed yet, the ledger is
   * asked now; still unconfirmed is LedgerUnavailable (retry later with the same key); a
   * compensation the ledger refused is MovementConflict.
   */
  async replay<T>(idempotency: Idempotency | undefined, cardId: string): Promise<T | undefined> {
    if (!idempotency) return undefined;
    const earlier = this.#book.latestFor(idempotency.scope);
    if (!earlier) return undefined;
    // Undecided on its card: its write uncertain, or decided by the ledger's word while the
    // card was away (learnt: the card decides it when seen, and may hold it).
    const undecided = phaseOf(earlier) === 'uncertain' || earlier.learnt === true;
    if (undecided && earlier.cardId !== cardId) throw errors.movementUnsettled();
    if (earlier.byLedger && earlier.card === 'not-written' && earlier.reserved?.intent) {
      const decidedAt = Date.parse(earlier.cardAt ?? earlier.startedAt);
      if (this.#book.clock.now() - decidedAt < ANSWER_RETENTION_MS) {
        return (await this.#afterLedgerWord(earlier, cardId)) as T;
      }
    }
    const answer = answerFor(earlier);
    if (!answer || this.#book.clock.now() - Date.parse(answer.at) >= ANSWER_RETENTION_MS) {
      return undefined;
    }
    if (earlier.cardId !== cardId) throw errors.idempotencyKeyOtherCard();
    if (!replayable(earlier, this.#book.compensationOf(earlier.id))) {
      await this.#resolver.resolve(earlier);
      const compensation = this.#book.compensationOf(earlier.id);
      if (compensation) await this.#resolver.resolve(compensation);
    }
    const compensation = this.#book.compensationOf(earlier.id);
    if (replayable(earlier, compensation)) return answer.body as T;
    if (compensation?.conflict !== undefined) throw errors.movementConflict();
    throw errors.ledgerUnavailable();
  }

  /**
   * A first attempt taken as not written by the ledger's word (an operator's void), its card
   * unable to tell (byLedger): the write may have landed, and a till that sees the card holding
   * it compensates the void. Until such a compensation is posted the attempt stays undecided
   * (MovementUnsettled: running the key again could move the card twice); once it is, the write
   * landed, and its answer is replayed.
   */
  async #afterLedgerWord(earlier: Movement, cardId: string): Promise<unknown> {
    if (earlier.cardId !== cardId) throw errors.movementUnsettled();
    const landed = await this.#resolver.compensatedSince(earlier);
    if (landed === undefined) throw errors.ledgerUnavailable();
    if (!landed) throw errors.movementUnsettled();
    return answerOf({ ...earlier, card: 'committed' });
  }
}
