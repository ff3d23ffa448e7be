import { EventEmitter } from 'node:events';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import { Compensations } from './compensations.ts';
import { occurredAtOf, type Movement } from './journal-entries.ts';
import { LedgerWord } from './ledger-word.ts';
import type { MovementBook } from './movement-book.ts';
import { phaseOf, settledByRefusal } from './movement-phases.ts';
import { Outbox } from './outbox.ts';

/** The ledger calls the engine makes (the LedgerClient, or the simulation's ledger). */
export type MovementLedger = Pick<
  LedgerClient,
  | 'createMovement'
  | 'postMovement'
  | 'voidMovement'
  | 'listPendingMovements'
  | 'getMovement'
  | 'getCardAccount'
>;

export interface MovementResolverEvents {
  /** The number of movements the ledger has not yet confirmed changed. */
  unconfirmed: [number];
  /** A movement is resolved at the ledger. */
  resolved: [id: string];
  /** The outbox went once through what it holds (what it sent is answered or given up). */
  outboxPassed: [];
}

export interface MovementResolverOptions {
  ledger: MovementLedger;
  retryMs: number;
  maxRetryMs: number;
  /**
   * Float recharges are not posted or voided: they are reported (FloatReporter, in batches,
   * in the background). Asked to resolve one, the resolver has it reported soon.
   */
  reportFloat?: () => void;
}

/**
 * The background half of the engine: posts and voids what the request path left to the outbox,
 * with the key of the shop that made each movement and this till's identity. Where the
 * ledger's final word and the card disagree, Compensations sets the books right (or records a
 * conflict the tray shows); LedgerWord takes the ledger's word on what the card could not
 * decide. What to resolve after an outage is the reconciler's to find.
 */
export class MovementResolver extends EventEmitter<MovementResolverEvents> {
  readonly #book: MovementBook;
  readonly #ledger: MovementLedger;
  /** Ledger calls on their way, by movement id: one at a time per movement, shared by callers. */
  readonly #resolving = new Map<string, Promise<boolean>>();
  readonly #outbox: Outbox;
  readonly #compensations: Compensations;
  readonly #word: LedgerWord;
  readonly #reportFloat: (() => void) | undefined;
  #closed = false;

