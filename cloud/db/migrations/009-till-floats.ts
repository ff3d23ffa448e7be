/**
 * Migration 9: the till float (docs/cloud-api.md, "Till floats").
 *
 * A float is a slice of a shop's pool that the ledger moves to one till ahead of time, so the
 * till can recharge cards without asking the ledger (its internet down, or to answer at card
 * speed), and report the recharges afterwards. The ledger hands out the float's movement ids
 * with it: UUIDs made of the float's random prefix and a sequence number, so an id names its
 * float and till, and an id never handed out is forged.
 *
 * - `customers`: the shop's float settings (a size of 0, the default, is no float), the
 *   low-water mark the till tops up at, the cap per recharge while offline (NULL: the float
 *   bounds it), how long a till may sell offline, and the card types a float may recharge.
 * - `floats`: one open float per till at most, its balance (`credits`, never negative), what
 *   was granted to it, returned to the pool, written off and drawn beyond it, and the highest
 *   sequence number handed out (`ids_issued`).
 * - `float_topups`: each top-up by its id (idempotent), with what it granted.
 * - `float_entries`: every change of a float's balance, append-only, as `ledger_entries` is
 *   for the pool, so a float's balance is checkable as the sum of its entries.
 * - `movements`: a float recharge is a movement of its float (`float_id`, `float_seq`), told
 *   by its till or found on its card by another (`reported_as`), with the flags of its report.
 * - `ledger_entries`: the pool's moves into and out of floats (`float-out`, `float-in`).
 * - `tills`: when each last reported.
 * - `card_flags`: `forged-float-movement`, a float recharge whose id was never handed out.
 */
