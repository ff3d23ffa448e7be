/**
 * Migration 6: every contract call in one round trip, every table keyed by its customer.
 *
 * - `ledger_create_movement` and `ledger_resolve_movement` are the create, post and void of
 *   contract v1 as server-side functions: the same statements, locks (the id's advisory lock,
 *   the customer's row, the card's account, the movement's row, in that order) and answers the
 *   ledger used to send one at a time (about 13 round trips per movement, each waiting for the
 *   last). A refusal is an answer (`error`, `detail`), not an exception, so a flag written for a
 *   refused movement is committed with it, and nothing else was written before any refusal.
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

-- What a contract call answers: a refusal (error, detail) or the movement, with the pool.
CREATE TYPE ledger_answer AS (
  error text,
  detail text,
  replayed boolean,
  customer_credits bigint,
  id uuid,
  customer_id uuid,
  kind text,
  card_id text,
  state text,
  credits integer,
  credit_cost numeric,
  amount numeric,
  requested_amount numeric,
  created_at timestamptz,
  resolved_at timestamptz,
  till_id uuid,
  card_before text,
  compensates uuid,
  resolved_by_till uuid,
  evidence text
);

CREATE FUNCTION ledger_refusal(p_error text, p_detail text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  answer ledger_answer;
BEGIN
  answer.error := p_error;
  answer.detail := p_detail;
  RETURN answer;
END
$$;

CREATE FUNCTION ledger_answer_of(m movements, p_replayed boolean, p_pool bigint)
RETURNS ledger_answer LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(NULL, NULL, p_replayed, p_pool, m.id, m.customer_id, m.kind, m.card_id, m.state,
             m.credits, m.credit_cost, m.amount, m.requested_amount, m.created_at, m.resolved_at,
             m.till_id, m.card_before, m.compensates, m.resolved_by_till, m.evidence)::ledger_answer
$$;

-- The same id again: the stored movement as of now when it is the same request (same
-- customer, kind, card, till, compensated movement, and credits or amount), else a conflict.
CREATE FUNCTION ledger_replay(m movements, p_customer uuid, p_kind text, p_card text,
                              p_credits bigint, p_amount numeric, p_till uuid,
                              p_compensates uuid, p_pool bigint)
RETURNS ledger_answer LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN m.customer_id = p_customer AND m.kind = p_kind AND m.card_id = p_card
         AND m.till_id IS NOT DISTINCT FROM p_till
         AND m.compensates IS NOT DISTINCT FROM p_compensates
         AND CASE WHEN p_amount IS NULL
                  THEN m.requested_amount IS NULL AND m.credits = p_credits
                  ELSE m.requested_amount = p_amount END
    THEN ledger_answer_of(m, true, p_pool)
    ELSE ledger_refusal('MovementIdConflict') END
$$;

-- A balance change and its ledger entry, in one statement. The CHECK refuses a negative pool.
CREATE FUNCTION ledger_change_balance(p_customer uuid, p_delta bigint, p_operation text,
                                      p_movement uuid)
RETURNS bigint LANGUAGE sql AS $$
  WITH changed AS (
    UPDATE customers SET credits = credits + p_delta WHERE id = p_customer RETURNING id, credits
  )
  INSERT INTO ledger_entries (customer_id, movement_id, operation, delta, balance_after)
  SELECT id, p_movement, p_operation, p_delta, credits FROM changed
  RETURNING balance_after
$$;

-- Marks a card suspect; a retry of the same refused movement adds no second flag.
CREATE FUNCTION ledger_flag_card(p_customer uuid, p_card text, p_kind text, p_movement uuid,
                                 p_requested bigint, p_account bigint)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO card_flags (customer_id, card_id, kind, movement_id, requested_credits, account_credits)
  VALUES (p_customer, p_card, p_kind, p_movement, p_requested, p_account)
  ON CONFLICT (customer_id, movement_id) WHERE movement_id IS NOT NULL DO NOTHING
$$;

-- The caller's API key is still valid for this customer. A key's customer never changes, so the
-- ledger knows it from the key's first request; whether the key is revoked is read here, in the
-- call's own transaction, so a call needs no round trip of its own for the key. NULL: checked
-- by the caller already (the admin CLI, a first request).
CREATE FUNCTION ledger_key_holds(p_key_hash text, p_customer uuid)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT p_key_hash IS NULL OR EXISTS (
    SELECT 1 FROM api_keys
    WHERE key_hash = p_key_hash AND customer_id = p_customer AND revoked_at IS NULL)
$$;

-- POST /v1/movements (docs/cloud-api.md). p_credits or p_amount (a recharge by amount).
-- p_key_hash (optional): the caller's API key, checked in this transaction (see below).
CREATE FUNCTION ledger_create_movement(
  p_customer uuid, p_id uuid, p_kind text, p_card text, p_credits bigint, p_amount numeric,
  p_card_credits bigint, p_refuse_above boolean, p_till uuid, p_card_before text,
  p_compensates uuid, p_key_hash text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  m movements%ROWTYPE;
  v_credits bigint;
  v_account bigint := 0;
  v_allowed bigint;
  v_holder uuid;
  v_pool bigint;
  v_other record;
  v_checks_card boolean;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  -- The id's lock first (a void of an unknown id takes it too): a create and a tombstone of one
  -- id never both happen. Then a recharge locks the customer row: the pool check, the
  -- reservation and the idempotency check see no concurrent change of this customer. Then the
  -- card's account. Always in this order, so they never deadlock.
  PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
  IF p_kind = 'recharge' THEN
    SELECT * INTO c FROM customers WHERE id = p_customer FOR UPDATE;
  ELSE
    SELECT * INTO c FROM customers WHERE id = p_customer;
  END IF;
  IF NOT FOUND THEN
    RETURN ledger_refusal('CustomerNotFound');
  END IF;

  -- Movement ids are unique across customers on one node (the unique index on id): another
  -- customer's id, or its tombstone, is a conflict.
  SELECT * INTO m FROM movements WHERE id = p_id;
  IF FOUND THEN
    RETURN ledger_replay(m, p_customer, p_kind, p_card, p_credits, p_amount, p_till,
                         p_compensates, c.credits);
  END IF;
  SELECT customer_id INTO v_holder FROM void_tombstones WHERE id = p_id;
  IF FOUND THEN
    -- Voided before it arrived: refused, and answered as voided, every time it comes.
    RETURN ledger_refusal(CASE WHEN v_holder = p_customer THEN 'MovementAlreadyVoided'
                                                          ELSE 'MovementIdConflict' END);
  END IF;

  -- credits = floor(amount / creditCost), exactly: both as integer ten-thousandths.
  v_credits := CASE WHEN p_amount IS NULL THEN p_credits
                    ELSE div(p_amount * 10000, c.credit_cost * 10000) END;
  IF v_credits < 1 THEN
    RETURN ledger_refusal('AmountBelowOneCredit');
  END IF;
  IF v_credits > 2147483647 THEN
    RETURN ledger_refusal('InvalidMovement', 'amount: worth more than 2147483647 credits');
  END IF;
  IF p_compensates IS NOT NULL THEN
    PERFORM 1 FROM movements
    WHERE customer_id = p_customer AND id = p_compensates AND card_id = p_card
      AND state <> 'pending';
    IF NOT FOUND THEN
      RETURN ledger_refusal('InvalidCompensation',
        format('compensates: %s is no resolved movement of this shop and card', p_compensates));
    END IF;
  END IF;

  IF p_kind = 'recharge' AND c.credits < v_credits THEN
    IF p_compensates IS NULL THEN
      RETURN ledger_refusal('NoCredits');
    END IF;
    -- A refused compensation is a disagreement the shop must see.
    SELECT credits INTO v_account FROM card_accounts
    WHERE customer_id = p_customer AND card_id = p_card FOR UPDATE;
    PERFORM ledger_flag_card(p_customer, p_card, 'compensation-refused', p_id, v_credits,
                             COALESCE(v_account, 0));
    RETURN ledger_refusal('NoCredits');
  END IF;

  -- The card's account is locked before the id is looked up again: a same-id request that
  -- changed it meanwhile is then seen, and answered as a replay.
  v_checks_card := p_kind = 'discharge'
    OR (p_compensates IS NULL AND (p_till IS NOT NULL OR p_card_credits IS NOT NULL));
  IF v_checks_card THEN
    SELECT credits INTO v_account FROM card_accounts
    WHERE customer_id = p_customer AND card_id = p_card FOR UPDATE;
    v_account := COALESCE(v_account, 0);
    SELECT * INTO m FROM movements WHERE id = p_id;
    IF FOUND THEN
      RETURN ledger_replay(m, p_customer, p_kind, p_card, p_credits, p_amount, p_till,
                           p_compensates, c.credits);
    END IF;
  END IF;
  IF p_till IS NOT NULL AND p_compensates IS NULL THEN
    -- Another till's write to this card may still have to be decided on the card: a write
    -- from this till now would destroy the evidence (docs/cloud-api.md, "Tills").
    SELECT id, till_id INTO v_other FROM movements
    WHERE customer_id = p_customer AND card_id = p_card AND state = 'pending'
      AND till_id IS DISTINCT FROM p_till AND compensates IS NULL
    ORDER BY created_at, id LIMIT 1;
    IF FOUND THEN
      RETURN ledger_refusal('CardMovementPending',
        format('movement %s of till %s is pending on card %s', v_other.id,
               COALESCE(v_other.till_id::text, '(unnamed)'), p_card));
    END IF;
  END IF;
  IF p_kind = 'recharge' AND p_card_credits IS NOT NULL AND p_compensates IS NULL THEN
    -- A card may hold less than its account (spent offline), never more. Pending movements
    -- count: their credits may be on the card.
    SELECT v_account + COALESCE(sum(credits), 0) INTO v_allowed FROM movements
    WHERE customer_id = p_customer AND card_id = p_card AND state = 'pending';
    IF p_card_credits > v_allowed THEN
      PERFORM ledger_flag_card(p_customer, p_card, 'card-above-account', p_id, p_card_credits,
                               v_allowed);
      IF p_refuse_above IS TRUE THEN
        RETURN ledger_refusal('CardAccountExceeded');
      END IF;
    END IF;
  END IF;
  IF p_kind = 'discharge' AND v_account < v_credits THEN
    PERFORM ledger_flag_card(p_customer, p_card,
      CASE WHEN p_compensates IS NULL THEN 'discharge-exceeds-account'
           ELSE 'compensation-refused' END,
      p_id, v_credits, v_account);
    RETURN ledger_refusal('CardAccountExceeded');
  END IF;

  -- ON CONFLICT: a concurrent insert of the same id (another customer, or a discharge that
  -- takes no row lock) makes this wait for it, then yields no row: answered as a replay.
  INSERT INTO movements (id, customer_id, kind, card_id, credits, credit_cost, requested_amount,
                         till_id, card_before, compensates)
  VALUES (p_id, p_customer, p_kind, p_card, v_credits, c.credit_cost, p_amount, p_till,
          p_card_before, p_compensates)
  ON CONFLICT (id) DO NOTHING
  RETURNING * INTO m;
  IF NOT FOUND THEN
    SELECT * INTO m FROM movements WHERE id = p_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'movement % conflicted but is not found', p_id;
    END IF;
    RETURN ledger_replay(m, p_customer, p_kind, p_card, p_credits, p_amount, p_till,
                         p_compensates, c.credits);
  END IF;
  IF p_kind = 'discharge' THEN
    UPDATE card_accounts SET credits = credits - v_credits
    WHERE customer_id = p_customer AND card_id = p_card;
    v_pool := c.credits;
  ELSE
    v_pool := ledger_change_balance(p_customer, -v_credits, 'reserve', p_id);
  END IF;
  RETURN ledger_answer_of(m, false, v_pool);
END
$$;

-- POST /v1/movements/{id}/post and /void (p_target 'posted' or 'voided').
CREATE FUNCTION ledger_resolve_movement(p_customer uuid, p_id uuid, p_target text, p_till uuid,
                                        p_evidence text, p_key_hash text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  m movements%ROWTYPE;
  v_pool bigint;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  SELECT * INTO m FROM movements WHERE customer_id = p_customer AND id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    IF p_target <> 'voided' THEN
      RETURN ledger_refusal('MovementNotFound');
    END IF;
    -- A void of an id the ledger does not hold leaves a tombstone, so a create of that id
    -- arriving later is refused. Under the id's lock, a create of it has either committed
    -- (seen now) or waits for this.
    PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
    SELECT * INTO m FROM movements WHERE customer_id = p_customer AND id = p_id FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO void_tombstones (id, customer_id)
      SELECT p_id, p_customer WHERE NOT EXISTS (SELECT 1 FROM movements WHERE id = p_id)
      ON CONFLICT DO NOTHING;
      RETURN ledger_refusal('MovementNotFound');
    END IF;
  END IF;
  IF m.state = p_target THEN
    RETURN ledger_answer_of(m, false, (SELECT credits FROM customers WHERE id = p_customer));
  END IF;
  IF m.state = 'voided' THEN
    RETURN ledger_refusal('MovementAlreadyVoided');
  END IF;
  IF m.state = 'posted' THEN
    RETURN ledger_refusal('MovementAlreadyPosted');
  END IF;
  IF m.till_id IS NOT NULL AND p_till IS NOT NULL AND p_till <> m.till_id
     AND p_evidence IS NULL THEN
    -- Only the till that made a movement knows what its card write did; anyone else needs
    -- evidence (docs/cloud-api.md, "Tills").
    RETURN ledger_refusal('MovementOfAnotherTill',
      format('movement %s was made by till %s', p_id, m.till_id));
  END IF;

  UPDATE movements
  SET state = p_target, resolved_at = now(), resolved_by_till = p_till, evidence = p_evidence
  WHERE customer_id = p_customer AND id = p_id
  RETURNING * INTO m;
  -- The pool changes back only when credits come home: a voided recharge releases its
  -- reservation, a posted discharge returns the card's credits.
  IF m.kind = 'recharge' AND p_target = 'voided' THEN
    v_pool := ledger_change_balance(p_customer, m.credits, 'release', p_id);
  ELSIF m.kind = 'discharge' AND p_target = 'posted' THEN
    v_pool := ledger_change_balance(p_customer, m.credits, 'return', p_id);
  ELSE
    SELECT credits INTO v_pool FROM customers WHERE id = p_customer;
  END IF;
  -- A card's account grows when a recharge is final, and gets back a voided discharge.
  IF (m.kind = 'recharge' AND p_target = 'posted')
     OR (m.kind = 'discharge' AND p_target = 'voided') THEN
    INSERT INTO card_accounts (customer_id, card_id, credits)
    VALUES (p_customer, m.card_id, m.credits)
    ON CONFLICT (customer_id, card_id)
    DO UPDATE SET credits = card_accounts.credits + EXCLUDED.credits;
  END IF;
  RETURN ledger_answer_of(m, false, v_pool);
END
$$;
`,
};
