/**
 * Migration 2: a void of a movement id the ledger does not hold leaves a tombstone, so a create
 * with that id that arrives later (a worker's timed-out request reaching the ledger late) is
 * refused instead of reserving credits nobody will ever resolve (docs/cloud-api.md, "Tombstones").
 */
export const migration002 = {
  version: 2,
  name: 'void-tombstones',
  sql: /* sql */ `
CREATE TABLE void_tombstones (
  id uuid PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
};
