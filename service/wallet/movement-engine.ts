import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { CardSession } from '../card/card-session.ts';
import { decideWrite, type PlannedWrite, type WriteIntent } from '../card/wallet-format.ts';
import {
  LedgerRefusal,
  type LedgerClient,
  type LedgerMovement,
  type NewMovement,
} from '../cloud/ledger-client.ts';
import { AppError, errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { MovementJournal } from './movement-journal.ts';
import {
  ANSWER_RETENTION_MS,
  phaseOf,
  type Idempotency,
  type Movement,
  type MovementKind,
} from './movement-journal.ts';

export interface MovementEngineOptions {
  journal: MovementJournal;
  ledger: LedgerClient;
  /** The key the ledger calls are made with (the till's configured key). */
  apiKey: () => string;
  log: Logger;
  /** First retry delay of the outbox; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

export interface MovementEngineEvents {
  /** The number of movements the ledger has not yet confirmed changed. */
  unconfirmed: [number];
}

/** The spec's 200 bodies of the two card-writing endpoints. */
export type RechargeAnswer = { cardId: string; credits: number; rechargeAmount: number };
export type DischargeAnswer = {
  cardId: string;
  dischargedCredits: number;
  dischargedAmount: number;
};

/** What the caller is told for a movement that landed on the card. */
export function answerOf(movement: Movement): RechargeAnswer | DischargeAnswer {
  const reserved = movement.reserved;
  if (!reserved) throw new Error(`movement ${movement.id} has no reservation`);
  // The ledger's amounts are exact decimal strings; JSON carries them as numbers (spec).
  const amount = Number(reserved.amount);
  return movement.kind === 'recharge'
    ? { cardId: movement.cardId, credits: reserved.intent.value, rechargeAmount: amount }
    : { cardId: movement.cardId, dischargedCredits: reserved.credits, dischargedAmount: amount };
}

export interface Reservation {
  movement: Movement;
  ledger: LedgerMovement;
  plan: PlannedWrite;
}

/**
 * The two-phase money movement of design.md section 4, step by step. Each step is journaled
 * durably before the next happens; whatever a crash, a pulled card or a silent ledger leaves
 * half done is finished later, exactly once: a write that certainly did not happen is voided;
 * one that did is posted; one that may have is decided by the card itself the next time it is
 * seen. Posts and voids the ledger did not acknowledge are retried (the outbox) until it does.
 */
export class MovementEngine extends EventEmitter<MovementEngineEvents> {
  readonly #journal: MovementJournal;
  readonly #ledger: LedgerClient;
  readonly #apiKey: () => string;
  readonly #log: Logger;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #running = new Set<string>();
  #outboxTimer: NodeJS.Timeout | undefined;
  #outboxDelay: number;
  #outboxRun: Promise<void> | undefined;
  #closed = false;

  constructor(options: MovementEngineOptions) {
    super();
    this.#journal = options.journal;
    this.#ledger = options.ledger;
    this.#apiKey = options.apiKey;
    this.#log = options.log;
    this.#retryMs = options.retryMs ?? 1_000;
    this.#maxRetryMs = options.maxRetryMs ?? 60_000;
    this.#outboxDelay = this.#retryMs;
  }

  /** Movements the ledger has not confirmed yet (posted or voided), for the tray. */
  get unconfirmed(): number {
    let count = 0;
    for (const movement of this.#journal.movements.values()) {
      if (phaseOf(movement) !== 'done') count += 1;
    }
    return count;
  }

  /** Cards holding a write whose outcome is not known yet. */
  get uncertainCards(): Set<string> {
    const cards = new Set<string>();
    for (const movement of this.#journal.movements.values()) {
      if (phaseOf(movement) === 'uncertain') cards.add(movement.cardId);
    }
    return cards;
  }

  /** Starts the outbox for what the journal left unconfirmed. */
  start(): void {
    this.#kickOutbox(0);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#outboxTimer);
    await this.#outboxRun;
  }

  /**
   * Runs a request under an Idempotency-Key (when given): a repeat with the same body replays
   * the first success without touching the card; another body is 422; a repeat while the
   * first still runs is 409. Failures are not replayed: nothing moved, the caller may retry.
   */
  async idempotent<T>(
    idempotency: Idempotency | undefined,
    run: (idempotency: Idempotency | undefined) => Promise<T>,
  ): Promise<T> {
    if (!idempotency) return run(undefined);
    if (this.#running.has(idempotency.scope)) {
      throw new AppError('IdempotencyKeyInUse', 409, 'A request with this key is still running');
    }
    const earlier = this.#latestFor(idempotency.scope);
    if (earlier?.idempotency && earlier.idempotency.requestHash !== idempotency.requestHash) {
      throw new AppError('IdempotencyKeyReused', 422, 'This key was used with another request');
    }
    if (earlier?.answer && Date.now() - Date.parse(earlier.answer.at) < ANSWER_RETENTION_MS) {
      return earlier.answer.body as T;
    }
    this.#running.add(idempotency.scope);
    try {
      return await run(idempotency);
    } finally {
      this.#running.delete(idempotency.scope);
    }
  }

  /**
   * For a retry under the same Idempotency-Key, after settle(): the answer when the earlier
   * attempt's write turned out to have landed. An earlier attempt still undecided on another
   * card stops this one (the caller must present that card).
   */
  earlierAnswer<T>(idempotency: Idempotency | undefined, cardId: string): T | undefined {
    if (!idempotency) return undefined;
    const earlier = this.#latestFor(idempotency.scope);
    if (!earlier) return undefined;
    if (phaseOf(earlier) === 'uncertain' && earlier.cardId !== cardId) {
      throw errors.movementUnsettled();
    }
    return earlier.answer?.body as T | undefined;
  }

  /**
   * Decides every earlier uncertain write on the card in `session` by what the card holds,
   * then posts or voids it. Called before any new movement on a card, and when a card with an
   * uncertain write is presented. A write the card cannot decide stops new writes to it.
   */
  async settle(session: CardSession): Promise<void> {
    const uncertain = [...this.#journal.movements.values()].filter(
      (movement) => movement.cardId === session.cardId && phaseOf(movement) === 'uncertain',
    );
    if (uncertain.length === 0) return;
    const [slot0, slot1] = await session.readSlots();
    for (const movement of uncertain) {
      const intent = (movement.reserved as { intent: WriteIntent }).intent;
      const outcome = decideWrite(intent, slot0, slot1);
      if (outcome === 'unknown') {
        this.#log.error(
          `movement ${movement.id} on card ${movement.cardId}: the card shows neither the old nor the new balance; left for the operator`,
        );
        throw errors.movementUnsettled();
      }
      const written = outcome === 'committed';
      await this.#journal.append({
        type: 'card',
        id: movement.id,
        outcome: written ? 'committed' : 'not-written',
        at: now(),
      });
      this.#log.info(
        `movement ${movement.id}: card shows it ${written ? 'landed' : 'did not land'}`,
      );
      if (written) await this.answered(movement);
      await this.#resolve(movement);
    }
  }

  /** Journals the start of a movement: nothing has happened anywhere yet. */
  async begin(
    kind: MovementKind,
    cardId: string,
    keyFingerprint: string,
    idempotency: Idempotency | undefined,
  ): Promise<Movement> {
    const id = randomUUID();
    await this.#journal.append({
      type: 'started',
      id,
      kind,
      cardId,
      keyFingerprint,
      idempotency,
      at: now(),
    });
    return this.#journal.movements.get(id) as Movement;
  }

  /**
   * Asks the ledger for the pending movement (a recharge reserves the shop's credits), plans
   * the card write for the credits it granted, and journals both before the card is touched.
   * A refusal (NoCredits...) ends the movement: nothing is held. No answer at all: the ledger
   * may hold it, so it is voided in the background. Either way the card is not written.
   */
  async reserve(
    movement: Movement,
    request: Omit<NewMovement, 'id' | 'kind' | 'cardId'>,
    planFor: (credits: number) => PlannedWrite,
  ): Promise<Reservation> {
    let pending: LedgerMovement;
    try {
      pending = await this.#ledger.createMovement(this.#apiKey(), {
        id: movement.id,
        kind: movement.kind,
        cardId: movement.cardId,
        ...request,
      });
    } catch (error) {
      if (error instanceof LedgerRefusal || isAuthRefusal(error)) {
        await this.#journal.append({
          type: 'resolved',
          id: movement.id,
          state: 'absent',
          at: now(),
        });
      } else {
        await this.#abandon(movement);
      }
      throw error;
    }
    let plan: PlannedWrite;
    try {
      plan = planFor(pending.credits);
    } catch (error) {
      await this.#abandon(movement);
      throw error;
    }
    const { slot, value, generation, previousBalance } = plan;
    await this.#journal.append({
      type: 'reserved',
      id: movement.id,
      credits: pending.credits,
      amount: pending.amount,
      intent: { slot, value, generation, previousBalance },
      at: now(),
    });
    return { movement, ledger: pending, plan };
  }

  /**
   * Writes the planned block and settles what that means: landed, post it; certainly not,
   * void it and fail with the card's error; unknown (the card left mid-write), leave it to be
   * decided on the card and fail with CardRemovedDuringWrite.
   */
  async writeCard(reservation: Reservation, session: CardSession): Promise<void> {
    const { movement, plan } = reservation;
    const result = await session.writeSlot(plan);
    if (result.outcome === 'uncertain') {
      this.#log.warn(`movement ${movement.id}: card write uncertain (${result.error.code})`);
      throw errors.cardRemovedDuringWrite(result.error);
    }
    const written = result.outcome === 'committed';
    await this.#journal.append({
      type: 'card',
      id: movement.id,
      outcome: written ? 'committed' : 'not-written',
      at: now(),
    });
    if (!written) {
      await this.#resolve(movement);
      throw result.error;
    }
  }

  /** Confirms a written movement to the ledger; if it does not answer, the outbox will. */
  async confirm(movement: Movement): Promise<void> {
    await this.#resolve(movement);
  }

  /** Records the answer for a landed movement, so the same Idempotency-Key replays it. */
  async answered(movement: Movement): Promise<RechargeAnswer | DischargeAnswer> {
    const body = answerOf(movement);
    await this.#journal.append({ type: 'answered', id: movement.id, status: 200, body, at: now() });
    return body;
  }

  async #abandon(movement: Movement): Promise<void> {
    await this.#journal.append({
      type: 'card',
      id: movement.id,
      outcome: 'not-written',
      at: now(),
    });
    await this.#resolve(movement);
  }

  /** Posts or voids by the movement's phase; on no answer, leaves it to the outbox. */
  async #resolve(movement: Movement): Promise<boolean> {
    const phase = phaseOf(movement);
    if (phase !== 'to-post' && phase !== 'to-void') return phase === 'done';
    try {
      const post = phase === 'to-post';
      const key = this.#apiKey();
      if (post) await this.#ledger.postMovement(key, movement.id);
      else await this.#ledger.voidMovement(key, movement.id);
      await this.#journal.append({
        type: 'resolved',
        id: movement.id,
        state: post ? 'posted' : 'voided',
        at: now(),
      });
      this.emit('unconfirmed', this.unconfirmed);
      return true;
    } catch (error) {
      if (
        error instanceof LedgerRefusal &&
        error.code === 'MovementNotFound' &&
        phase === 'to-void'
      ) {
        // The pending call never reached the ledger: there is nothing to void.
        await this.#journal.append({
          type: 'resolved',
          id: movement.id,
          state: 'absent',
          at: now(),
        });
        this.emit('unconfirmed', this.unconfirmed);
        return true;
      }
      if (error instanceof LedgerRefusal) {
        this.#log.error(
          `movement ${movement.id}: the ledger refused to ${phase === 'to-post' ? 'post' : 'void'} it (${error.code}); left for the operator`,
        );
      } else {
        this.#log.warn(
          `movement ${movement.id}: ledger did not confirm; retrying in the background`,
        );
      }
      this.emit('unconfirmed', this.unconfirmed);
      this.#kickOutbox(this.#outboxDelay);
      return false;
    }
  }

  #kickOutbox(delayMs: number): void {
    if (this.#closed || this.#outboxTimer) return;
    this.#outboxTimer = setTimeout(() => {
      this.#outboxTimer = undefined;
      this.#outboxRun = this.#drainOutbox().finally(() => (this.#outboxRun = undefined));
    }, delayMs);
    this.#outboxTimer.unref();
  }

  async #drainOutbox(): Promise<void> {
    let allDone = true;
    for (const movement of [...this.#journal.movements.values()]) {
      if (this.#closed) return;
      const phase = phaseOf(movement);
      if (phase !== 'to-post' && phase !== 'to-void') continue;
      if (this.#running.has(movement.idempotency?.scope ?? '')) continue;
      const done = await this.#resolve(movement);
      allDone &&= done;
    }
    if (allDone) {
      this.#outboxDelay = this.#retryMs;
      return;
    }
    this.#outboxDelay = Math.min(this.#outboxDelay * 2, this.#maxRetryMs);
    this.#kickOutbox(this.#outboxDelay);
  }

  #latestFor(scope: string): Movement | undefined {
    let latest: Movement | undefined;
    for (const movement of this.#journal.movements.values()) {
      if (movement.idempotency?.scope === scope) latest = movement;
    }
    return latest;
  }
}

function isAuthRefusal(error: unknown): boolean {
  return error instanceof AppError && error.status < 500;
}

function now(): string {
  return new Date().toISOString();
}
