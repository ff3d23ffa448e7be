/**
 * Migration 15: compensations of a card's own movements (docs/cloud-api.md, "Compensations of
 * refunds, corrections, pickups and block-clears").
 *
 * - `movements.undoes`: a compensation that takes back what its refund, correction, pickup or
 *   block-clear did at the ledger (the ledger posted it; its card does not hold it). A
 *   compensation of one the ledger voided, whose card holds it, does what it would have done,
 *   and carries its `refunds` and `applies`; one that undoes it carries neither.
 * - `daily_takings`: an undoing compensation counts negatively in its kind's line (a refund
 *   undone is no refund), so a day's row may go below zero.
 */
export const migration015 = {
  version: 15,
  name: 'card-rule-compensations',
  sql: /* sql */ `
ALTER TABLE movements
  ADD COLUMN undoes boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT movements_undoes CHECK (NOT undoes OR (compensates IS NOT NULL
    AND kind IN ('refund', 'correction', 'replacement', 'block-clear'))),
  DROP CONSTRAINT movements_refunds,
  ADD CONSTRAINT movements_refunds
    CHECK ((refunds IS NOT NULL) = (kind IN ('refund', 'correction') AND NOT undoes)),
  DROP CONSTRAINT movements_applies,
  ADD CONSTRAINT movements_applies
    CHECK ((applies IS NOT NULL) = (kind IN ('replacement', 'correction') AND NOT undoes));
ALTER TABLE daily_takings
  DROP CONSTRAINT daily_takings_movements_check,
  DROP CONSTRAINT daily_takings_credits_check,
  DROP CONSTRAINT daily_takings_euros_check;
`,
};
