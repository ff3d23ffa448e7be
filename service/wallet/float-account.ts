import { floatMovementId, MAX_FLOAT_SEQ } from '../../common/float-ids.ts';
import type { TillFloat } from './float-entries.ts';
import type { Movement } from './journal-entries.ts';
import type { MovementBook } from './movement-book.ts';
import { phaseOf } from './movement-phases.ts';

/**
 * What this till's float holds by its own count (docs/integrators.md, "When the internet
 * drops"): granted to it, less every recharge paid from it that may be on a card (written,
 * undecided, or on its way now), whatever the ledger has been told. The till's count is the one
 * that bounds its sales: the ledger's lags behind by what is not reported yet.
 */
export class FloatAccount {
  readonly #book: MovementBook;

  constructor(book: MovementBook) {
    this.#book = book;
  }

  /** The float this till may sell from now: known to the journal, neither closing nor closed. */
  get float(): TillFloat | undefined {
    const float = this.#book.journal.floats.float;
    return float && !float.closing && !float.closed ? float : undefined;
  }

  /** The float's recharges in the journal, in the order they were made. */
  salesOf(float: TillFloat): Movement[] {
    return [...this.#book.movements.values()].filter(
      (movement) => movement.float?.floatId === float.floatId,
    );
  }

  /** Credits that may be on cards from this float: all but writes that certainly did not land. */
  sold(float: TillFloat): number {
    let sold = float.soldBefore;
    for (const movement of this.salesOf(float)) {
      if (this.#spends(movement)) sold += movement.float?.credits ?? 0;
    }
    return sold;
  }

  /** What the float can still pay, by this till's count. */
  available(float: TillFloat): number {
    return Math.max(0, float.granted - this.sold(float));
  }

  /** The next movement id's sequence number (its ids are used in order, each once). */
  nextSeq(float: TillFloat): number {
    let highest = float.seqBefore;
    for (const movement of this.salesOf(float)) {
      highest = Math.max(highest, movement.float?.seq ?? 0);
    }
    return highest + 1;
  }

  /** Ids handed out and not used yet. */
  idsLeft(float: TillFloat): number {
    return Math.max(0, Math.min(float.idsIssued, MAX_FLOAT_SEQ) - this.nextSeq(float) + 1);
  }

  /** The next movement id, and its sequence number; undefined when none is left. */
  nextId(float: TillFloat): { id: string; seq: number } | undefined {
    if (this.idsLeft(float) === 0) return undefined;
    const seq = this.nextSeq(float);
    return { id: floatMovementId(float.prefix, seq), seq };
  }

  /** Float recharges the ledger has not been told of as they stand now, in journal order. */
  unreported(): Movement[] {
    return [...this.#book.movements.values()].filter(
      (movement) =>
        movement.float !== undefined && needsReport(movement) && !this.#book.owned.has(movement.id),
    );
  }

  /** Credits of this till's float recharges the ledger does not count yet (GET /info). */
  unreportedCredits(): number {
    let credits = 0;
    for (const movement of this.unreported()) {
      if (movement.reportedUndecided !== true && this.#spends(movement)) {
        credits += movement.float?.credits ?? 0;
      }
    }
    return credits;
  }

  /** Whether a recharge may be on its card: not one that certainly was not written. */
  #spends(movement: Movement): boolean {
    if (movement.card === 'not-written') return false;
    return movement.reserved !== undefined || this.#book.owned.has(movement.id);
  }
}

/**
 * Whether the ledger must hear of a float recharge (again): not reported yet, or reported as
 * undecided and decided since. An undecided one reported once waits for its card.
 */
export function needsReport(movement: Movement): boolean {
  const phase = phaseOf(movement);
  if (phase === 'done') return false;
  return phase !== 'uncertain' || movement.reportedUndecided !== true;
}
