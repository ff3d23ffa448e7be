/**
 * Migration 10: the shop's back office (docs/operators.md, "The back office").
 *
 * - `customers.time_zone`, `customers.till_quiet_minutes`: a shop's day is its local day (day
 *   reports count posted movements by `occurred_at` in this zone, so a DST day has 23 or 25
 *   hours), and a till not heard from for longer than the bound is marked quiet.
 * - `tills`: the name the owner gives a till, and what its last heartbeat said (version, reader,
 *   its movements pending and waiting for their card, and the float it reported, once tills
 *   have one: `reported_float`, kept as sent).
 * - `operators`, `operator_shops`: the console's accounts (provider admin, shop owner, staff)
 *   with scrypt password hashes; owners and staff see only their shops.
 * - `console_sessions`: server-side sessions, stored by the hash of their id; `console_secret`:
 *   what signs the session and CSRF cookies, shared by every ledger process of the database.
 * - `console_setup_links`: the one-time link that makes a standalone till's first owner.
 * - `audit_log`: every operator action, append-only and hash-chained (each row holds the hash
 *   of the row before it), one chain per shop and one for the provider's own actions;
 *   `audit_log_start` says from when operator-made movements must have their row
 *   (`card-wallet-cloud check`).
 * - Accounts, sessions and the secret are the provider's, like `api_keys`: small tables every
 *   node of a distributed database holds; everything of a shop is keyed by its customer.
 * - `daily_takings`: the posted movements of each shop's local day (by `occurred_at` in its time
 *   zone), summed per till, kind and compensation, kept in the transaction of each post (a
 *   trigger, cloud/db/routines/) and made anew when a shop's time zone changes: the day report
 *   and the takings chart read days, not movements. `card-wallet-cloud check` proves it equal
 *   to the movements. Filled here from the movements posted before (every shop is on UTC now).
 */
export const migration010 = {
  version: 10,
  name: 'back-office',
  sql: /* sql */ `
ALTER TABLE customers
  ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC'
    CHECK (time_zone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$' AND length(time_zone) <= 64),
  ADD COLUMN till_quiet_minutes integer NOT NULL DEFAULT 15
    CHECK (till_quiet_minutes BETWEEN 2 AND 10080);

ALTER TABLE tills
  ADD COLUMN name text CHECK (name ~ '^\\S(.*\\S)?$' AND length(name) <= 60),
  ADD COLUMN last_seen_at timestamptz,
  ADD COLUMN version text CHECK (version ~ '^[\\x21-\\x7e]{1,40}$'),
  ADD COLUMN reader_state text CHECK (reader_state IN ('ready', 'no-reader', 'unavailable', 'stopped')),
  ADD COLUMN reader_name text CHECK (length(reader_name) BETWEEN 1 AND 200),
  ADD COLUMN reader_problem text CHECK (reader_problem ~ '^[a-z][a-z-]{0,39}$'),
  ADD COLUMN pending_movements integer CHECK (pending_movements >= 0),
  ADD COLUMN waiting_movements integer CHECK (waiting_movements >= 0),
  ADD COLUMN reported_float jsonb CHECK (jsonb_typeof(reported_float) = 'object');

CREATE TABLE operators (
  id uuid PRIMARY KEY,
  login text NOT NULL CHECK (login ~ '^[a-z0-9][a-z0-9._@-]{2,63}$'),
  name text NOT NULL CHECK (name ~ '^\\S(.*\\S)?$' AND length(name) <= 100),
  role text NOT NULL CHECK (role IN ('admin', 'owner', 'staff')),
  password_hash text NOT NULL CHECK (password_hash ~ '^scrypt\\$'),
  must_change_password boolean NOT NULL DEFAULT false,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by uuid REFERENCES operators (id)
);
CREATE UNIQUE INDEX operators_login ON operators (login);

CREATE TABLE operator_shops (
  customer_id uuid NOT NULL REFERENCES customers (id),
  operator_id uuid NOT NULL REFERENCES operators (id),
  PRIMARY KEY (customer_id, operator_id)
);
CREATE INDEX operator_shops_operator ON operator_shops (operator_id);

CREATE TABLE console_sessions (
  id_hash text PRIMARY KEY CHECK (id_hash ~ '^[0-9a-f]{64}$'),
  operator_id uuid NOT NULL REFERENCES operators (id),
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_operator ON console_sessions (operator_id);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

CREATE TABLE console_secret (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  secret text NOT NULL CHECK (length(secret) >= 64),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE console_setup_links (
  customer_id uuid NOT NULL REFERENCES customers (id),
  token_hash text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  used_at timestamptz,
  replaced_at timestamptz,
  PRIMARY KEY (customer_id, token_hash)
);
CREATE UNIQUE INDEX console_setup_links_token ON console_setup_links (token_hash);

-- One chain per shop (customer_id), and one for the provider's own actions (the nil UUID):
-- keyed by its customer like every table, so a shop's chain lives with its rows.
CREATE TABLE audit_log (
  customer_id uuid NOT NULL,
  seq bigint NOT NULL CHECK (seq >= 1),
  at timestamptz NOT NULL,
  actor text NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  operator_id uuid,
  action text NOT NULL CHECK (action ~ '^[a-z]+(\\.[a-z-]+)+$'),
  subject text CHECK (length(subject) BETWEEN 1 AND 200),
  reason text CHECK (length(reason) BETWEEN 1 AND 500),
  detail text NOT NULL,
  prev_hash text NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  PRIMARY KEY (customer_id, seq)
);
CREATE INDEX audit_log_subject ON audit_log (customer_id, subject) WHERE subject IS NOT NULL;

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP;
END
$$;
CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TABLE audit_log_start (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO audit_log_start DEFAULT VALUES;

-- till_id: the nil UUID for movements made before tills were named.
CREATE TABLE daily_takings (
  customer_id uuid NOT NULL REFERENCES customers (id),
  day date NOT NULL,
  till_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('recharge', 'discharge')),
  compensation boolean NOT NULL,
  movements integer NOT NULL CHECK (movements >= 0),
  credits bigint NOT NULL CHECK (credits >= 0),
  euros numeric(24, 4) NOT NULL CHECK (euros >= 0),
  PRIMARY KEY (customer_id, day, till_id, kind, compensation)
);
INSERT INTO daily_takings (customer_id, day, till_id, kind, compensation, movements, credits, euros)
SELECT customer_id, (occurred_at AT TIME ZONE 'UTC')::date,
       coalesce(till_id, '00000000-0000-0000-0000-000000000000'), kind, compensates IS NOT NULL,
       count(*), sum(credits), sum(amount)
FROM movements WHERE state = 'posted'
GROUP BY 1, 2, 3, 4, 5;
`,
};
