import { isRechargeOrPayout, ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { planWrite } from '../card/wallet-card.ts';
import type { CardWallet, WalletCard, WriteIntent } from '../card/card-face.ts';
import {
  LedgerRefusal,
  mayHaveLanded,
  type LedgerMovement,
  type NewMovement,
} from '../cloud/ledger-client.ts';
import { errors } from '../errors.ts';
import type { AnswerStore, DischargeAnswer, RechargeAnswer, UndoAnswer } from './answer-store.ts';
import type { CardSettlement } from './card-settlement.ts';
import type { MovementBook } from './movement-book.ts';
import type { Idempotency, Movement, MovementKind } from './journal-entries.ts';
import { phaseOf } from './movement-phases.ts';
import type { MovementLedger, MovementResolver } from './movement-resolver.ts';

/**
 * A movement owned by the running request, ready to commit: reserved at the ledger, or paid
 * from the till's float (no ledger call: `ledger` absent).
 */
export interface Reservation {
  readonly movement: Movement;
  readonly ledger?: LedgerMovement;
  readonly intent: WriteIntent;
}

export interface ReserveInput {
  kind: MovementKind;
  keyFingerprint: string;
  idempotency: Idempotency | undefined;
  /** The wallet as read just before (its `before` goes to the ledger as the evidence). */
  wallet: CardWallet;
  request: Omit<NewMovement, 'id' | 'kind' | 'cardId' | 'tillId' | 'cardBefore' | 'compensates'>;
  /** The balance the card gets for the credits the ledger granted (throws to refuse them). */
  balanceAfter: (credits: number) => number;
}

/**
 * The request half of the engine: a movement from its start to the card's answer. reserve()
 * journals the start and asks the ledger for the pending movement; commit() writes the card and
 * records the answer (earlier writes a card was pulled in the middle of are decided first, by
 * CardSettlement). Each
 * step is journaled durably before the next happens. The request owns its movement until
 * commit() ends; then the resolver posts or voids it.
 */
export class MovementRequests {
  readonly #book: MovementBook;
  readonly #ledger: MovementLedger;
  readonly #resolver: MovementResolver;
  readonly #answers: AnswerStore;
  readonly #settlement: Pick<CardSettlement, 'freeHeld'>;
  readonly #postBeforeAnswer: boolean;

  constructor(
    book: MovementBook,
    ledger: MovementLedger,
    resolver: MovementResolver,
    answers: AnswerStore,
    settlement: Pick<CardSettlement, 'freeHeld'>,
    postBeforeAnswer: boolean,
  ) {
    this.#book = book;
    this.#ledger = ledger;
    this.#resolver = resolver;
    this.#answers = answers;
    this.#settlement = settlement;
    this.#postBeforeAnswer = postBeforeAnswer;
  }

  /**
   * Begins a movement on `card`: journals it, asks the ledger for it as pending (a recharge
   * reserves the shop's credits; the till's identity and what the card holds go with it), plans
   * the card write for the credits it granted, and journals that before the card is touched.
   * Any failure ends the movement here, and one the ledger may hold is voided (by the outbox,
   * right after): a create one of whose tries went unanswered may land later, even after a
   * later try was refused, until a void's tombstone refuses it. The card is not written.
   * A card the ledger holds for an operator's word given without it (CardMovementPending) is
   * here to decide that word: once it has, the movement is tried once more.
   */
  async reserve(card: WalletCard, input: ReserveInput): Promise<Reservation> {
    try {
      return await this.#reserveOnce(card, input);
    } catch (error) {
      const held =
        error instanceof LedgerRefusal && error.code === ledgerErrorCodes.cardMovementPending.code;
      if (!held || !(await this.#settlement.freeHeld(card, input.keyFingerprint))) throw error;
      return this.#reserveOnce(card, input);
    }
  }

  async #reserveOnce(card: WalletCard, input: ReserveInput): Promise<Reservation> {
    const apiKey = this.#book.keys.keyFor(input.keyFingerprint);
    if (apiKey === undefined) throw errors.invalidApiKey();
    const id = this.#book.newId();
    // Owned (and its key held) from before its first journal line.
    this.#book.owned.set(id, input.keyFingerprint);
    try {
      await this.#book.append({
        type: 'started',
        id,
        kind: input.kind,
        cardId: card.cardId,
        keyFingerprint: input.keyFingerprint,
        idempotency: input.idempotency,
        ...(input.request.reference === undefined ? {} : { reference: input.request.reference }),
        ...(input.request.refunds === undefined ? {} : { refunds: input.request.refunds }),
      });
      const movement = this.#book.movement(id);
      const pending = await this.#create(movement, apiKey, {
        ...input.request,
        cardBefore: input.wallet.before,
        // The card's newest record: the ledger flags a card it does not explain (a recharge's
        // or payout's; a card rule's movement takes none).
        ...(input.wallet.record && isRechargeOrPayout(input.kind)
          ? { cardRecord: input.wallet.record }
          : {}),
      });
      let intent: WriteIntent;
      try {
        intent = planWrite(input.wallet.before, input.balanceAfter(pending.credits), id);
      } catch (error) {
        await this.#abandon(movement);
        throw error;
      }
      await this.#book.append({
        type: 'reserved',
        id,
        credits: pending.credits,
        amount: pending.amount,
        // The ledger's tiers decided it: the answer tells what was given, never a guess.
        ...(pending.bonusCredits ? { bonusCredits: pending.bonusCredits } : {}),
        intent,
      });
      return { movement, ledger: pending, intent };
    } catch (error) {
      this.release(id);
      throw error;
    }
  }

  /**
   * Writes the planned write and settles what that means: landed, record the answer (the
   * caller's answer and the card's release need nothing more) and post it in the background;
   * certainly not, void it and fail with the card's error; unknown (the card left mid-write, or
   * its answer did not verify), leave it to be decided on the card and fail with
   * CardRemovedDuringWrite (or CardAnswerUnverified). Ends the
   * request's ownership of the movement.
   */
  async commit<T extends RechargeAnswer | DischargeAnswer | UndoAnswer>(
    reservation: Reservation,
    card: WalletCard,
  ): Promise<T> {
    const { movement, intent } = reservation;
    try {
      // Nobody else resolves an owned movement; this re-check keeps it so.
      if (phaseOf(movement) !== 'uncertain') {
        throw new Error(`movement ${movement.id} changed while its request owned it`);
      }
      const result = await card.write(intent);
      if (result.outcome === 'uncertain') {
        this.#book.log.warn(`movement ${movement.id}: card write uncertain (${result.error.code})`);
        // An answer the card face could not verify names itself: that card never left.
        throw result.error.code === errors.cardAnswerUnverified().code
          ? result.error
          : errors.cardRemovedDuringWrite(result.error);
      }
      if (result.outcome === 'not-written') {
        await this.#abandon(movement);
        throw result.error;
      }
      await this.#book.append({ type: 'card', id: movement.id, outcome: 'committed' });
      const answer = (await this.#answers.record(movement)) as T;
      if (this.#postBeforeAnswer && !movement.float) await this.#resolver.resolve(movement);
      return answer;
    } finally {
      this.release(movement.id);
    }
  }

  async #create(
    movement: Movement,
    apiKey: string,
    request: Omit<NewMovement, 'id' | 'kind' | 'cardId'>,
  ): Promise<LedgerMovement> {
    let pending: LedgerMovement;
    try {
      pending = await this.#ledger.createMovement(apiKey, {
        id: movement.id,
        kind: movement.kind,
        cardId: movement.cardId,
        tillId: this.#book.tillId,
        ...request,
      });
    } catch (error) {
      if (
        error instanceof LedgerRefusal &&
        error.code === ledgerErrorCodes.movementAlreadyVoided.code
      ) {
        // A void reached the ledger first (its tombstone refuses this create).
        await this.#book.append({ type: 'resolved', id: movement.id, state: 'voided' });
        throw errors.movementVoided();
      }
      // Another till wrote the card from the state this was planned from, before this create
      // reached the ledger: nothing moved, and a new movement reads the card again.
      const answer =
        error instanceof LedgerRefusal && error.code === ledgerErrorCodes.cardStateMovedOn.code
          ? errors.movementVoided()
          : error;
      if (!mayHaveLanded(error)) {
        // Every try was answered, the last with a refusal: the ledger holds nothing.
        await this.#book.append({ type: 'resolved', id: movement.id, state: 'absent' });
        throw answer;
      }
      // A try went unanswered: it may have landed, or land later, whatever the last try was
      // told. The card is not written; the void that follows leaves a tombstone.
      await this.#book.append({ type: 'card', id: movement.id, outcome: 'not-written' });
      throw answer;
    }
    // After every ledger answer: is the movement still ours to continue, and is the answer a
    // pending movement of this id? Anything else is refused before the card is touched.
    if (phaseOf(movement) === 'done') throw errors.movementVoided();
    const sameId = pending.id?.toLowerCase() === movement.id.toLowerCase();
    if (!sameId || pending.state !== 'pending') {
      this.#book.log.error(
        `movement ${movement.id}: the ledger answered the create with state ${pending.state}; the card is not written`,
      );
      // A movement posted without its card write is a disagreement: the resolver's void is
      // answered "already posted", and a compensating movement follows, for the credits the
      // ledger holds (journaled here: the compensation is sized from them).
      if (sameId) {
        await this.#book.append({
          type: 'reserved',
          id: movement.id,
          credits: pending.credits,
          amount: pending.amount,
        });
      }
      await this.#abandon(movement);
      throw errors.movementVoided();
    }
    return pending;
  }

  /**
   * The card was certainly not written: void it (now, or through the outbox); a float
   * recharge is reported so, in the background.
   */
  async #abandon(movement: Movement): Promise<void> {
    await this.#book.append({ type: 'card', id: movement.id, outcome: 'not-written' });
    await this.#resolver.resolve(movement);
  }

  /**
   * Ends a request's ownership. A landed movement is posted now, in the background (on no
   * answer the outbox takes it); anything else left to post or void goes to the outbox.
   */
  release(id: string): void {
    this.#book.owned.delete(id);
    const movement = this.#book.movements.get(id);
    const phase = movement ? phaseOf(movement) : 'done';
    if (movement && phase === 'to-post' && (!this.#postBeforeAnswer || movement.float)) {
      this.#resolver
        .resolve(movement)
        .catch((error: unknown) =>
          this.#book.log.error(
            `movement ${id}: posting in the background: ${(error as Error).message}`,
          ),
        );
    } else if (phase === 'to-post' || phase === 'to-void') {
      this.#resolver.kick(0);
    }
  }
}
