/**
 * Migration 5: a shop has several tills (docs/cloud-api.md, "Tills"). Every movement may name
 * the till that made it and what the card held when the write was planned (`card_before`, the
 * evidence any till can decide the write with); a till never resolves another till's movement
 * without evidence, and who resolved a movement, and on what evidence, is kept. A movement
 * that sets the books right after the card and the ledger disagreed names the one it
 * compensates. Legacy movements keep a null till. Only adds columns, an index and a flag kind.
 */
export const migration005 = {
  version: 5,
  name: 'tills',
  sql: /* sql */ `
ALTER TABLE movements
  ADD COLUMN till_id uuid,
  ADD COLUMN card_before text CHECK (card_before ~ '^[\\x21-\\x7e]{1,200}$'),
  ADD COLUMN compensates uuid REFERENCES movements (id),
  ADD COLUMN resolved_by_till uuid,
  ADD COLUMN evidence text CHECK (length(evidence) BETWEEN 1 AND 500);
CREATE INDEX movements_customer_till_pending ON movements (customer_id, till_id, created_at DESC, id DESC)
  WHERE state = 'pending';

ALTER TABLE card_flags DROP CONSTRAINT card_flags_kind_check;
ALTER TABLE card_flags ADD CONSTRAINT card_flags_kind_check
  CHECK (kind IN ('discharge-exceeds-account', 'overdrawn-before-accounts', 'card-above-account',
                  'compensation-refused'));
`,
};
