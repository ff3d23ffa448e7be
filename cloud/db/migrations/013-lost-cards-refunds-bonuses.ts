/**
 * Migration 13: lost cards, refunds and bonuses (docs/cloud-api.md, "Lost cards, refunds and
 * bonuses").
 *
 * - `customers`: the cashier's undo window (seconds by the till's clock, 0: no undo), how a
 *   payout spends a card's bonus credits, when the bonus tiers last changed, and the card
 *   list's sequence number (every block, unblock, replacement and correction moves it on: the
 *   ETag tills poll with, and the blocklist feed's `seq`).
 * - `bonus_tiers`: a shop's tiers (none: no bonus, the default): from an amount paid, a fixed
 *   number of credits or a percentage of the credits paid for.
 * - `card_blocks`: each block of a card with who and why, and its lifting; one open block per
 *   card (a unique index).
 * - `card_changes`: what waits for a card at the next till POST: a replacement (a blocked
 *   card's account moved to a new card) or an operator's correction (credits of a recharge
 *   taken back); applied by exactly one movement (`movements.applies`, a unique index).
 * - `blocklist_keys`: each shop's Ed25519 key that signs the blocklist feed for machines.
 * - `card_accounts`: bonus credits (a part of `credits`) and the euros paid for the rest
 *   (`paid_amount`). Accounts from before are valued at the shop's credit cost now;
 *   `opening_amount` is what makes "paid amount = opening + its movements" hold for them.
 * - `card_imports.amount`: what an import is valued at (its credits at the cost then).
 * - `movements`: the kinds refund (a cashier's undo), correction, replacement and block-clear
 *   (a blocked card emptied at a till: credits 0 allowed); `bonus_credits` (given by a
 *   recharge, forfeited by a payout, carried by a replacement); `paid_amount` (the euros the
 *   movement puts into or takes out of its card's account); `refunds` (the recharge a refund or
 *   correction takes back), `applies` (the card change it applies), `till_time` (a refund's
 *   time by its till's clock). `amount` is no longer computed: a bonus recharge's amount is
 *   what was paid, a payout's what the bonus rule pays out.
 * - `card_holders`: a card's optional holder label (a name or a phone number, the shop's choice),
 *   so a customer who lost an anonymous card can be found; deleted on request (the row goes).
 * - `daily_takings`: every posted kind, and the bonus credits of each row (given by recharges,
 *   forfeited by payouts, taken back by refunds and corrections), for the day report.
 */
