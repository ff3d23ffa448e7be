export const ledgerCreateCardMovement = {
  name: 'ledger_create_card_movement',
  sql: /* sql */ `
-- POST /v1/movements of the kinds a card's own rules make (docs/cloud-api.md, "Lost cards,
-- refunds and bonuses"), always by a till, the ledger deciding the credits:
--   refund       a cashier's undo of this till's newest recharge of the card (p_refunds), still
--                the card's newest write and younger than the shop's undo window by the till's
--                clock (p_till_time); takes back at most what it put on, as far as the card
--                still holds it (p_card_credits): bonus first, euros at its price
--   correction   an operator's correction waiting for the card (p_applies), applied: takes back
--                up to its credits of its recharge, as a refund does (0 when nothing is left)
--   replacement  a replacement waiting for the card (p_applies), picked up: the old card's
--                account onto this one
--   block-clear  a blocked card emptied at a till: what it held (p_card_credits), recorded with
--                the card's state; no account changes (a replacement moves the account)
-- Exactly once: a card change is applied by one movement (a unique index), a recharge undone
-- by one refund. Locks: the id's, then the recharge or the change, then the card's account.
CREATE FUNCTION ledger_create_card_movement(
  p_customer uuid, p_id uuid, p_kind text, p_card text, p_till uuid, p_card_before text,
  p_card_credits bigint, p_refunds uuid, p_applies uuid, p_till_time timestamptz,
  p_key_hash text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  m movements%ROWTYPE;
  r movements%ROWTYPE;
  w card_changes%ROWTYPE;
  a card_accounts%ROWTYPE;
  v_voided ledger_answer;
  v_held ledger_answer;
  v_other record;
  v_credits bigint := 0;
  v_bonus bigint := 0;
  v_amount numeric := 0;
  v_paid numeric := 0;
  v_taken record;
  v_since interval;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
  SELECT * INTO c FROM customers WHERE id = p_customer;
  IF NOT FOUND THEN
    RETURN ledger_refusal('CustomerNotFound');
  END IF;
  SELECT * INTO m FROM movements WHERE id = p_id;
  IF FOUND THEN
    IF m.customer_id = p_customer AND m.kind = p_kind AND m.card_id = p_card
       AND m.till_id IS NOT DISTINCT FROM p_till AND m.applies IS NOT DISTINCT FROM p_applies
       AND (p_kind <> 'refund' OR m.refunds IS NOT DISTINCT FROM p_refunds) THEN
      RETURN ledger_answer_of(m, true, c.credits);
    END IF;
    RETURN ledger_refusal('MovementIdConflict');
  END IF;
  v_voided := ledger_tombstone_refusal(p_id, p_customer);
  IF v_voided.error IS NOT NULL THEN
    RETURN v_voided;
  END IF;

  IF p_kind = 'block-clear' THEN
    IF NOT EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer
                   AND card_id = p_card AND lifted_at IS NULL) THEN
      RETURN ledger_refusal('CardNotBlocked', format('card %s is not blocked', p_card));
    END IF;
    v_credits := p_card_credits;
  ELSE
    v_held := ledger_card_held_by_rules(p_customer, p_card, p_applies);
    IF v_held.error IS NOT NULL THEN
      RETURN v_held;
    END IF;
  END IF;

  IF p_applies IS NOT NULL THEN
    -- The change's row lock: two tills applying it at once run one after the other.
    SELECT * INTO w FROM card_changes WHERE customer_id = p_customer AND id = p_applies
    FOR NO KEY UPDATE;
    IF NOT FOUND OR w.card_id <> p_card OR w.kind <> p_kind THEN
      RETURN ledger_refusal('InvalidCardChange',
        format('applies: %s is no %s waiting for card %s', p_applies, p_kind, p_card));
    END IF;
    SELECT id, state INTO v_other FROM movements
    WHERE customer_id = p_customer AND applies = p_applies AND state <> 'voided';
    IF FOUND OR w.state <> 'waiting' THEN
      RETURN ledger_refusal('CardChangeTaken',
        format('%s %s is %s', w.kind, w.id, CASE
          WHEN v_other.id IS NOT NULL THEN format('applied by movement %s (%s)', v_other.id, v_other.state)
          ELSE w.state END));
    END IF;
    IF p_kind = 'replacement' THEN
      v_credits := w.credits;
      v_bonus := w.bonus_credits;
      v_paid := w.paid_amount;
    ELSE
      p_refunds := w.corrects;
    END IF;
  END IF;

  IF p_refunds IS NOT NULL THEN
    SELECT * INTO r FROM movements WHERE customer_id = p_customer AND id = p_refunds FOR NO KEY UPDATE;
    IF NOT FOUND OR r.kind <> 'recharge' OR r.state <> 'posted' OR r.card_id <> p_card THEN
      RETURN ledger_refusal('InvalidRefund',
        format('refunds: %s is no posted recharge of card %s', p_refunds, p_card));
    END IF;
  END IF;

  IF p_kind = 'refund' THEN
    IF r.till_id IS DISTINCT FROM p_till THEN
      RETURN ledger_refusal('MovementOfAnotherTill',
        format('recharge %s was made by till %s: a cashier undoes only this till''s own',
               r.id, COALESCE(r.till_id::text, '(unnamed)')));
    END IF;
    SELECT id INTO v_other FROM movements
    WHERE customer_id = p_customer AND refunds = r.id AND state <> 'voided' LIMIT 1;
    IF FOUND THEN
      RETURN ledger_refusal('AlreadyRefunded',
        format('recharge %s is taken back by %s already', r.id, v_other.id));
    END IF;
    SELECT id, kind INTO v_other FROM movements o
    WHERE o.customer_id = p_customer AND o.card_id = p_card AND o.id <> r.id
      AND o.state <> 'voided'
      AND (o.created_at > r.created_at OR o.occurred_at > r.occurred_at)
    ORDER BY o.created_at DESC LIMIT 1;
    IF FOUND THEN
      RETURN ledger_refusal('UndoNotNewest',
        format('recharge %s is no longer card %s''s newest write: %s %s came after it',
               r.id, p_card, v_other.kind, v_other.id));
    END IF;
    v_since := p_till_time - r.occurred_at;
    IF c.undo_window_s = 0 OR v_since > make_interval(secs => c.undo_window_s)
       OR v_since < -make_interval(secs => c.undo_window_s) THEN
      RETURN ledger_refusal('UndoWindowPassed',
        CASE WHEN c.undo_window_s = 0 THEN 'this shop allows no cashier''s undo'
        ELSE format('recharge %s happened at %s by the till''s clock, %s before it; the undo window is %s seconds',
                    r.id, r.occurred_at, v_since, c.undo_window_s) END);
    END IF;
  END IF;

  IF p_till IS NOT NULL THEN
    -- As any till's write: another till's write to this card may still be decided on it, an
    -- operator's word waits for it, or float recharges not all reported may be on it.
    SELECT id, till_id, state INTO v_other FROM movements
    WHERE customer_id = p_customer AND card_id = p_card AND compensates IS NULL
      AND ((state = 'pending' AND till_id IS DISTINCT FROM p_till) OR awaits_card)
    ORDER BY created_at, id LIMIT 1;
    IF FOUND THEN
      RETURN ledger_refusal('CardMovementPending',
        format('movement %s of till %s is %s on card %s', v_other.id,
               COALESCE(v_other.till_id::text, '(unnamed)'),
               CASE WHEN v_other.state = 'pending' THEN 'pending' ELSE 'awaiting its card' END,
               p_card));
    END IF;
    IF ledger_float_report_pending(p_customer, p_card) IS NOT NULL THEN
      RETURN ledger_refusal('FloatReportPending', ledger_float_report_pending(p_customer, p_card));
    END IF;
  END IF;
  IF p_card_before IS NOT NULL THEN
    -- As ledger_create_movement: a card state is written from once.
    SELECT q.id, q.card_before INTO v_other FROM movements q
    WHERE q.customer_id = p_customer AND q.card_id = p_card AND q.state = 'posted'
      AND q.compensates IS NULL
      AND NOT EXISTS (SELECT 1 FROM movements fix
                      WHERE fix.customer_id = p_customer AND fix.compensates = q.id
                        AND fix.state = 'posted')
    ORDER BY q.created_at DESC, q.id DESC LIMIT 1;
    IF FOUND AND v_other.card_before = p_card_before THEN
      RETURN ledger_refusal('CardStateMovedOn',
        format('card %s: movement %s, posted, was planned from the same card state',
               p_card, v_other.id));
    END IF;
  END IF;

  IF p_refunds IS NOT NULL THEN
    SELECT * INTO a FROM card_accounts
    WHERE customer_id = p_customer AND card_id = p_card FOR NO KEY UPDATE;
    -- What the recharge put on that earlier refunds and corrections have not taken back (one
    -- its compensation undid took nothing).
    SELECT * INTO v_taken FROM ledger_take_back_split(
      COALESCE(a.credits, 0), COALESCE(a.bonus_credits, 0), COALESCE(a.paid_amount, 0),
      least(r.credits - (SELECT COALESCE(sum(t.credits), 0) FROM movements t
                         WHERE t.customer_id = p_customer AND t.refunds = r.id
                           AND t.state <> 'voided' AND NOT ledger_undone(p_customer, t.id))::bigint,
            p_card_credits, CASE WHEN p_kind = 'correction' THEN w.credits ELSE r.credits END),
      r.bonus_credits - (SELECT COALESCE(sum(t.bonus_credits), 0) FROM movements t
                         WHERE t.customer_id = p_customer AND t.refunds = r.id
                           AND t.state <> 'voided' AND NOT ledger_undone(p_customer, t.id))::bigint,
      r.credit_cost);
    v_credits := v_taken.credits;
    v_bonus := v_taken.bonus;
    v_amount := v_taken.amount;
    v_paid := v_taken.paid_taken;
    IF v_credits = 0 AND p_kind = 'refund' THEN
      RETURN ledger_refusal('NothingToRefund',
        format('card %s holds nothing of recharge %s to take back', p_card, r.id));
    END IF;
  END IF;

  INSERT INTO movements (id, customer_id, kind, card_id, credits, credit_cost, till_id,
                         card_before, amount, bonus_credits, paid_amount, refunds, applies,
                         till_time)
  VALUES (p_id, p_customer, p_kind, p_card, v_credits, COALESCE(r.credit_cost, c.credit_cost),
          p_till, p_card_before, v_amount, v_bonus, v_paid, p_refunds, p_applies, p_till_time)
  ON CONFLICT (id) DO NOTHING
  RETURNING * INTO m;
  IF NOT FOUND THEN
    RETURN ledger_refusal('MovementIdConflict');
  END IF;
  IF p_till IS NOT NULL THEN
    INSERT INTO tills (customer_id, id) VALUES (p_customer, p_till) ON CONFLICT DO NOTHING;
  END IF;
  IF p_kind IN ('refund', 'correction') THEN
    -- Taken from the account now, as a payout is; a void gives it back.
    PERFORM ledger_card_account_change(p_customer, p_card, -v_credits, -v_bonus, -v_paid);
  END IF;
  RETURN ledger_answer_of(m, false, c.credits);
END
$$;
`,
};
