export const ledgerCreateMovement = {
  name: 'ledger_create_movement',
  sql: /* sql */ `
-- POST /v1/movements (docs/cloud-api.md). p_credits or p_amount (a recharge by amount).
-- p_key_hash (optional): the caller's API key, checked in this transaction (see below).
-- p_reference (optional): the POS's reference of the sale, kept with the movement; not part of
-- its identity (the worker's Idempotency-Key covers it).
-- p_record_* (optional): the card's newest movement record (cardRecord).
CREATE FUNCTION ledger_create_movement(
  p_customer uuid, p_id uuid, p_kind text, p_card text, p_credits bigint, p_amount numeric,
  p_card_credits bigint, p_refuse_above boolean, p_till uuid, p_card_before text,
  p_compensates uuid, p_key_hash text DEFAULT NULL, p_reference text DEFAULT NULL,
  p_record_counter bigint DEFAULT NULL, p_record_movement uuid DEFAULT NULL,
  p_record_value bigint DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  m movements%ROWTYPE;
  v_credits bigint;
  v_account bigint := 0;
  v_allowed bigint;
  v_voided ledger_answer;
  v_pool bigint;
  v_other record;
  v_checks_card boolean;
  v_last_id uuid;
  v_last_before text;
  v_record_flagged boolean := false;
  v_float_pending text;
  v_bonus bigint := 0;
  v_amount numeric;
  v_paid_taken numeric;
  v_held ledger_answer;
  a card_accounts%ROWTYPE;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  -- The id's lock first (a void of an unknown id takes it too): a create and a tombstone of one
  -- id never both happen. Then a compensation locks the movement it compensates, before the
  -- customer row, in the order a post or void of that movement takes them
  -- (ledger_resolve_movement). Then a recharge locks the customer row: the pool check, the
  -- reservation and the idempotency check see no concurrent change of this customer. Then the
  -- card's account. Always in this order, so they never deadlock.
  PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
  IF p_compensates IS NOT NULL THEN
    PERFORM 1 FROM movements WHERE customer_id = p_customer AND id = p_compensates
    FOR NO KEY UPDATE;
  END IF;
  IF p_kind = 'recharge' THEN
    SELECT * INTO c FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
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
  v_voided := ledger_tombstone_refusal(p_id, p_customer);
  IF v_voided.error IS NOT NULL THEN
    RETURN v_voided;
  END IF;

  -- credits = floor(amount / creditCost), exactly: both as integer ten-thousandths.
  v_credits := CASE WHEN p_amount IS NULL THEN p_credits
                    ELSE div(p_amount * 10000, c.credit_cost * 10000) END;
  IF v_credits < 1 THEN
    RETURN ledger_refusal('AmountBelowOneCredit');
  END IF;
  v_amount := v_credits * c.credit_cost;
  IF p_amount IS NOT NULL AND p_compensates IS NULL THEN
    -- The shop's bonus tiers apply to a recharge by amount only (docs/cloud-api.md, "Bonus
    -- tiers"): the bonus comes out of the pool with the credits paid for.
    v_bonus := ledger_bonus_for(p_customer, v_credits, c.credit_cost);
    v_credits := v_credits + v_bonus;
  END IF;
  IF v_credits > 2147483647 THEN
    RETURN ledger_refusal('InvalidMovement', 'amount: worth more than 2147483647 credits');
  END IF;
  IF p_compensates IS NULL THEN
    -- A blocked card moves no credits; a change waiting for the card comes first.
    v_held := ledger_card_held_by_rules(p_customer, p_card, NULL);
    IF v_held.error IS NOT NULL THEN
      RETURN v_held;
    END IF;
  END IF;
  IF p_compensates IS NOT NULL THEN
    -- The compensated movement's row lock (taken above): two compensations of one movement (two
    -- tills that both saw its card) run one after the other, and the second sees the first.
    PERFORM 1 FROM movements
    WHERE customer_id = p_customer AND id = p_compensates AND card_id = p_card
      AND state <> 'pending'
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RETURN ledger_refusal('InvalidCompensation',
        format('compensates: %s is no resolved movement of this shop and card', p_compensates));
    END IF;
    SELECT id INTO v_other FROM movements
    WHERE customer_id = p_customer AND compensates = p_compensates;
    IF FOUND THEN
      RETURN ledger_refusal('MovementCompensated',
        format('movement %s is compensated by %s already', p_compensates, v_other.id));
    END IF;
    IF p_kind = 'recharge' THEN
      -- A recharge set right on its card puts back what it put on: its bonus, and the euros
      -- paid, not the credits' worth.
      SELECT CASE WHEN o.credits = v_credits THEN o.bonus_credits ELSE 0 END,
             CASE WHEN o.credits = v_credits THEN o.paid_amount ELSE v_amount END
      INTO v_bonus, v_amount
      FROM movements o WHERE o.customer_id = p_customer AND o.id = p_compensates;
    END IF;
  END IF;

  IF p_kind = 'recharge' AND c.credits < v_credits THEN
    IF p_compensates IS NULL THEN
      RETURN ledger_refusal('NoCredits');
    END IF;
    -- A refused compensation is a disagreement the shop must see: the flag says it, and the
    -- card no longer waits for a till to say what it shows.
    SELECT credits INTO v_account FROM card_accounts
    WHERE customer_id = p_customer AND card_id = p_card FOR NO KEY UPDATE;
    PERFORM ledger_flag_card(p_customer, p_card, 'compensation-refused', p_id, v_credits,
                             COALESCE(v_account, 0));
    PERFORM ledger_card_read_for(p_customer, p_compensates);
    RETURN ledger_refusal('NoCredits');
  END IF;

  -- The card's account is locked before the id is looked up again: a same-id request that
  -- changed it meanwhile is then seen, and answered as a replay.
  v_checks_card := p_kind = 'discharge'
    OR (p_compensates IS NULL AND (p_till IS NOT NULL OR p_card_credits IS NOT NULL));
  IF v_checks_card THEN
    SELECT * INTO a FROM card_accounts
    WHERE customer_id = p_customer AND card_id = p_card FOR NO KEY UPDATE;
    v_account := COALESCE(a.credits, 0);
    SELECT * INTO m FROM movements WHERE id = p_id;
    IF FOUND THEN
      RETURN ledger_replay(m, p_customer, p_kind, p_card, p_credits, p_amount, p_till,
                           p_compensates, c.credits);
    END IF;
  END IF;
  IF p_till IS NOT NULL AND p_compensates IS NULL THEN
    -- Another till's write to this card may still have to be decided on the card: a write
    -- from this till now would destroy the evidence (docs/cloud-api.md, "Tills"). So may a
    -- write an operator decided without the card, whichever till made it.
    SELECT id, till_id, state INTO v_other FROM movements
    WHERE customer_id = p_customer AND card_id = p_card AND compensates IS NULL
      AND ((state = 'pending' AND till_id IS DISTINCT FROM p_till) OR awaits_card)
    ORDER BY created_at, id LIMIT 1;
    IF FOUND THEN
      RETURN ledger_refusal('CardMovementPending',
        CASE WHEN v_other.state = 'pending'
          THEN format('movement %s of till %s is pending on card %s', v_other.id,
                      COALESCE(v_other.till_id::text, '(unnamed)'), p_card)
          ELSE format('movement %s of till %s, %s by an operator, awaits card %s', v_other.id,
                      COALESCE(v_other.till_id::text, '(unnamed)'), v_other.state, p_card)
        END);
    END IF;
  END IF;
  IF p_till IS NOT NULL AND p_compensates IS NULL THEN
    -- The card may carry float recharges its till has not reported yet: what the card holds
    -- would look like more than its account, so nothing is decided on it until they are.
    v_float_pending := ledger_float_report_pending(p_customer, p_card);
    IF v_float_pending IS NOT NULL THEN
      RETURN ledger_refusal('FloatReportPending', v_float_pending);
    END IF;
  END IF;
  IF p_compensates IS NULL THEN
    -- What the card holds: a recharge says it, a discharge pays all of it out.
    v_record_flagged := ledger_flag_card_record(p_customer, p_card, p_id,
      CASE WHEN p_kind = 'discharge' THEN v_credits ELSE p_card_credits END,
      p_record_counter, p_record_movement, p_record_value);
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
    IF p_compensates IS NOT NULL THEN
      PERFORM ledger_card_read_for(p_customer, p_compensates);
    END IF;
    RETURN ledger_refusal(CASE WHEN v_record_flagged THEN 'CardRecordMismatch'
                               ELSE 'CardAccountExceeded' END);
  END IF;
  IF p_kind = 'discharge' AND v_record_flagged THEN
    -- Not paid out, even within its account: the card holds credits nobody paid for.
    RETURN ledger_refusal('CardRecordMismatch');
  END IF;

  IF p_card_before IS NOT NULL AND p_compensates IS NULL THEN
    -- The card's latest posted movement (not set right by a compensation) was planned from
    -- this same card state: its write landed, the card left this state, and a write planned
    -- from it would be counted twice. After the account checks: a card dump written back
    -- shows the same state, and is flagged as such first.
    SELECT p.id, p.card_before INTO v_last_id, v_last_before FROM movements p
    WHERE p.customer_id = p_customer AND p.card_id = p_card AND p.state = 'posted'
      AND p.compensates IS NULL
      AND NOT EXISTS (SELECT 1 FROM movements fix
                      WHERE fix.customer_id = p_customer AND fix.compensates = p.id
                        AND fix.state = 'posted')
    ORDER BY p.created_at DESC, p.id DESC LIMIT 1;
    IF FOUND AND v_last_before = p_card_before THEN
      RETURN ledger_refusal('CardStateMovedOn',
        format('card %s: movement %s, posted, was planned from the same card state',
               p_card, v_last_id));
    END IF;
  END IF;

  IF p_kind = 'discharge' THEN
    -- What the payout takes: bonus and paid credits, and the euros paid for those.
    SELECT s.bonus, s.paid_taken, s.amount INTO v_bonus, v_paid_taken, v_amount
    FROM ledger_payout_split(a.credits, a.bonus_credits, a.paid_amount, v_credits,
                             c.bonus_spend = 'bonus-first',
                             EXISTS (SELECT 1 FROM bonus_tiers t WHERE t.customer_id = p_customer),
                             c.credit_cost) s;
  END IF;

  -- ON CONFLICT: a concurrent insert of the same id (another customer, or a discharge that
  -- takes no row lock) makes this wait for it, then yields no row: answered as a replay.
  INSERT INTO movements (id, customer_id, kind, card_id, credits, credit_cost, requested_amount,
                         till_id, card_before, compensates, reference, amount, bonus_credits,
                         paid_amount)
  VALUES (p_id, p_customer, p_kind, p_card, v_credits, c.credit_cost, p_amount, p_till,
          p_card_before, p_compensates, p_reference, v_amount, v_bonus,
          COALESCE(v_paid_taken, v_amount))
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
  IF p_till IS NOT NULL THEN
    -- The shop's tills are every till it has heard from (migration 8).
    INSERT INTO tills (customer_id, id) VALUES (p_customer, p_till) ON CONFLICT DO NOTHING;
  END IF;
  IF p_compensates IS NOT NULL THEN
    -- The card was read and the books are set right: it waits no more.
    PERFORM ledger_card_read_for(p_customer, p_compensates);
  END IF;
  IF p_kind = 'discharge' THEN
    PERFORM ledger_card_account_change(p_customer, p_card, -v_credits, -m.bonus_credits,
                                       -m.paid_amount);
    v_pool := c.credits;
  ELSE
    v_pool := ledger_change_balance(p_customer, -v_credits, 'reserve', p_id);
  END IF;
  RETURN ledger_answer_of(m, false, v_pool);
END
$$;
`,
};
