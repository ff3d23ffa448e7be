import { EventEmitter } from 'node:events';
import { balanceBefore, isKnownBefore, planWrite } from '../card/wallet-card.ts';
import type { LedgerMovement } from '../cloud/ledger-client.ts';
import type { MovementBook } from './movement-book.ts';
import { occurredAtOf, type Movement } from './journal-entries.ts';
import { balanceAfterWrite, decidePending, phaseOf } from './movement-phases.ts';
import type { MovementLedger, MovementResolver } from './movement-resolver.ts';
import { ReconcileSchedule } from './reconcile-schedule.ts';

/** A movement pending at the ledger that waits for its card, or for another till. */
export interface WaitingMovement {
  id: string;
  kind: LedgerMovement['kind'];
  cardId: string;
  credits: number;
  since: string;
  /** This till's (its card decides it here), another till's, or this till's unknown one. */
  owner: 'this-till' | 'other-till' | 'operator';
  /**
   * Waiting longer than the bound (uncertainMovementBoundMs): an operator should look. Never
   * for another till's movement, but for its compensation (no card decides one).
   */
  overdue: boolean;
}

export interface MovementReconcilerOptions {
  ledger: MovementLedger;
  reconcileEveryMs: number;
  /** A movement waiting for its card this long is listed as overdue, for an operator. */
  uncertainMovementBoundMs: number;
}

/**
 * Reconciliation (docs/integrators.md, "Reconciliation"): at start, periodically and after an
 * outage, the ledger's pending movements of every shop this till holds a key for are compared
 * with the journal. This till's are handed to the resolver or left to their card; other tills'
 * are listed, never resolved; one this till made but its journal lost is adopted and left to
 * its card. What waits is listed for the tray, overdue past the bound.
 */
