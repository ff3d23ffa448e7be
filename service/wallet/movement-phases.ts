/**
 * The money engine's decisions, as pure functions of what the journal and the ledger say: where
 * a movement stands, what to do with one the ledger holds pending, what a refusal proves, and
 * what sets right a card and a ledger that disagree. No I/O here (movement-engine.ts composes
 * the parts that act on them).
 */
import { isRechargeOrPayout, ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import type { Movement, MovementKind } from './journal-entries.ts';

/** Where a movement stands, derived from its journal lines. */
export type MovementPhase =
  /** A compensating movement the ledger has not answered yet: create it (the same id). */
  | 'to-create'
  /** The ledger may hold a pending movement; the card was certainly not written: void it. */
  | 'to-void'
  /** The card write may or may not have landed: decide on the card. */
  | 'uncertain'
  /** The card holds it: post it. */
  | 'to-post'
  | 'done';

export function phaseOf(movement: Movement): MovementPhase {
  if (movement.resolved) return 'done';
  // A compensating movement writes no card: once the ledger created it (reserved), the card
  // holds what it records, even when a crash came before its card line was journaled.
  if (movement.compensates !== undefined && !movement.card) {
    return movement.reserved ? 'to-post' : 'to-create';
  }
  if (movement.card === 'committed') return 'to-post';
  // Adopted: the lost journal's till may have written its card. Never voided unseen, even
  // before its planned write is journaled again (a crash in between).
  if (movement.adopted && !movement.card) return 'uncertain';
  if (movement.card === 'not-written' || !movement.reserved) return 'to-void';
  return 'uncertain';
}

export type PendingDecision =
  /** A running request owns it: only that request resolves it. */
  | 'owned'
  | 'post'
  | 'void'
  /** The card write may have landed: decided when the card is seen again. */
  | 'wait-for-card'
  /** Another till's: shown, never resolved here (docs/cloud-api.md, "Tills"). */
  | 'other-till'
  /** This till's, unknown to the journal, with the card state it was planned from: adopt it. */
  | 'adopt'
  /** This till's, unknown to the journal, without evidence to decide it: an operator's. */
  | 'operator';

/**
 * What to do with a movement the ledger holds pending. The journal writes a movement's start
 * before the ledger is asked, so a movement this till made is known unless the journal was
 * lost; such a one is decided on its card from the ledger's `cardBefore`, never on a timer.
 * A movement of another till (or of a worker that names no till, unknown here) is never
 * resolved: only its till knows what its card write did.
 */
export function decidePending(input: {
  movement: Movement | undefined;
  owned: boolean;
  /** The till that made it (null: a worker that named none). */
  tillId: string | null;
  thisTill: string;
  /** Whether the ledger's `cardBefore` is a card state this worker can plan from. */
  hasEvidence: boolean;
}): PendingDecision {
  const { movement } = input;
  if (input.owned) return 'owned';
  if (!movement) {
    if (input.tillId !== input.thisTill) return 'other-till';
    return input.hasEvidence ? 'adopt' : 'operator';
  }
  switch (phaseOf(movement)) {
    case 'to-post':
      return 'post';
    case 'to-void':
      return 'void';
    case 'uncertain':
      return 'wait-for-card';
    case 'to-create':
      // Pending, so created: the outbox's create will be answered as a replay, then posted.
      return 'post';
    case 'done':
      // The journal has it resolved, the ledger not: say it again (both calls are idempotent).
      return movement.resolved === 'posted' ? 'post' : 'void';
  }
}

/**
 * A refusal that nonetheless says where the movement stands at the ledger: already in the
 * asked state, in the other one, or (a void of an id it never held, which leaves a tombstone
 * that refuses a late create) absent for good.
 */
export function settledByRefusal(
  error: unknown,
  action: 'post' | 'void',
): 'posted' | 'voided' | 'absent' | undefined {
  if (!(error instanceof LedgerRefusal)) return undefined;
  if (error.code === ledgerErrorCodes.movementAlreadyPosted.code) return 'posted';
  if (error.code === ledgerErrorCodes.movementAlreadyVoided.code) return 'voided';
  if (error.code === ledgerErrorCodes.movementNotFound.code && action === 'void') return 'absent';
  return undefined;
}

/**
 * When the ledger's final word disagrees with the card (a write the card holds but the ledger
 * voided, or a posted movement whose write never landed), the movement that sets the books
 * right: the same kind when the card holds the write, the other kind when it does not, for the
 * same credits. Undefined when they agree.
 */
export function compensationFor(
  movement: Movement,
  ledger: 'posted' | 'voided' | 'absent',
): { kind: MovementKind; credits: number } | undefined {
  const credits = movement.reserved?.credits;
  if (credits === undefined || movement.compensates !== undefined) return undefined;
  return compensationOfWrite({ kind: movement.kind, credits, card: movement.card }, ledger);
}

/**
 * The same rule for any movement's write, by what its card shows (undefined: unknown). A
 * refund, correction, pickup or block-clear is set right by a movement of its own kind, both
 * ways: the ledger redoes it when it voided it, and undoes it when it posted it
 * (docs/cloud-api.md, "Compensations of a card's own movements"); one the ledger never held
 * has nothing to set right.
 */
export function compensationOfWrite(
  write: { kind: MovementKind; credits: number; card: 'committed' | 'not-written' | undefined },
  ledger: 'posted' | 'voided' | 'absent',
): { kind: MovementKind; credits: number } | undefined {
  const { kind, credits } = write;
  const ownKind = !isRechargeOrPayout(kind);
  if (write.card === 'committed' && ledger !== 'posted') {
    return ownKind && ledger === 'absent' ? undefined : { kind, credits };
  }
  if (write.card === 'not-written' && ledger === 'posted') {
    return { kind: ownKind ? kind : kind === 'recharge' ? 'discharge' : 'recharge', credits };
  }
  return undefined;
}

/**
 * Whether an answer given for `movement` may be replayed as it was: only when the ledger's
 * final word is that it happened, its post, or (voided against its card) its compensation's;
 * a float recharge, once its card write is proven (docs/integrators.md, "When the internet
 * drops").
 */
export function replayable(movement: Movement, compensation: Movement | undefined): boolean {
  if (movement.resolved === 'posted') return true;
  // A float recharge is final once its card write is proven: the ledger is told afterwards.
  if (movement.float && movement.card === 'committed') return true;
  return movement.card === 'committed' && compensation?.resolved === 'posted';
}

/**
 * The balance a movement's write leaves on a card that held `before`: a recharge or a pickup
 * of a replacement adds its credits, an undo or a correction takes them off, a payout and a
 * block-clear empty the card.
 */
export function balanceAfterWrite(kind: MovementKind, before: number, credits: number): number {
  if (kind === 'recharge' || kind === 'replacement') return before + credits;
  if (kind === 'refund' || kind === 'correction') return before - credits;
  return 0;
}
