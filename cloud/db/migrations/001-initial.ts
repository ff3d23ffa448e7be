/**
 * Migration 1: customers, api keys, movements and the append-only ledger entries.
 * Migrations are TypeScript modules holding SQL text so that the built package (dist/ only)
 * carries them; a migration, once released, is never edited: add the next one instead.
 */
export const migration001 = {
  version: 1,
  name: 'initial',
  sql: /* sql */ `
CREATE TABLE customers (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  credits bigint NOT NULL
    CONSTRAINT customers_credits_non_negative CHECK (credits >= 0)
    CONSTRAINT customers_credits_safe_integer CHECK (credits <= 9007199254740991),
  credit_cost numeric(12, 4) NOT NULL
    CONSTRAINT customers_credit_cost_positive CHECK (credit_cost > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of each key is stored (hex). No customer: the key is valid but unassigned.
CREATE TABLE api_keys (
  key_hash text PRIMARY KEY CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  customer_id uuid REFERENCES customers (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  assigned_at timestamptz,
  revoked_at timestamptz,
  CHECK ((customer_id IS NULL) = (assigned_at IS NULL))
);
CREATE INDEX api_keys_customer ON api_keys (customer_id);

CREATE TABLE movements (
  id uuid PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  kind text NOT NULL CHECK (kind IN ('recharge', 'discharge')),
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'posted', 'voided')),
  credits integer NOT NULL CHECK (credits > 0),
  credit_cost numeric(12, 4) NOT NULL CHECK (credit_cost > 0),
  amount numeric(24, 4) GENERATED ALWAYS AS (credits * credit_cost) STORED,
  -- The amount the caller asked for (recharge by amount), kept to recognise a replay.
  requested_amount numeric(14, 2) CHECK (requested_amount > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz,
  CHECK ((state = 'pending') = (resolved_at IS NULL)),
  CHECK (requested_amount IS NULL OR kind = 'recharge')
);
CREATE INDEX movements_customer_created ON movements (customer_id, created_at DESC, id DESC);
CREATE INDEX movements_customer_pending ON movements (customer_id, created_at DESC, id DESC)
  WHERE state = 'pending';

-- One row per balance change, written in the same transaction as the change:
-- open/topup (admin), reserve (recharge pending), release (recharge void),
-- return (discharge post). balance = sum(delta) for every customer.
CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  movement_id uuid REFERENCES movements (id),
  operation text NOT NULL CHECK (operation IN ('open', 'topup', 'reserve', 'release', 'return')),
  delta bigint NOT NULL CHECK (delta <> 0),
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((movement_id IS NULL) = (operation IN ('open', 'topup')))
);
CREATE INDEX ledger_entries_customer ON ledger_entries (customer_id, id);
CREATE INDEX ledger_entries_movement ON ledger_entries (movement_id) WHERE movement_id IS NOT NULL;

CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only: % refused', TG_OP;
END
$$;
CREATE TRIGGER ledger_entries_no_update_delete BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();
`,
};