export class MovementReconciler extends EventEmitter<{
  waitingForCard: [readonly WaitingMovement[]];
}> {
  readonly #book: MovementBook;
  readonly #resolver: MovementResolver;
  readonly #ledger: MovementLedger;
  readonly #boundMs: number;
  readonly #schedule: ReconcileSchedule;
  readonly #overdueLogged = new Set<string>();
  #waiting: WaitingMovement[] = [];

  constructor(book: MovementBook, resolver: MovementResolver, options: MovementReconcilerOptions) {
    super();
    this.#book = book;
    this.#resolver = resolver;
    this.#ledger = options.ledger;
    this.#boundMs = options.uncertainMovementBoundMs;
    this.#schedule = new ReconcileSchedule(book.clock, options.reconcileEveryMs, () =>
      this.reconcile(),
    );
    // A movement resolved meanwhile no longer waits.
    resolver.on('resolved', (id) => {
      if (!this.#waiting.some((entry) => entry.id === id)) return;
      this.#waiting = this.#waiting.filter((entry) => entry.id !== id);
      this.emit('waitingForCard', this.#waiting);
    });
  }

  get waiting(): readonly WaitingMovement[] {
    return this.#waiting;
  }

  /** Reconciles as soon as possible, then periodically. */
  soon(): void {
    this.#schedule.soon();
  }

  close(): Promise<void> {
    return this.#schedule.close();
  }

  /**
   * Compares the ledger's pending movements of every shop this till holds a key for with the
   * journal, and decides each (movement-phases.ts, decidePending): this till's are posted,
   * voided or left to their card; other tills' are shown, never resolved. This till's
   * undecided movements the ledger no longer holds pending were decided elsewhere on evidence.
   */
  async reconcile(): Promise<void> {
    const waiting: WaitingMovement[] = [];
    const pendingIds = new Set<string>();
    let complete = true;
    for (const apiKey of this.#book.keys.all()) {
      let pending: LedgerMovement[];
      try {
        pending = await this.#ledger.listPendingMovements(apiKey);
      } catch (error) {
        this.#book.log.warn(
          `reconciliation: the ledger did not list pending movements (${messageOf(error)})`,
        );
        // One shop's list failing (an earlier key revoked, say) does not stop the others.
        complete = false;
        continue;
      }
      for (const entry of pending) {
        pendingIds.add(entry.id);
        const decision = await this.#decide(apiKey, entry);
        if (decision) waiting.push(this.#waitingOf(entry, decision));
      }
    }
    if (complete) {
      for (const movement of [...this.#book.movements.values()]) {
        if (phaseOf(movement) === 'uncertain' && !pendingIds.has(movement.id)) {
          if (!this.#book.owned.has(movement.id)) {
            await this.#resolver.learn(movement, { cardSeen: false });
          }
        }
      }
    }
    this.#publish(waiting);
  }

  /** One pending movement; what it waits for, if it waits. */
  async #decide(
    apiKey: string,
    entry: LedgerMovement,
  ): Promise<WaitingMovement['owner'] | undefined> {
    const movement = this.#book.movements.get(entry.id);
    if (movement?.adopted && !movement.reserved && !this.#book.owned.has(entry.id)) {
      // Adopted, but a crash came before its planned write was journaled: plan it again.
      await this.#adopt(apiKey, entry, movement);
      return 'this-till';
    }
    const decision = decidePending({
      movement,
      owned: this.#book.owned.has(entry.id),
      tillId: entry.tillId ?? null,
      thisTill: this.#book.tillId,
      hasEvidence: entry.cardBefore !== null && isKnownBefore(entry.cardBefore ?? ''),
    });
    switch (decision) {
      case 'owned':
        return undefined;
      case 'other-till':
        return 'other-till';
      case 'operator':
        return 'operator';
      case 'wait-for-card':
        return 'this-till';
      case 'adopt':
        return (await this.#adopt(apiKey, entry)) ? 'this-till' : undefined;
      case 'post':
      case 'void':
        if (movement && phaseOf(movement) !== 'done') {
          await this.#resolver.resolve(movement);
        } else {
          this.#book.log.warn(
            `reconciliation: movement ${entry.id} is pending at the ledger; the journal has it resolved: ${decision}`,
          );
          await this.#resolver
            .send(apiKey, entry.id, decision, movement && occurredAtOf(movement))
            .catch((error: unknown) =>
              this.#book.log.warn(
                `reconciliation: ${decision} of ${entry.id}: ${messageOf(error)}`,
              ),
            );
        }
        return undefined;
    }
  }

  /**
   * A movement of this till that the journal lost: its planned write is rebuilt from what the
   * card held (the ledger's `cardBefore`), and its card decides it when next seen. `known`: one
   * adopted already, whose plan a crash kept out of the journal.
   */
  async #adopt(apiKey: string, entry: LedgerMovement, known?: Movement): Promise<boolean> {
    // Every kind this till makes (a card rule's too) carries the card state it was planned from.
    const before = entry.cardBefore as string;
    const after = balanceAfterWrite(entry.kind, balanceBefore(before), entry.credits);
    const print = this.#book.keys.fingerprintOf(apiKey);
    // The key may have been released while the list was on its way (replaced, and no movement
    // of the journal needed it): adopted with it, the movement could never be resolved. The
    // next reconciliation adopts it with the key that lists it then. Held from here on.
    const release = this.#book.lendKey(print);
    if (!release) return false;
    this.#book.log.warn(
      `reconciliation: movement ${entry.id} of this till is not in the journal; its card decides it (planned from ${before})`,
    );
    try {
      if (!known) {
        await this.#book.append({
          type: 'started',
          id: entry.id,
          kind: entry.kind,
          cardId: entry.cardId,
          keyFingerprint: print,
          adopted: true,
        });
      }
      await this.#book.append({
        type: 'reserved',
        id: entry.id,
        credits: entry.credits,
        amount: entry.amount,
        intent: planWrite(before, after, entry.id),
      });
    } finally {
      release();
    }
    return true;
  }

  #waitingOf(entry: LedgerMovement, owner: WaitingMovement['owner']): WaitingMovement {
    // Another till's movement is its card's to decide there; but a compensation writes no
    // card, so past the bound only its till coming back or an operator decides it.
    const otherTillsCompensation = owner === 'other-till' && entry.compensates !== null;
    const overdue =
      (owner !== 'other-till' || otherTillsCompensation) &&
      this.#book.clock.now() - Date.parse(entry.createdAt) >= this.#boundMs;
    if (overdue && !this.#overdueLogged.has(entry.id)) {
      this.#overdueLogged.add(entry.id);
      const what = `movement ${entry.id} (${entry.kind} ${entry.credits} on card ${entry.cardId}) has waited since ${entry.createdAt}`;
      this.#book.log.error(
        otherTillsCompensation
          ? `${what}: a compensation of till ${entry.tillId ?? 'unnamed'} (of ${entry.compensates}), which no card write decides: settle the card at any till (POST /cards/settle posts it with the card as evidence), or have an operator post it with evidence (movements post --evidence)`
          : `${what}: present the card, or have an operator decide it with evidence`,
      );
    }
    return {
      id: entry.id,
      kind: entry.kind,
      cardId: entry.cardId,
      credits: entry.credits,
      since: entry.createdAt,
      owner,
      overdue,
    };
  }

  #publish(waiting: WaitingMovement[]): void {
    const key = (list: readonly WaitingMovement[]) =>
      list.map((entry) => `${entry.id}:${entry.owner}:${entry.overdue}`).join();
    const changed = key(waiting) !== key(this.#waiting);
    this.#waiting = waiting;
    if (changed) this.emit('waitingForCard', waiting);
    if (waiting.length > 0) {
      this.#book.log.warn(
        `reconciliation: ${waiting.length} movement(s) wait: ${waiting
          .map(
            (entry) =>
              `${entry.kind} ${entry.credits} on card ${entry.cardId} (${entry.id}, ${entry.owner})`,
          )
          .join(', ')}`,
      );
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
