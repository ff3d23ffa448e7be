import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { CardSuspicion, WalletCard, WriteIntent } from '../card/card-face.ts';
import type { LedgerMovement } from '../cloud/ledger-client.ts';
import type { Logger } from '../logger.ts';
import {
  AnswerStore,
  type DischargeAnswer,
  type RechargeAnswer,
  type UndoAnswer,
} from './answer-store.ts';
import { systemClock, type Clock } from './clock.ts';
import type { KeyRing } from './key-ring.ts';
import { MovementBook } from './movement-book.ts';
import type { Idempotency, Movement } from './journal-entries.ts';
import type { MovementJournal } from './movement-journal.ts';
import { CardSettlement, type SuspectWallet } from './card-settlement.ts';
import { MovementRequests, type Reservation, type ReserveInput } from './movement-requests.ts';
import { MovementReconciler, type WaitingMovement } from './movement-reconciler.ts';
import { MovementResolver, type MovementLedger } from './movement-resolver.ts';
import { RECONCILE_EVERY_MS, UNCERTAIN_MOVEMENT_BOUND_MS } from './reconcile-schedule.ts';
import type { FloatKeeperOptions } from './float-keeper.ts';
import { startFloatSale, type FloatSaleInput } from './float-sale.ts';
import { TillFloats, type TillFloatsLedger } from './till-floats.ts';

export { answerOf } from './answer-store.ts';
export type { DischargeAnswer, RechargeAnswer, UndoAnswer } from './answer-store.ts';
export type { Reservation, ReserveInput } from './movement-requests.ts';
export type { WaitingMovement } from './movement-reconciler.ts';
export type { MovementLedger } from './movement-resolver.ts';

export interface MovementEngineEvents {
  /** The number of movements the ledger has not yet confirmed changed. */
  unconfirmed: [number];
  /** The movements pending at the ledger that wait (for their card, another till) changed. */
  waitingForCard: [readonly WaitingMovement[]];
  /** A card read here is suspect: its newest movement record does not explain it. */
  cardSuspect: [{ cardId: string; credits: number; suspicion: CardSuspicion }];
  /** The outbox went once through what it holds (for monitoring and tests). */
  outboxPassed: [];
}

export interface MovementEngineOptions {
  journal: MovementJournal;
  ledger: MovementLedger;
  /** The keys movements are made and resolved with (each with the key that made it). */
  keys: KeyRing;
  /** This till's identity at the ledger (a UUID kept for good; docs/cloud-api.md, "Tills"). */
  tillId: string;
  log: Logger;
  clock?: Clock;
  newId?: () => string;
  /** First retry delay of the outbox; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  reconcileEveryMs?: number;
  /** A movement waiting for its card this long is shown as overdue, for an operator. */
  uncertainMovementBoundMs?: number;
  /**
   * The ledger's float calls, when this till sells from a float (docs/integrators.md, "When the
   * internet drops"); without them, every recharge is reserved at the ledger.
   */
  floats?: Omit<FloatKeeperOptions, 'ledger'> & { ledger: TillFloatsLedger };
  /**
   * Whether the caller's answer waits for the ledger's post (true), or comes once the card's
   * read-back proves the write (default), the post following in the background, and through
   * the outbox if the ledger does not acknowledge it.
   */
  postBeforeAnswer?: boolean;
}

/**
 * The two-phase money movement (docs/integrators.md, "Recharge" and "Discharge"), as the use
 * cases see it: one face over five parts. MovementRequests takes a movement from its start to
 * the card's answer (reserve, commit); CardSettlement decides earlier writes by what the card
 * holds (settle); AnswerStore runs Idempotency-Key requests and replays their answers as the
 * ledger's final word allows; MovementResolver posts and voids in the background (the outbox;
 * Compensations and LedgerWord under it); MovementReconciler finds what the ledger holds
 * pending; movement-phases.ts holds their pure decisions. Each step is journaled durably before
 * the next, so whatever a crash, a pulled card or a silent ledger leaves half done is finished
 * later, exactly once, by this till only.
 */
