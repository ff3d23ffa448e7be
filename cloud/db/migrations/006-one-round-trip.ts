/**
 * Migration 6: every contract call in one round trip, every table keyed by its customer.
 *
 * - `ledger_create_movement` and `ledger_resolve_movement` (cloud/db/routines/) became the
 *   create, post and void of contract v1 as server-side functions here: one round trip instead
 *   of about 13. Their SQL is now kept in routines/, made anew on every migrate.
 * - Keys: every table's primary key starts with the customer (`customers.id` is the customer),
 *   so a distributed database can shard them all by customer (docs/cloud-api.md, "Past one
 *   machine"); `api_keys` is the one table looked up by something else, and is replicated. On
 *   one node, movement ids stay unique across customers (the contract answers another
 *   customer's id with MovementIdConflict) through the unique indexes on `id` alone.
 */
export const migration006 = {
  version: 6,
  name: 'one-round-trip',
  sql: /* sql */ `
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_movement_id_fkey;
ALTER TABLE movements DROP CONSTRAINT movements_compensates_fkey;
ALTER TABLE movements DROP CONSTRAINT movements_pkey;
ALTER TABLE movements ADD CONSTRAINT movements_pkey PRIMARY KEY (customer_id, id);
CREATE UNIQUE INDEX movements_id ON movements (id);
ALTER TABLE movements ADD CONSTRAINT movements_compensates_fkey
  FOREIGN KEY (customer_id, compensates) REFERENCES movements (customer_id, id);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_movement_fkey
  FOREIGN KEY (customer_id, movement_id) REFERENCES movements (customer_id, id);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pkey;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY (customer_id, id);
DROP INDEX ledger_entries_customer;
DROP INDEX ledger_entries_movement;
CREATE INDEX ledger_entries_movement ON ledger_entries (customer_id, movement_id)
  WHERE movement_id IS NOT NULL;

ALTER TABLE void_tombstones DROP CONSTRAINT void_tombstones_pkey;
ALTER TABLE void_tombstones ADD CONSTRAINT void_tombstones_pkey PRIMARY KEY (customer_id, id);
CREATE UNIQUE INDEX void_tombstones_id ON void_tombstones (id);

ALTER TABLE card_flags DROP CONSTRAINT card_flags_pkey;
ALTER TABLE card_flags ADD CONSTRAINT card_flags_pkey PRIMARY KEY (customer_id, id);
DROP INDEX card_flags_card;
CREATE INDEX card_flags_card ON card_flags (customer_id, card_id, id);
DROP INDEX card_flags_movement;
CREATE UNIQUE INDEX card_flags_movement ON card_flags (customer_id, movement_id)
  WHERE movement_id IS NOT NULL;
`,
};
