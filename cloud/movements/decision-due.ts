import type { Movement } from '../records.ts';

/**
 * How long a compensation may stay pending before the back office marks it as needing a
 * decision: the workers' default bound for a movement waiting for its card (24 hours,
 * `uncertainMovementBoundMs`, docs/integrators.md "Reconciliation"), past which the tills log it.
 */
export const COMPENSATION_BOUND_MS = 24 * 60 * 60_000;

/**
 * Whether a movement needs an operator's decision now: a compensation its till made and left
 * pending past the bound. It writes no card, so no card write decides it, and only its till
 * posts it by itself; any till settling the card posts it with the card as evidence, or an
 * operator does (`movements post --evidence`). Other pending movements wait for their card.
 */
export function compensationDue(movement: Movement, now: Date): boolean {
  return (
    movement.state === 'pending' &&
    movement.compensates !== null &&
    now.getTime() - Date.parse(movement.createdAt) >= COMPENSATION_BOUND_MS
  );
}

/** What an operator is told of such a compensation (the admin CLI and the console say it). */
export function compensationDueText(movement: Movement): string {
  return `a compensation of till ${movement.tillId ?? '(unnamed)'} (of ${movement.compensates ?? ''}), pending for more than 24 hours, that no card write decides: settle the card at any till (POST /cards/settle posts it with the card as evidence), or post it with evidence (movements post --evidence)`;
}
