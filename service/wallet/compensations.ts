import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import { AppError } from '../errors.ts';
import type { Movement, MovementKind } from './journal-entries.ts';
import type { MovementBook } from './movement-book.ts';
import { compensationFor } from './movement-phases.ts';

/** What a compensating movement sets right: a movement of a card, and what its card shows. */
export interface Compensated {
  id: string;
  cardId: string;
  keyFingerprint: string;
  shows: 'committed' | 'not-written' | undefined;
}

/**
 * Compensating movements: when the ledger's final word on a movement disagrees with its card,
 * the movement that sets the books right (no card write goes with it). Journaled first, then
 * created at the ledger (by the resolver, which posts it after); one the ledger refuses is a
 * conflict an operator sets right.
 */
export class Compensations {
  readonly #book: MovementBook;
  readonly #ledger: Pick<LedgerClient, 'createMovement' | 'getCardAccount'>;
  /** Runs the outbox soon (0: now). */
  readonly #kick: (delayMs?: number) => void;

  constructor(
    book: MovementBook,
    ledger: Pick<LedgerClient, 'createMovement' | 'getCardAccount'>,
    kick: (delayMs?: number) => void,
  ) {
    this.#book = book;
    this.#ledger = ledger;
    this.#kick = kick;
  }

  /**
   * When the ledger's final word disagrees with what the card shows (by default, what the
   * journal says it shows): a compensating movement. Journaled before the line that makes the
   * movement done (its card or resolved line), so that no crash leaves a movement done, its
   * card disagreeing with the ledger, and nothing to set the books right.
   */
  async compensate(
    movement: Movement,
    ledger: 'posted' | 'voided' | 'absent',
    shows: Movement['card'] = movement.card,
  ): Promise<void> {
    const compensation = compensationFor({ ...movement, card: shows }, ledger);
    if (!compensation || this.#book.compensationOf(movement.id)) return;
    await this.start({ ...movement, shows }, ledger, compensation);
    this.#kick(0);
  }

  /** Journals a compensating movement of `of` (created and posted by the outbox, or resolve()). */
  async start(
    of: Compensated,
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
  async create(movement: Movement): Promise<boolean> {
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
   * Whether the ledger counts a write whose card could not tell (`byLedger`, not written by the
   * ledger's word) as landed after all: another till saw the card holding it and posted a
   * compensating movement. Undefined when the ledger did not answer.
   */
  async compensatedSince(movement: Movement): Promise<boolean | undefined> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) return false;
    try {
      const { movements } = await this.#ledger.getCardAccount(apiKey, movement.cardId);
      return movements.some(
        (other) => other.compensates === movement.id && other.state === 'posted',
      );
    } catch {
      return undefined;
    }
  }
}
