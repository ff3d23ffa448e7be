import { EventEmitter } from 'node:events';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import { AppError } from '../errors.ts';
import type { MovementBook } from './movement-book.ts';
import type { Movement } from './movement-journal.ts';
import { compensationFor, phaseOf, settledByRefusal } from './movement-phases.ts';
import { Outbox } from './outbox.ts';

/** The ledger calls the engine makes (the LedgerClient, or the simulation's ledger). */
export type MovementLedger = Pick<
  LedgerClient,
  'createMovement' | 'postMovement' | 'voidMovement' | 'listPendingMovements' | 'getMovement'
>;

export interface MovementResolverEvents {
  /** The number of movements the ledger has not yet confirmed changed. */
  unconfirmed: [number];
  /** A movement is resolved at the ledger. */
  resolved: [id: string];
}

export interface MovementResolverOptions {
  ledger: MovementLedger;
  retryMs: number;
  maxRetryMs: number;
}

/**
 * The background half of the engine: posts and voids what the request path left to the outbox,
 * with the key of the shop that made each movement and this till's identity, and sets the books
 * right when the ledger's final word and the card disagree (a compensating movement, or a
 * conflict the tray shows). What to resolve after an outage is the reconciler's to find.
 */
export class MovementResolver extends EventEmitter<MovementResolverEvents> {
  readonly #book: MovementBook;
  readonly #ledger: MovementLedger;
  /** Ledger calls on their way, by movement id: one at a time per movement, shared by callers. */
  readonly #resolving = new Map<string, Promise<boolean>>();
  readonly #outbox: Outbox;

  constructor(book: MovementBook, options: MovementResolverOptions) {
    super();
    this.#book = book;
    this.#ledger = options.ledger;
    this.#outbox = new Outbox({
      clock: book.clock,
      drain: () => this.#drain(),
      retryMs: options.retryMs,
      maxRetryMs: options.maxRetryMs,
    });
  }

  /** Movements the ledger has not confirmed yet (posted or voided). */
  get unconfirmed(): number {
    let count = 0;
    for (const movement of this.#book.movements.values()) {
      if (phaseOf(movement) !== 'done') count += 1;
    }
    return count;
  }

  /** Runs the outbox soon (0: now); default: after its current backoff. */
  kick(delayMs?: number): void {
    this.#outbox.kick(delayMs);
  }

  close(): Promise<void> {
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
    if (phaseOf(movement) === 'to-create' && !(await this.#createCompensation(movement))) {
      return false;
    }
    const next = phaseOf(movement);
    if (next !== 'to-post' && next !== 'to-void') return next === 'done';
    return this.#resolveNow(movement, next === 'to-post' ? 'post' : 'void');
  }

  /**
   * The ledger's word on a movement this till left undecided, asked when its card cannot
   * decide it (or it is no longer pending): one another till or an operator decided with
   * evidence is taken as decided. True when the journal now has it resolved.
   */
  async learn(movement: Movement): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined || phaseOf(movement) !== 'uncertain') return false;
    let atLedger: LedgerMovement;
    try {
      atLedger = await this.#ledger.getMovement(apiKey, movement.id);
    } catch {
      return false;
    }
    if (atLedger.state === 'pending' || phaseOf(movement) !== 'uncertain') return false;
    const landed = atLedger.state === 'posted';
    this.#book.log.warn(
      `movement ${movement.id}: ${atLedger.state} at the ledger by ${atLedger.resolvedByTill ? `till ${atLedger.resolvedByTill}` : 'an operator'} (${atLedger.evidence ?? 'no evidence given'}); taken as decided`,
    );
    await this.#book.append({
      type: 'card',
      id: movement.id,
      outcome: landed ? 'committed' : 'not-written',
    });
    await this.#book.append({ type: 'resolved', id: movement.id, state: atLedger.state });
    this.#resolved(movement.id);
    return true;
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
      await this.send(apiKey, movement.id, action);
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
    await this.#book.append({ type: 'resolved', id: movement.id, state });
    await this.#compensate(movement, state);
    this.#resolved(movement.id);
    return true;
  }

  /** A movement is resolved: counted, told, its key perhaps free. */
  #resolved(id: string): void {
    this.emit('unconfirmed', this.unconfirmed);
    this.emit('resolved', id);
    this.releaseIdleKeys();
  }

  /** When the ledger's final word disagrees with the card: a compensating movement. */
  async #compensate(movement: Movement, ledger: 'posted' | 'voided' | 'absent'): Promise<void> {
    const compensation = compensationFor(movement, ledger);
    if (!compensation || this.#book.compensationOf(movement.id)) return;
    const id = this.#book.newId();
    this.#book.log.error(
      `movement ${movement.id}: the card ${movement.card === 'committed' ? 'holds' : 'does not hold'} it but the ledger has it ${ledger}; compensating ${compensation.kind} ${compensation.credits} (${id})`,
    );
    await this.#book.append({
      type: 'started',
      id,
      kind: compensation.kind,
      cardId: movement.cardId,
      keyFingerprint: movement.keyFingerprint,
      compensates: movement.id,
      credits: compensation.credits,
    });
    this.#outbox.kick(0);
  }

  /** Creates a compensating movement (no card write); false when the ledger did not answer. */
  async #createCompensation(movement: Movement): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) return false;
    let created: LedgerMovement;
    try {
      created = await this.#ledger.createMovement(apiKey, {
        id: movement.id,
        kind: movement.kind,
        cardId: movement.cardId,
        credits: movement.credits,
        tillId: this.#book.tillId,
        compensates: movement.compensates,
      });
    } catch (error) {
      if (!(error instanceof LedgerRefusal || (error instanceof AppError && error.status < 500))) {
        return false;
      }
      // Refused and flagged at the ledger: a conflict for the operator. An earlier try that
      // lands late is voided like any create that was sent.
      const code = error instanceof LedgerRefusal ? error.code : (error as AppError).code;
      this.#book.log.error(
        `compensating movement ${movement.id} for ${movement.compensates}: refused (${code}); the card is flagged for the operator`,
      );
      await this.#book.append({ type: 'conflict', id: movement.id, detail: code });
      await this.#book.append({ type: 'card', id: movement.id, outcome: 'not-written' });
      return true;
    }
    await this.#book.append({
      type: 'reserved',
      id: movement.id,
      credits: created.credits,
      amount: created.amount,
    });
    // Nothing is written: the card already holds what this movement records.
    await this.#book.append({ type: 'card', id: movement.id, outcome: 'committed' });
    return true;
  }

  /** Posts or voids at the ledger as this till, whatever the journal says (reconciliation). */
  send(apiKey: string, id: string, action: 'post' | 'void'): Promise<LedgerMovement> {
    const by = { tillId: this.#book.tillId };
    return action === 'post'
      ? this.#ledger.postMovement(apiKey, id, by)
      : this.#ledger.voidMovement(apiKey, id, by);
  }

  /** One outbox pass: everything left to create, post or void that no request owns. */
  async #drain(): Promise<boolean> {
    let allDone = true;
    for (const movement of [...this.#book.movements.values()]) {
      const phase = phaseOf(movement);
      if (phase === 'done' || phase === 'uncertain') continue;
      if (this.#book.owned.has(movement.id)) continue;
      allDone = (await this.resolve(movement)) && allDone;
    }
    return allDone;
  }
}