export const migration013 = {
  version: 13,
  name: 'lost-cards-refunds-bonuses',
  sql: /* sql */ `
ALTER TABLE customers
  ADD COLUMN undo_window_s integer NOT NULL DEFAULT 600
    CONSTRAINT customers_undo_window CHECK (undo_window_s BETWEEN 0 AND 86400),
  ADD COLUMN bonus_spend text NOT NULL DEFAULT 'bonus-first'
    CONSTRAINT customers_bonus_spend CHECK (bonus_spend IN ('bonus-first', 'bonus-last')),
  ADD COLUMN bonus_changed_at timestamptz,
  ADD COLUMN card_list_seq bigint NOT NULL DEFAULT 0 CHECK (card_list_seq >= 0),
  ADD COLUMN card_list_changed_at timestamptz;

CREATE TABLE bonus_tiers (
  customer_id uuid NOT NULL REFERENCES customers (id),
  min_amount numeric(14, 2) NOT NULL CHECK (min_amount > 0),
  bonus_credits integer CHECK (bonus_credits > 0),
  bonus_percent numeric(5, 2) CHECK (bonus_percent > 0 AND bonus_percent <= 100),
  PRIMARY KEY (customer_id, min_amount),
  CHECK ((bonus_credits IS NULL) <> (bonus_percent IS NULL))
);

CREATE TABLE card_blocks (
  customer_id uuid NOT NULL REFERENCES customers (id),
  id bigint GENERATED ALWAYS AS IDENTITY,
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  blocked_at timestamptz NOT NULL DEFAULT now(),
  blocked_by text NOT NULL CHECK (length(blocked_by) BETWEEN 1 AND 200),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  lifted_at timestamptz,
  lifted_by text CHECK (length(lifted_by) BETWEEN 1 AND 200),
  lift_reason text CHECK (length(lift_reason) BETWEEN 1 AND 500),
  PRIMARY KEY (customer_id, id),
  CHECK ((lifted_at IS NULL) = (lifted_by IS NULL) AND (lifted_at IS NULL) = (lift_reason IS NULL))
);
CREATE UNIQUE INDEX card_blocks_open ON card_blocks (customer_id, card_id) WHERE lifted_at IS NULL;
CREATE INDEX card_blocks_card ON card_blocks (customer_id, card_id, id);

CREATE TABLE card_changes (
  customer_id uuid NOT NULL REFERENCES customers (id),
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('replacement', 'correction')),
  -- The card it waits for.
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  from_card text CHECK (from_card ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  corrects uuid,
  credits bigint NOT NULL CHECK (credits BETWEEN 1 AND 2147483647),
  bonus_credits bigint NOT NULL DEFAULT 0 CHECK (bonus_credits >= 0 AND bonus_credits <= credits),
  paid_amount numeric(24, 4) NOT NULL DEFAULT 0 CHECK (paid_amount >= 0),
  state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'applied', 'cancelled')),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  created_by text NOT NULL CHECK (length(created_by) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz,
  cancelled_by text CHECK (length(cancelled_by) BETWEEN 1 AND 200),
  cancel_reason text CHECK (length(cancel_reason) BETWEEN 1 AND 500),
  movement_id uuid,
  PRIMARY KEY (customer_id, id),
  CHECK ((kind = 'replacement') = (from_card IS NOT NULL) AND from_card IS DISTINCT FROM card_id),
  CHECK ((kind = 'correction') = (corrects IS NOT NULL)),
  CHECK ((state = 'waiting') = (resolved_at IS NULL)),
  CHECK ((state = 'applied') = (movement_id IS NOT NULL)),
  CHECK ((state = 'cancelled') = (cancel_reason IS NOT NULL) AND (cancelled_by IS NULL) = (cancel_reason IS NULL))
);
CREATE UNIQUE INDEX card_changes_id ON card_changes (id);
CREATE INDEX card_changes_waiting ON card_changes (customer_id, card_id) WHERE state = 'waiting';
CREATE INDEX card_changes_card ON card_changes (customer_id, card_id, created_at);
CREATE INDEX card_changes_from ON card_changes (customer_id, from_card) WHERE from_card IS NOT NULL;

CREATE TABLE blocklist_keys (
  customer_id uuid PRIMARY KEY REFERENCES customers (id),
  key_id text NOT NULL CHECK (key_id ~ '^[0-9a-f]{16}$'),
  -- The raw 32-byte public key and the PKCS #8 private key, hex.
  public_key text NOT NULL CHECK (public_key ~ '^[0-9a-f]{64}$'),
  private_key text NOT NULL CHECK (private_key ~ '^[0-9a-f]+$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE card_accounts
  ADD COLUMN bonus_credits bigint NOT NULL DEFAULT 0,
  ADD COLUMN paid_amount numeric(24, 4) NOT NULL DEFAULT 0,
  ADD COLUMN opening_amount numeric(24, 4) NOT NULL DEFAULT 0,
  ADD CONSTRAINT card_accounts_paid_and_bonus CHECK (bonus_credits >= 0 AND bonus_credits <= credits),
  ADD CONSTRAINT card_accounts_paid_amount CHECK (paid_amount >= 0);

ALTER TABLE card_imports ADD COLUMN amount numeric(24, 4) CHECK (amount >= 0);

ALTER TABLE movements ALTER COLUMN amount DROP EXPRESSION;
ALTER TABLE movements ALTER COLUMN amount SET NOT NULL;
ALTER TABLE movements
  ADD COLUMN bonus_credits bigint NOT NULL DEFAULT 0,
  ADD COLUMN paid_amount numeric(24, 4),
  ADD COLUMN refunds uuid,
  ADD COLUMN applies uuid,
  ADD COLUMN till_time timestamptz,
  DROP CONSTRAINT movements_kind_check,
  ADD CONSTRAINT movements_kind_check CHECK (kind IN ('recharge', 'discharge', 'refund',
    'correction', 'replacement', 'block-clear')),
  DROP CONSTRAINT movements_credits_check,
  ADD CONSTRAINT movements_credits_check CHECK (credits > 0 OR (kind = 'block-clear' AND credits = 0)),
  ADD CONSTRAINT movements_amount CHECK (amount >= 0),
  ADD CONSTRAINT movements_bonus CHECK (bonus_credits >= 0 AND bonus_credits <= credits),
  ADD CONSTRAINT movements_refunds CHECK ((refunds IS NOT NULL) = (kind IN ('refund', 'correction'))),
  ADD CONSTRAINT movements_applies CHECK ((applies IS NOT NULL) = (kind IN ('replacement', 'correction')));
-- The day's takings count every posted movement by kind (migration 10 knew two).
ALTER TABLE daily_takings
  DROP CONSTRAINT daily_takings_kind_check,
  ADD CONSTRAINT daily_takings_kind_check CHECK (kind IN ('recharge', 'discharge', 'refund',
    'correction', 'replacement', 'block-clear'));
UPDATE movements SET paid_amount = amount;
ALTER TABLE movements ALTER COLUMN paid_amount SET NOT NULL;
ALTER TABLE movements ADD CONSTRAINT movements_paid_amount CHECK (paid_amount >= 0);
-- A recharge is undone by a cashier at most once; a card change is applied at most once.
CREATE UNIQUE INDEX movements_refund_once ON movements (customer_id, refunds)
  WHERE kind = 'refund' AND state <> 'voided';
CREATE UNIQUE INDEX movements_applies_once ON movements (customer_id, applies)
  WHERE applies IS NOT NULL AND state <> 'voided';
CREATE INDEX movements_customer_refunds ON movements (customer_id, refunds)
  WHERE refunds IS NOT NULL;

-- Accounts from before: valued at the shop's credit cost now, and the opening amount set so
-- that paid_amount = opening + what their movements put in and took out.
UPDATE card_accounts a SET paid_amount = a.credits * c.credit_cost
FROM customers c WHERE c.id = a.customer_id;
UPDATE card_accounts SET opening_amount = paid_amount;
UPDATE card_accounts a SET opening_amount = a.paid_amount - h.net
FROM (SELECT customer_id, card_id, sum(CASE
        WHEN kind = 'recharge' AND state = 'posted' THEN paid_amount
        WHEN kind = 'discharge' AND state IN ('pending', 'posted') THEN -paid_amount
        ELSE 0 END) AS net
      FROM movements GROUP BY customer_id, card_id) h
WHERE h.customer_id = a.customer_id AND h.card_id = a.card_id;

-- The day report's bonus lines: the bonus credits of each day's posted movements by kind
-- (movements from before carry none).
ALTER TABLE daily_takings ADD COLUMN bonus_credits bigint NOT NULL DEFAULT 0;

CREATE TABLE card_holders (
  customer_id uuid NOT NULL REFERENCES customers (id),
  card_id text NOT NULL CHECK (card_id ~ '^([0-9A-F]{8}|[0-9A-F]{14})$'),
  label text NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  set_at timestamptz NOT NULL DEFAULT now(),
  set_by text NOT NULL CHECK (length(set_by) BETWEEN 1 AND 200),
  PRIMARY KEY (customer_id, card_id)
);
`,
};
