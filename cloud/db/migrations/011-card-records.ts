/**
 * Migration 11: a till tells the ledger a DESFire card's newest movement record with a movement
 * (`cardRecord`), and the ledger flags a card its record does not explain (docs/cloud-api.md,
 * "Card accounts"): `card-above-record` (it held more than the record's value after) and
 * `record-of-voided-movement` (the record names a movement the ledger voided, with nothing that
 * explains the card holding it).
 *
 * - `card_flags` keeps the record the flag was raised on (`record_counter`, `record_movement_id`,
 *   `record_value_after`; null for the other kinds).
 * - The kinds' CHECK gains the two kinds, keeping every kind an earlier migration allowed (read
 *   from the constraint itself, so a kind another migration added before this one stays).
 * - One movement may raise flags of several kinds (a recharge above its account and above its
 *   record): a flag is unique per movement and kind, so a retry still adds none.
 */
export const migration011 = {
  version: 11,
  name: 'card-records',
  sql: /* sql */ `
ALTER TABLE card_flags ADD COLUMN record_counter bigint;
ALTER TABLE card_flags ADD COLUMN record_movement_id uuid;
ALTER TABLE card_flags ADD COLUMN record_value_after bigint;

DO $$
DECLARE
  v_kinds text[];
BEGIN
  SELECT array_agg(DISTINCT quoted[1]) INTO v_kinds
  FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([^'']+)''', 'g') AS quoted
  WHERE c.conrelid = 'card_flags'::regclass AND c.conname = 'card_flags_kind_check';
  v_kinds := array_cat(v_kinds, ARRAY['card-above-record', 'record-of-voided-movement']);
  ALTER TABLE card_flags DROP CONSTRAINT card_flags_kind_check;
  EXECUTE format('ALTER TABLE card_flags ADD CONSTRAINT card_flags_kind_check CHECK (kind = ANY (%L::text[]))',
                 v_kinds);
END
$$;

DROP INDEX card_flags_movement;
CREATE UNIQUE INDEX card_flags_movement ON card_flags (customer_id, movement_id, kind)
  WHERE movement_id IS NOT NULL;
`,
};