export const migration009 = {
  version: 9,
  name: 'till-floats',
  sql: /* sql */ `
ALTER TABLE customers
  ADD COLUMN float_size bigint NOT NULL DEFAULT 0
    CONSTRAINT customers_float_size CHECK (float_size BETWEEN 0 AND 2147483647),
  ADD COLUMN float_low_water bigint NOT NULL DEFAULT 0
    CONSTRAINT customers_float_low_water CHECK (float_low_water >= 0),
  ADD COLUMN float_offline_cap bigint
    CONSTRAINT customers_float_offline_cap CHECK (float_offline_cap BETWEEN 1 AND 2147483647),
  ADD COLUMN float_offline_limit_s integer NOT NULL DEFAULT 86400
    CONSTRAINT customers_float_offline_limit CHECK (float_offline_limit_s BETWEEN 60 AND 2592000),
  ADD COLUMN float_card_types text[] NOT NULL DEFAULT '{classic,desfire}'
    CONSTRAINT customers_float_card_types CHECK (float_card_types <@ '{classic,desfire}'::text[]),
  ADD CONSTRAINT customers_float_low_water_in_size CHECK (float_low_water <= float_size);

CREATE TABLE floats (
  customer_id uuid NOT NULL REFERENCES customers (id),
  id uuid NOT NULL,
  till_id uuid NOT NULL,
  -- The first 6 bytes of every movement id the float hands out (hex).
  id_prefix text NOT NULL CHECK (id_prefix ~ '^[0-9a-f]{12}$'),
  state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
  credits bigint NOT NULL DEFAULT 0 CONSTRAINT floats_credits_non_negative CHECK (credits >= 0),
  granted bigint NOT NULL DEFAULT 0 CHECK (granted >= 0),
  ids_issued integer NOT NULL DEFAULT 0 CHECK (ids_issued BETWEEN 0 AND 16777215),
  open_request uuid NOT NULL,
  opened_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz,
  closed_by text CHECK (closed_by IN ('till', 'operator')),
  returned bigint NOT NULL DEFAULT 0 CHECK (returned >= 0),
  written_off bigint NOT NULL DEFAULT 0 CHECK (written_off >= 0),
  write_off_reason text CHECK (length(write_off_reason) BETWEEN 1 AND 500),
  overdrawn bigint NOT NULL DEFAULT 0 CHECK (overdrawn >= 0),
  PRIMARY KEY (customer_id, id),
  FOREIGN KEY (customer_id, till_id) REFERENCES tills (customer_id, id),
  CHECK ((state = 'closed') = (closed_at IS NOT NULL)),
  CHECK ((state = 'closed') = (closed_by IS NOT NULL))
);
CREATE UNIQUE INDEX floats_id ON floats (id);
CREATE UNIQUE INDEX floats_id_prefix ON floats (id_prefix);
CREATE UNIQUE INDEX floats_open_per_till ON floats (customer_id, till_id) WHERE state = 'open';
CREATE UNIQUE INDEX floats_open_request ON floats (customer_id, open_request);
CREATE INDEX floats_customer_till ON floats (customer_id, till_id, opened_at DESC);

CREATE TABLE float_topups (
  customer_id uuid NOT NULL,
  id uuid NOT NULL,
  float_id uuid NOT NULL,
  requested bigint NOT NULL CHECK (requested >= 0),
  granted bigint NOT NULL CHECK (granted >= 0),
  ids_requested integer NOT NULL CHECK (ids_requested >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, id),
  FOREIGN KEY (customer_id, float_id) REFERENCES floats (customer_id, id)
);

-- One row per change of a float's balance: grant (from the pool), recharge (a float movement
-- counted), release (a pending one voided), return (to the pool at close), write-off (at
-- close), write-back (a movement reported after close, taken back from the write-off) and
-- overdraw (credits a movement took beyond the float).
CREATE TABLE float_entries (
  customer_id uuid NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  float_id uuid NOT NULL,
  operation text NOT NULL CHECK (operation IN ('grant', 'recharge', 'release', 'return',
                                               'write-off', 'write-back', 'overdraw')),
  delta bigint NOT NULL CHECK (delta <> 0),
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  movement_id uuid,
  topup_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, id),
  FOREIGN KEY (customer_id, float_id) REFERENCES floats (customer_id, id),
  CHECK ((movement_id IS NOT NULL) = (operation IN ('recharge', 'release', 'write-back', 'overdraw'))),
  -- A grant names its top-up (the open's grant: the open request's id).
  CHECK ((topup_id IS NOT NULL) = (operation = 'grant'))
);
CREATE INDEX float_entries_float ON float_entries (customer_id, float_id, id);
CREATE FUNCTION float_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'float_entries is append-only: % refused', TG_OP;
END
$$;
CREATE TRIGGER float_entries_no_update_delete BEFORE UPDATE OR DELETE ON float_entries
  FOR EACH ROW EXECUTE FUNCTION float_entries_append_only();
CREATE TRIGGER float_entries_no_truncate BEFORE TRUNCATE ON float_entries
  FOR EACH STATEMENT EXECUTE FUNCTION float_entries_append_only();

ALTER TABLE movements
  ADD COLUMN float_id uuid,
  ADD COLUMN float_seq integer CHECK (float_seq BETWEEN 1 AND 16777215),
  ADD COLUMN reported_as text CHECK (reported_as IN ('till', 'found', 'operator')),
  ADD COLUMN report_flags text[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT movements_float CHECK (
    (float_id IS NULL) = (float_seq IS NULL) AND (float_id IS NULL) = (reported_as IS NULL)
    AND (float_id IS NULL OR kind = 'recharge')),
  ADD CONSTRAINT movements_float_fkey FOREIGN KEY (customer_id, float_id)
    REFERENCES floats (customer_id, id);
CREATE UNIQUE INDEX movements_float_seq ON movements (customer_id, float_id, float_seq)
  WHERE float_id IS NOT NULL;

ALTER TABLE ledger_entries ADD COLUMN float_id uuid;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_operation_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_operation_check
  CHECK (operation IN ('open', 'topup', 'reserve', 'release', 'return', 'float-out', 'float-in'));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_movement_or_source CHECK (
  (movement_id IS NULL) = (operation IN ('open', 'topup', 'float-out', 'float-in'))
  AND (float_id IS NOT NULL) = (operation IN ('float-out', 'float-in')));
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_float_fkey
  FOREIGN KEY (customer_id, float_id) REFERENCES floats (customer_id, id);

ALTER TABLE tills ADD COLUMN last_report_at timestamptz;

ALTER TABLE card_flags DROP CONSTRAINT card_flags_kind_check;
ALTER TABLE card_flags ADD CONSTRAINT card_flags_kind_check
  CHECK (kind IN ('discharge-exceeds-account', 'overdrawn-before-accounts', 'card-above-account',
                  'compensation-refused', 'forged-float-movement'));
`,
};
