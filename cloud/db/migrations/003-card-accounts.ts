/**
 * Migration 3: every card has an account per shop, so that a discharge can never pay out more
 * than the shop has put on the card, whatever the card itself claims. Independent of migration 2
 * (void tombstones): it only adds tables.
 *
 * - card_accounts: per (shop, card) the credits a discharge may still take: imported + posted
 *   recharges - posted discharges - pending discharges. Never negative (a CHECK, not only code).
 * - card_imports: the balances of cards a shop sold before it used this ledger (once per card).
 * - card_flags: why a card is suspect (a discharge for more than its account, ...), append-only.
 */
export const migration003 = {
  version: 3,
  name: 'card-accounts',
  sql: /* sql */ `
CREATE TABLE card_accounts (
  customer_id uuid NOT NULL REFERENCES customers (id),
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  credits bigint NOT NULL DEFAULT 0
    CONSTRAINT card_accounts_credits_non_negative CHECK (credits >= 0),
  -- Credits paid out beyond what was put on the card before this migration existed: written
  -- off once, so that the account starts at 0 and "credits = imported + posted recharges -
  -- posted and pending discharges + legacy_overdraw" holds for every card.
  legacy_overdraw bigint NOT NULL DEFAULT 0 CHECK (legacy_overdraw >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, card_id)
);

CREATE TABLE card_imports (
  customer_id uuid NOT NULL REFERENCES customers (id),
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  credits bigint NOT NULL CHECK (credits >= 0 AND credits <= 2147483647),
  imported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, card_id)
);

CREATE TABLE card_flags (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  kind text NOT NULL CHECK (kind IN ('discharge-exceeds-account', 'overdrawn-before-accounts')),
  -- The refused movement's id: a retry of the same refused request adds no second flag.
  movement_id uuid,
  requested_credits bigint,
  account_credits bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_flags_card ON card_flags (customer_id, card_id, id);
CREATE UNIQUE INDEX card_flags_movement ON card_flags (movement_id) WHERE movement_id IS NOT NULL;
CREATE INDEX movements_customer_card ON movements (customer_id, card_id, created_at DESC, id DESC);

CREATE FUNCTION card_flags_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'card_flags is append-only: % refused', TG_OP;
END
$$;
CREATE TRIGGER card_flags_no_update_delete BEFORE UPDATE OR DELETE ON card_flags
  FOR EACH ROW EXECUTE FUNCTION card_flags_append_only();

-- Cards already moved before this migration get the account their movements imply; one that
-- paid out more than it was loaded starts at 0, its overdraw written off and flagged.
INSERT INTO card_accounts (customer_id, card_id, credits, legacy_overdraw)
SELECT customer_id, card_id, GREATEST(0, net), GREATEST(0, -net)
FROM (SELECT customer_id, card_id, sum(CASE
        WHEN kind = 'recharge' AND state = 'posted' THEN credits
        WHEN kind = 'discharge' AND state IN ('pending', 'posted') THEN -credits
        ELSE 0 END) AS net
      FROM movements GROUP BY customer_id, card_id) moved;
INSERT INTO card_flags (customer_id, card_id, kind, account_credits)
SELECT customer_id, card_id, 'overdrawn-before-accounts', -legacy_overdraw
FROM card_accounts WHERE legacy_overdraw > 0;
`,
};