export class MovementEngine extends EventEmitter<MovementEngineEvents> {
  readonly #book: MovementBook;
  readonly #requests: MovementRequests;
  readonly #settlement: CardSettlement;
  readonly #answers: AnswerStore;
  readonly #resolver: MovementResolver;
  readonly #reconciler: MovementReconciler;
  /** The till float, when this till sells from one. */
  readonly floats: TillFloats | undefined;

  constructor(options: MovementEngineOptions) {
    super();
    this.#book = new MovementBook({
      journal: options.journal,
      tillId: options.tillId,
      keys: options.keys,
      clock: options.clock ?? systemClock,
      log: options.log,
      newId: options.newId ?? randomUUID,
    });
    const retry = { retryMs: options.retryMs ?? 1_000, maxRetryMs: options.maxRetryMs ?? 60_000 };
    // A float recharge its card holds, voided at the ledger, is compensated by the resolver's.
    const compensate = (movement: Movement, ledger: 'voided') =>
      this.#resolver.compensate(movement, ledger);
    // A found recharge an operator voided without its card, which showed it: set right here.
    const settleFound = {
      getMovement: (apiKey: string, id: string) => options.ledger.getMovement(apiKey, id),
      cardDecides: async (apiKey: string, atLedger: LedgerMovement, evidence: string) => {
        await this.#resolver.cardDecides(apiKey, atLedger, 'committed', evidence);
        this.#resolver.kick();
      },
    };
    this.floats =
      options.floats &&
      new TillFloats(this.#book, { ...options.floats, ...retry, compensate, settleFound });
    const floats = this.floats;
    this.#resolver = new MovementResolver(this.#book, {
      ledger: options.ledger,
      ...retry,
      ...(floats ? { reportFloat: () => floats.reporter.kick(0) } : {}),
    });
    this.#reconciler = new MovementReconciler(this.#book, this.#resolver, {
      ledger: options.ledger,
      reconcileEveryMs: options.reconcileEveryMs ?? RECONCILE_EVERY_MS,
      uncertainMovementBoundMs: options.uncertainMovementBoundMs ?? UNCERTAIN_MOVEMENT_BOUND_MS,
    });
    this.#answers = new AnswerStore(this.#book, this.#resolver);
    this.#settlement = new CardSettlement(
      this.#book,
      this.#resolver,
      this.#answers,
      options.ledger,
    );
    this.#requests = new MovementRequests(
      this.#book,
      options.ledger,
      this.#resolver,
      this.#answers,
      this.#settlement,
      options.postBeforeAnswer ?? false,
    );
    this.#resolver.on('unconfirmed', (count) => this.emit('unconfirmed', count));
    this.#resolver.on('outboxPassed', () => this.emit('outboxPassed'));
    this.#reconciler.on('waitingForCard', (waiting) => this.emit('waitingForCard', waiting));
  }

  get tillId(): string {
    return this.#book.tillId;
  }

  /** This till's clock (a cashier's undo window counts by it). */
  get clock(): Clock {
    return this.#book.clock;
  }

  /** Movements the ledger has not confirmed yet (posted or voided), for the tray. */
  get unconfirmed(): number {
    return this.#resolver.unconfirmed;
  }

  /** Cards holding a write whose outcome is not known yet. */
  get uncertainCards(): Set<string> {
    return this.#settlement.uncertainCards;
  }

  /** Pending at the ledger and waiting (for their card, or another till), as last reconciled. */
  get waitingForCard(): readonly WaitingMovement[] {
    return this.#reconciler.waiting;
  }

  /** This till's journal's record of a movement, if it still keeps it (a receipt's lookup). */
  journaled(id: string): Movement | undefined {
    return this.#book.movements.get(id.toLowerCase());
  }

  /** The movements this till's journal keeps. */
  get journal(): Iterable<Movement> {
    return this.#book.movements.values();
  }

  /** The movement that set right this one's disagreement with its card, if this till made it. */
  compensationOf(id: string): Movement | undefined {
    return this.#book.compensationOf(id);
  }

  /** Compensating movements the ledger refused: cards whose books an operator must set right. */
  get conflicts(): readonly Movement[] {
    return [...this.#book.movements.values()].filter((m) => m.conflict !== undefined);
  }

  /** Starts the outbox, reconciliation and the float for what the journal and the ledger hold. */
  start(): void {
    this.#resolver.kick(0);
    this.#reconciler.soon();
    this.floats?.start();
  }

  /** Reconciles soon, e.g. when the ledger answers again after an outage. */
  reconcileSoon(): void {
    this.#reconciler.soon();
  }

  reconcile(): Promise<void> {
    return this.#reconciler.reconcile();
  }

  async close(): Promise<void> {
    await this.floats?.close();
    await this.#reconciler.close();
    await this.#resolver.close();
  }

  /**
   * The operator replaced `apiKey`: it is kept (in memory, never in the journal) until the
   * movements made with it are resolved, then released (KeyRing "released").
   */
  retireKey(apiKey: string): void {
    this.#book.keys.retire(apiKey, (print) => this.#book.keyInUse(print));
    this.#resolver.kick(0);
  }

  idempotent<T>(
    idempotency: Idempotency | undefined,
    run: (idempotency: Idempotency | undefined) => Promise<T>,
  ): Promise<T> {
    return this.#answers.idempotent(idempotency, run);
  }

  replay<T>(idempotency: Idempotency | undefined, cardId: string): Promise<T | undefined> {
    return this.#answers.replay<T>(idempotency, cardId);
  }

  settle(card: WalletCard): Promise<void> {
    return this.#settlement.settle(card);
  }

  /** The wallet on `card`; a suspect card is said (`cardSuspect`) for the operator. */
  async readWallet(card: WalletCard): Promise<SuspectWallet> {
    const wallet = await this.#settlement.readWallet(card);
    if (wallet.suspect) {
      this.emit('cardSuspect', {
        cardId: wallet.cardId,
        credits: wallet.balance,
        suspicion: wallet.suspect,
      });
    }
    return wallet;
  }

  tornProof(cardId: string): WriteIntent | undefined {
    return this.#settlement.tornProof(cardId);
  }

  /** Posts this till's movements of a card still to post (MovementResolver.postCard). */
  postCard(cardId: string): Promise<boolean> {
    return this.#resolver.postCard(cardId);
  }

  reserve(card: WalletCard, input: ReserveInput): Promise<Reservation> {
    return this.#requests.reserve(card, input);
  }

  /** Begins a recharge paid from the float (float-sale.ts); commit() writes and answers it. */
  sellFromFloat(card: WalletCard, input: FloatSaleInput): Promise<Reservation> {
    return startFloatSale(this.#book, card, input, (id) => this.#requests.release(id));
  }

  commit<T extends RechargeAnswer | DischargeAnswer | UndoAnswer>(
    reservation: Reservation,
    card: WalletCard,
  ): Promise<T> {
    return this.#requests.commit<T>(reservation, card);
  }

  /** An operator's word given without the card, decided by the card (CardSettlement.decideHeld). */
  decideHeld(
    card: WalletCard,
    apiKey: string,
    atLedger: LedgerMovement,
    listed: readonly LedgerMovement[],
  ): Promise<{ compensation: Movement | undefined }> {
    return this.#settlement.decideHeld(card, apiKey, atLedger, listed);
  }

  /** Posts or voids another till's movement on evidence (POST /cards/settle). */
  resolveOnEvidence(
    apiKey: string,
    id: string,
    action: 'post' | 'void',
    evidence: string,
  ): Promise<LedgerMovement> {
    return this.#resolver.resolveOnEvidence(apiKey, id, action, evidence);
  }
}
