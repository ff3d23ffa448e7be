/**
 * Migration 12: the POS's reference of each movement (its sale id: the worker's `Pos-Reference`
 * header), so that a sale or a printed receipt leads to its ledger entry, and the lookup of a
 * shop's movements by it (`GET /v1/movements?reference=`, newest first: a reference need not
 * be unique). Movements made before it have none.
 */
export const migration012 = {
  version: 12,
  name: 'references',
  sql: /* sql */ `
ALTER TABLE movements ADD COLUMN reference text
  CONSTRAINT movements_reference_bounded CHECK (char_length(reference) BETWEEN 1 AND 80);
CREATE INDEX movements_reference ON movements (customer_id, reference, created_at DESC)
  WHERE reference IS NOT NULL;
`,
};
