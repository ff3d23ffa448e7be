export const ledgerResolveMovement = {
  name: 'ledger_resolve_movement',
  sql: /* sql */ `
-- POST /v1/movements/{id}/post and /void (p_target 'posted' or 'voided'). p_occurred_at: when
-- the till proved the card write, by its clock (a post's occurredAt); NULL: now.
CREATE FUNCTION ledger_resolve_movement(p_customer uuid, p_id uuid, p_target text,
                                        p_till uuid, p_evidence text, p_occurred_at timestamptz,
                                        p_key_hash text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  m movements%ROWTYPE;
  v_pool bigint;
  v_float_open boolean := false;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  -- A float movement's float is locked before the movement, as a float report locks them.
  PERFORM 1 FROM floats
  WHERE customer_id = p_customer
    AND id = (SELECT float_id FROM movements WHERE customer_id = p_customer AND id = p_id)
  FOR NO KEY UPDATE;
  SELECT * INTO m FROM movements WHERE customer_id = p_customer AND id = p_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    IF p_target <> 'voided' THEN
      RETURN ledger_refusal('MovementNotFound');
    END IF;
    -- A void of an id the ledger does not hold leaves a tombstone, so a create of that id
    -- arriving later is refused. Under the id's lock, a create of it has either committed
    -- (seen now) or waits for this.
    PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
    SELECT * INTO m FROM movements WHERE customer_id = p_customer AND id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      INSERT INTO void_tombstones (id, customer_id)
      SELECT p_id, p_customer WHERE NOT EXISTS (SELECT 1 FROM movements WHERE id = p_id)
      ON CONFLICT DO NOTHING;
      RETURN ledger_refusal('MovementNotFound');
    END IF;
  END IF;
  IF m.state = p_target THEN
    IF m.awaits_card AND p_till IS NOT NULL AND (p_evidence IS NOT NULL OR p_till = m.till_id)
    THEN
      -- A till read the card and it agrees with the operator's word (the evidence says so; the
      -- till that made it knows from its own journal): the card is free again.
      UPDATE movements SET awaits_card = false, card_evidence = p_evidence
      WHERE customer_id = p_customer AND id = p_id
      RETURNING * INTO m;
      -- No longer held: the card list moves on.
      PERFORM ledger_card_list_changed(p_customer);
    END IF;
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

  -- An operator's decision without a till is made without the card: a movement whose card
  -- can decide it (it carries the card state it was planned from) then awaits its card.
  UPDATE movements
  SET state = p_target, resolved_at = now(), resolved_by_till = p_till, evidence = p_evidence,
      occurred_at = CASE WHEN p_target = 'posted' THEN coalesce(p_occurred_at, now()) END,
      awaits_card = p_till IS NULL AND p_evidence IS NOT NULL AND card_before IS NOT NULL
                    AND compensates IS NULL
  WHERE customer_id = p_customer AND id = p_id
  RETURNING * INTO m;
  IF m.awaits_card THEN
    -- Held now: the card list names it, so no till's float sells to the card unread.
    PERFORM ledger_card_list_changed(p_customer);
  END IF;
  -- The pool changes back only when credits come home: a voided recharge releases its
  -- reservation, a posted payout, refund or correction returns the card's credits. A
  -- compensation that undoes a refund or correction (m.undoes) reserved them, as a recharge.
  -- Whether its float is open is asked apart, of a voided float recharge only: in one
  -- expression with the tests before it, which fold to a constant for one call's values,
  -- PostgreSQL planned the look-up anew on every call.
  IF m.kind = 'recharge' AND p_target = 'voided' AND m.float_id IS NOT NULL THEN
    v_float_open := EXISTS (SELECT 1 FROM floats WHERE customer_id = p_customer
                            AND id = m.float_id AND state = 'open');
  END IF;
  IF v_float_open THEN
    -- An undecided float recharge that did not land: back to its float.
    PERFORM ledger_float_change(p_customer, m.float_id, m.credits, 'release', p_id, NULL);
    SELECT credits INTO v_pool FROM customers WHERE id = p_customer;
  ELSIF m.kind = 'recharge' AND p_target = 'voided' THEN
    -- A reservation released to the pool (and a closed float's undecided recharge: its
    -- float's balance went to the pool).
    v_pool := ledger_change_balance(p_customer, m.credits, 'release', p_id);
  ELSIF m.kind IN ('refund', 'correction') AND m.undoes AND p_target = 'voided' THEN
    v_pool := ledger_change_balance(p_customer, m.credits, 'release', p_id);
  ELSIF m.kind IN ('discharge', 'refund', 'correction') AND NOT m.undoes AND p_target = 'posted'
        AND m.credits > 0 THEN
    v_pool := ledger_change_balance(p_customer, m.credits, 'return', p_id);
  ELSE
    SELECT credits INTO v_pool FROM customers WHERE id = p_customer;
  END IF;
  IF m.applies IS NOT NULL AND p_target = 'posted' THEN
    -- A card change applied on its card: no longer waiting (the card list moves on).
    PERFORM ledger_card_list_changed(p_customer);
    UPDATE card_changes SET state = 'applied', resolved_at = now(), movement_id = m.id
    WHERE customer_id = p_customer AND id = m.applies AND state = 'waiting';
  END IF;
  IF m.undoes AND m.kind = 'replacement' AND p_target = 'posted' THEN
    -- A pickup its card does not hold: its credits wait again, as a new replacement (this
    -- movement's id) of the change it applied.
    INSERT INTO card_changes (customer_id, id, kind, card_id, from_card, credits, bonus_credits,
                              paid_amount, reason, created_by)
    SELECT p_customer, m.id, 'replacement', w.card_id, w.from_card, m.credits, m.bonus_credits,
           m.paid_amount,
           format('pickup %s did not reach card %s: the replacement waits again', o.id,
                  m.card_id),
           'ledger'
    FROM movements o JOIN card_changes w ON w.customer_id = o.customer_id AND w.id = o.applies
    WHERE o.customer_id = p_customer AND o.id = m.compensates;
    PERFORM ledger_card_list_changed(p_customer);
  END IF;
  -- A card's account grows when a recharge or a replacement is final, and gets back what a
  -- voided payout, refund or correction took; a compensation that undoes (m.undoes) a refund
  -- or correction puts back, and a voided one that undoes a pickup gives back, what it took.
  IF (m.kind IN ('recharge', 'replacement') AND NOT m.undoes AND p_target = 'posted')
     OR (m.kind IN ('refund', 'correction') AND m.undoes AND p_target = 'posted')
     OR (m.kind = 'discharge' AND p_target = 'voided')
     OR (m.kind IN ('refund', 'correction') AND NOT m.undoes AND p_target = 'voided')
     OR (m.kind = 'replacement' AND m.undoes AND p_target = 'voided') THEN
    PERFORM ledger_card_account_change(p_customer, m.card_id, m.credits, m.bonus_credits,
                                       m.paid_amount);
  END IF;
  RETURN ledger_answer_of(m, false, v_pool);
END
$$;
`,
};
