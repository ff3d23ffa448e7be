import { EventEmitter } from 'node:events';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import { AppError } from '../errors.ts';
import type { MovementBook } from './movement-book.ts';
import { occurredAtOf, type Movement, type MovementKind } from './movement-journal.ts';
import {
  compensationFor,
  compensationOfWrite,
  phaseOf,
  settledByRefusal,
} from './movement-phases.ts';
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
   * evidence is taken as decided. A compensating movement another till made and posted (it
   * read the card, which disagreed) is part of that word: the write landed when exactly one of
   * the two is posted, and the compensation is journaled as done. Unless its card was seen
   * (`cardSeen`: it cannot decide it), the outcome is journaled as learnt, and the card decides
   * it when seen again (settle()). True when the journal now has it resolved.
   */
  async learn(movement: Movement, { cardSeen }: { cardSeen: boolean }): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined || phaseOf(movement) !== 'uncertain') return false;
    let atLedger: LedgerMovement;
    try {
      atLedger = await this.#ledger.getMovement(apiKey, movement.id);
    } catch {
      return false;
    }
    if (atLedger.state === 'pending' || phaseOf(movement) !== 'uncertain') return false;
    let compensation: LedgerMovement | undefined;
    try {
      const { movements } = await this.#ledger.getCardAccount(apiKey, movement.cardId);
      compensation = movements.find(
        (other) => other.compensates === movement.id && other.state === 'posted',
      );
    } catch {
      return false;
    }
    if (phaseOf(movement) !== 'uncertain') return false;
    const landed = (atLedger.state === 'posted') !== (compensation !== undefined);
    // An operator's word given without the card holds the card until a till reads it: this
    // one did, and the card cannot tell, so the operator's word stands.
    if (
      cardSeen &&
      atLedger.awaitsCard === true &&
      !(await this.#tellCardAgrees(apiKey, movement, atLedger.state, undefined))
    ) {
      return false;
    }
    this.#book.log.warn(
      `movement ${movement.id}: ${atLedger.state} at the ledger by ${atLedger.resolvedByTill ? `till ${atLedger.resolvedByTill}` : 'an operator'} (${atLedger.evidence ?? 'no evidence given'})${compensation ? `, compensated by ${compensation.id}` : ''}; taken as decided`,
    );
    await this.#book.append({
      type: 'card',
      id: movement.id,
      outcome: landed ? 'committed' : 'not-written',
      ...(cardSeen ? {} : { learnt: true }),
    });
    await this.#book.append({ type: 'resolved', id: movement.id, state: atLedger.state });
    if (compensation && !this.#book.movements.has(compensation.id)) {
      // Another till's: done, so that this till neither compensates again nor resolves it.
      const { id, kind, cardId, credits } = compensation;
      const keyFingerprint = movement.keyFingerprint;
      await this.#book.append({
        type: 'started',
        id,
        kind,
        cardId,
        keyFingerprint,
        credits,
        compensates: movement.id,
      });
      await this.#book.append({ type: 'resolved', id, state: 'posted' });
    }
    this.#resolved(movement.id);
    return true;
  }

  /**
   * What the card shows of a movement whose outcome was learnt from the ledger: journaled as
   * seen, and where it disagrees with the ledger's word, the compensating movement that sets
   * the books right (outcome undefined: the card cannot tell, the ledger's word stands).
   */
  async seen(movement: Movement, outcome: 'committed' | 'not-written' | undefined): Promise<void> {
    const seen = outcome ?? movement.card;
    const resolved = movement.resolved;
    if (!seen || resolved === undefined) return;
    if (seen !== movement.card) {
      this.#book.log.error(
        `movement ${movement.id}: its card ${seen === 'committed' ? 'holds' : 'does not hold'} it, though the ledger's final word is ${resolved}`,
      );
    } else if (resolved !== 'absent' && !this.#book.compensationOf(movement.id)) {
      // The ledger may hold the card for it (an operator decided without the card): told the
      // card agrees, it frees the card. Until it answers, the card decides it again when seen.
      // (A compensation, another till's, freed it already.)
      const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
      if (apiKey !== undefined && !(await this.#tellCardAgrees(apiKey, movement, resolved, seen)))
        return;
    }
    await this.#book.append({ type: 'card', id: movement.id, outcome: seen });
    await this.#compensate(movement, resolved);
    const compensation = this.#book.compensationOf(movement.id);
    if (compensation) await this.resolve(compensation);
  }

  /**
   * A movement an operator posted or voided without its card (`awaitsCard`), whatever till
   * made it, read now at this one (POST /cards/settle): the ledger is told the card agrees with
   * its word, or a compensating movement of this till sets the books right, which frees the
   * card as well. Resolves with the compensation, if one was needed; throws when the ledger
   * did not take the card's word.
   */
  async cardDecides(
    apiKey: string,
    atLedger: LedgerMovement,
    shows: 'committed' | 'not-written' | undefined,
    evidence: string,
  ): Promise<Movement | undefined> {
    const state = atLedger.state === 'posted' ? 'posted' : 'voided';
    const compensation = compensationOfWrite(
      { kind: atLedger.kind, credits: atLedger.credits, card: shows },
      state,
    );
    if (!compensation) {
      await this.resolveOnEvidence(
        apiKey,
        atLedger.id,
        state === 'posted' ? 'post' : 'void',
        evidence,
      );
      return undefined;
    }
    const made =
      this.#book.compensationOf(atLedger.id) ??
      (await this.#startCompensation(
        {
          id: atLedger.id,
          cardId: atLedger.cardId,
          keyFingerprint: this.#book.keys.fingerprintOf(apiKey),
          shows,
        },
        state,
        compensation,
      ));
    await this.resolve(made);
    return made;
  }

  /** Tells the ledger the card agrees with its word on `movement`; false when it did not answer. */
  async #tellCardAgrees(
    apiKey: string,
    movement: Movement,
    state: 'posted' | 'voided',
    shows: 'committed' | 'not-written' | undefined,
  ): Promise<boolean> {
    const what =
      shows === undefined
        ? "shows neither the balance before nor after it: the ledger's word stands"
        : `${shows === 'committed' ? 'holds' : 'does not hold'} it`;
    const evidence = `card ${movement.cardId} read at till ${this.#book.tillId}: it ${what}`;
    try {
      await this.resolveOnEvidence(
        apiKey,
        movement.id,
        state === 'posted' ? 'post' : 'void',
        evidence,
      );
      return true;
    } catch (error) {
      if (!(error instanceof LedgerRefusal)) return false;
      // The ledger's word changed since it was learnt: nothing a retry would change.
      this.#book.log.error(
        `movement ${movement.id}: the ledger refused the card's word (${error.code})`,
      );
      return true;
    }
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
    await this.#startCompensation({ ...movement, shows: movement.card }, ledger, compensation);
    this.#outbox.kick(0);
  }

  /** Journals a compensating movement of `of` (created and posted by the outbox, or resolve()). */
  async #startCompensation(
    of: {
      id: string;
      cardId: string;
      keyFingerprint: string;
      shows: 'committed' | 'not-written' | undefined;
    },
    ledger: 'posted' | 'voided' | 'absent',
    compensation: { kind: MovementKind; credits: number },
  ): Promise<Movement> {
    const id = this.#book.newId();
    this.#book.log.error(
      `movement ${of.id}: the card ${of.shows === 'committed' ? 'holds' : 'does not hold'} it but the ledger has it ${ledger}; compensating ${compensation.kind} ${compensation.credits} (${id})`,
    );
    await this.#book.append({
      type: 'started',
      id,
      kind: compensation.kind,
      cardId: of.cardId,
      keyFingerprint: of.keyFingerprint,
      compensates: of.id,
      credits: compensation.credits,
    });
    return this.#book.movement(id);
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
      if (
        error instanceof LedgerRefusal &&
        error.code === ledgerErrorCodes.movementCompensated.code
      ) {
        // Another till read the card first and set the books right: nothing is left to do.
        this.#book.log.info(
          `compensating movement ${movement.id} for ${movement.compensates}: not needed (${error.detail ?? 'compensated already'})`,
        );
        await this.#book.append({ type: 'card', id: movement.id, outcome: 'not-written' });
        return true;
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
      const phase = phaseOf(movement);
      if (phase === 'done' || phase === 'uncertain') continue;
      if (this.#book.owned.has(movement.id)) continue;
      allDone = (await this.resolve(movement)) && allDone;
    }
    return allDone;
  }
}