  constructor(book: MovementBook, options: MovementResolverOptions) {
    super();
    this.#book = book;
    this.#ledger = options.ledger;
    this.#reportFloat = options.reportFloat;
    this.#outbox = new Outbox({
      clock: book.clock,
      drain: () => this.#drain(),
      retryMs: options.retryMs,
      maxRetryMs: options.maxRetryMs,
    });
    this.#compensations = new Compensations(book, options.ledger, (delayMs) =>
      this.#outbox.kick(delayMs),
    );
    this.#word = new LedgerWord(
      book,
      options.ledger,
      {
        resolve: (movement) => this.resolve(movement),
        resolveOnEvidence: (...args) => this.resolveOnEvidence(...args),
        resolved: (id) => this.#resolved(id),
      },
      this.#compensations,
    );
  }

  /** Movements the ledger has not confirmed yet (posted or voided). */
  get unconfirmed(): number {
    let count = 0;
    for (const movement of this.#book.movements.values()) {
      if (phaseOf(movement) !== 'done') count += 1;
    }
    return count;
  }

  /** A compensating movement of `movement`, when its card and the ledger's word disagree. */
  compensate(movement: Movement, ledger: 'posted' | 'voided' | 'absent'): Promise<void> {
    return this.#compensations.compensate(movement, ledger);
  }

  /** Runs the outbox soon (0: now); default: after its current backoff. */
  kick(delayMs?: number): void {
    this.#outbox.kick(delayMs);
  }

  /**
   * Stops the outbox. A pass in flight ends with the ledger call it waits on: what is left stays
   * in the journal for the next start, so closing (the tray quitting, an update) waits for one
   * call, not for a pass over every movement against a ledger that may hang.
   */
  close(): Promise<void> {
    this.#closed = true;
    return this.#outbox.close();
  }

  /** Forgets every earlier key no unresolved movement needs (KeyRing "released"). */
  releaseIdleKeys(): void {
    this.#book.keys.releaseIdle((print) => this.#book.keyInUse(print));
  }

  /**
   * Moves a movement on at the ledger by its phase: posts, voids, or creates a compensating
   * movement (then posts it). On no answer, leaves it to the outbox. True when done.
   */
  resolve(movement: Movement): Promise<boolean> {
    const phase = phaseOf(movement);
    if (phase === 'done' || phase === 'uncertain') return Promise.resolve(phase === 'done');
    if (movement.float) {
      // Never waited for: a float recharge's answer and card are final without the ledger.
      this.#reportFloat?.();
      return Promise.resolve(false);
    }
    // One on its way already (the background post after an answer, say): its outcome is this one.
    const running = this.#resolving.get(movement.id);
    if (running) return running;
    const resolving = this.#resolveByPhase(movement).finally(() =>
      this.#resolving.delete(movement.id),
    );
    this.#resolving.set(movement.id, resolving);
    return resolving;
  }

  async #resolveByPhase(movement: Movement): Promise<boolean> {
    if (phaseOf(movement) === 'to-create' && !(await this.#compensations.create(movement))) {
      return false;
    }
    const next = phaseOf(movement);
    if (next !== 'to-post' && next !== 'to-void') return next === 'done';
    return this.#resolveNow(movement, next === 'to-post' ? 'post' : 'void');
  }

  /**
   * Creates and posts what this till holds to post of a card (a recharge answered before its
   * post was confirmed, a compensation), that no running request owns: before a payout's
   * create, so that the ledger's check of the card's account counts it. True when none is left.
   */
  async postCard(cardId: string): Promise<boolean> {
    let posted = true;
    for (const movement of [...this.#book.movements.values()]) {
      if (movement.cardId !== cardId || movement.float || this.#book.owned.has(movement.id)) {
        continue;
      }
      const phase = phaseOf(movement);
      if (phase === 'to-post' || phase === 'to-create') {
        posted = (await this.resolve(movement)) && posted;
      }
    }
    return posted;
  }

  /** The ledger's word on an undecided movement (LedgerWord.learn). */
  learn(movement: Movement, options: { cardSeen: boolean }): Promise<boolean> {
    return this.#word.learn(movement, options);
  }

  /** What the card shows of a movement whose outcome was learnt (LedgerWord.seen). */
  seen(movement: Movement, outcome: 'committed' | 'not-written' | undefined): Promise<void> {
    return this.#word.seen(movement, outcome);
  }

  /** Whether the card may decide a learnt movement (LedgerWord.cardMayDecide). */
  cardMayDecide(movement: Movement): Promise<boolean> {
    return this.#word.cardMayDecide(movement);
  }

  /** Whether another till's compensation made a write the card could not tell count. */
  compensatedSince(movement: Movement): Promise<boolean | undefined> {
    return this.#compensations.compensatedSince(movement);
  }

  /** A learnt movement its card can no longer decide (LedgerWord.ledgerWordStands). */
  ledgerWordStands(movement: Movement): Promise<void> {
    return this.#word.ledgerWordStands(movement);
  }

  /** An operator's word given without the card, decided from it now (LedgerWord.cardDecides). */
  cardDecides(
    apiKey: string,
    atLedger: LedgerMovement,
    shows: 'committed' | 'not-written' | undefined,
    evidence: string,
  ): Promise<Movement | undefined> {
    return this.#word.cardDecides(apiKey, atLedger, shows, evidence);
  }

  /**
   * Posts or voids another till's movement on evidence (an operator's decision at this till,
   * from the card on the reader): the ledger keeps the evidence with it.
   */
  async resolveOnEvidence(
    apiKey: string,
    id: string,
    action: 'post' | 'void',
    evidence: string,
  ): Promise<LedgerMovement> {
    const by = { tillId: this.#book.tillId, evidence };
    return action === 'post'
      ? this.#ledger.postMovement(apiKey, id, by)
      : this.#ledger.voidMovement(apiKey, id, by);
  }

  async #resolveNow(movement: Movement, action: 'post' | 'void'): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) {
      this.#book.log.error(
        `movement ${movement.id}: the key that made it (fingerprint ${movement.keyFingerprint}) is no longer held; set it again to ${action} it`,
      );
      return false;
    }
    let state: 'posted' | 'voided' | 'absent';
    try {
      await this.send(apiKey, movement.id, action, occurredAtOf(movement));
      state = action === 'post' ? 'posted' : 'voided';
    } catch (error) {
      const settledAs = settledByRefusal(error, action);
      if (!settledAs) {
        if (error instanceof LedgerRefusal) {
          this.#book.log.error(
            `movement ${movement.id}: the ledger refused to ${action} it (${error.code}); retrying in the background`,
          );
        } else {
          this.#book.log.warn(
            `movement ${movement.id}: ledger did not confirm; retrying in the background`,
          );
        }
        this.emit('unconfirmed', this.unconfirmed);
        if (!this.#book.owned.has(movement.id)) this.#outbox.kick();
        return false;
      }
      state = settledAs;
    }
    // The compensation before the resolved line (Compensations.compensate): after a crash
    // between the two, the movement is resolved again, and finds its compensation made.
    await this.#compensations.compensate(movement, state);
    await this.#book.append({ type: 'resolved', id: movement.id, state });
    this.#resolved(movement.id);
    return true;
  }

  /** A movement is resolved: counted, told, its key perhaps free. */
  #resolved(id: string): void {
    this.emit('unconfirmed', this.unconfirmed);
    this.emit('resolved', id);
    this.releaseIdleKeys();
  }

  /**
   * Posts or voids at the ledger as this till, whatever the journal says (reconciliation); a
   * post says when the movement happened, when known.
   */
  send(
    apiKey: string,
    id: string,
    action: 'post' | 'void',
    occurredAt?: string,
  ): Promise<LedgerMovement> {
    const by = {
      tillId: this.#book.tillId,
      ...(action === 'post' && occurredAt !== undefined ? { occurredAt } : {}),
    };
    return action === 'post'
      ? this.#ledger.postMovement(apiKey, id, by)
      : this.#ledger.voidMovement(apiKey, id, by);
  }

  /** One outbox pass: everything left to create, post or void that no request owns. */
  async #drain(): Promise<boolean> {
    let allDone = true;
    for (const movement of [...this.#book.movements.values()]) {
      if (this.#closed) return false;
      const phase = phaseOf(movement);
      if (phase === 'done' || phase === 'uncertain' || movement.float) continue;
      if (this.#book.owned.has(movement.id)) continue;
      allDone = (await this.resolve(movement)) && allDone;
    }
    this.emit('outboxPassed');
    return allDone;
  }
}
