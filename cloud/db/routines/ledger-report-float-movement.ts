export const ledgerReportFloatMovement = {
  name: 'ledger_report_float_movement',
  sql: /* sql */ `
-- One movement of a float report (docs/cloud-api.md, "Reporting float recharges"): what a till
-- did with one of its float's movement ids, or what a till found on a card. p_reporter: the
-- reporting till (NULL: an operator's final report). Each is answered on its own:
--   recorded  counted now (its flags say what an operator should look at: float-closed,
--             beyond-float, key-revoked, cost-estimated, card-blocked, bonus-above-tiers)
--   known     the same was recorded before: nothing changes
--   refused   nothing recorded: forged-id (an id the ledger never handed out: the card is
--             flagged), conflict (the id is recorded with other facts), other-till, other-shop
--             (a movement of another shop's float, found on a card carried here)
-- Never refused for what happened after the sale (a revoked key, a closed float, a block): the
-- credits are on the card. p_item's bonusCredits: the part of its credits the till gave as a
-- bonus, by the tiers it last learnt (the rest was paid for at its creditCost).
CREATE FUNCTION ledger_report_float_movement(p_customer uuid, p_reporter uuid, p_item jsonb,
                                             p_revoked boolean)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_id uuid := (p_item->>'id')::uuid;
  v_hex text := replace(v_id::text, '-', '');
  v_card text := p_item->>'cardId';
  v_credits bigint := (p_item->>'credits')::bigint;
  v_bonus bigint := COALESCE((p_item->>'bonusCredits')::bigint, 0);
  v_written text := p_item->>'card';
  v_found boolean := COALESCE((p_item->>'found')::boolean, false);
  v_occurred timestamptz := (p_item->>'occurredAt')::timestamptz;
  v_seq integer;
  v_as text;
  v_state text;
  v_flags text[] := '{}';
  v_cost numeric;
  v_account bigint;
  v_evidence text;
  f floats%ROWTYPE;
  m movements%ROWTYPE;
BEGIN
  IF substr(v_hex, 13, 14) = '80008000000000' THEN
    v_seq := ('x' || substr(v_hex, 27, 6))::bit(24)::integer;
    SELECT * INTO f FROM floats
    WHERE customer_id = p_customer AND id_prefix = substr(v_hex, 1, 12) FOR NO KEY UPDATE;
  END IF;
  IF f.id IS NULL AND v_seq IS NOT NULL
     AND EXISTS (SELECT 1 FROM floats WHERE id_prefix = substr(v_hex, 1, 12)) THEN
    -- Another shop's float (the card was recharged there): not this shop's to count, nor a
    -- forgery.
    RETURN jsonb_build_object('id', v_id, 'outcome', 'refused', 'flags', '["other-shop"]'::jsonb,
      'detail', format('%s is a movement of another shop''s float', v_id));
  END IF;
  IF f.id IS NULL OR v_seq < 1 OR v_seq > f.ids_issued THEN
    SELECT credits INTO v_account FROM card_accounts
    WHERE customer_id = p_customer AND card_id = v_card;
    PERFORM ledger_flag_card(p_customer, v_card, 'forged-float-movement', v_id, v_credits,
                             COALESCE(v_account, 0));
    RETURN jsonb_build_object('id', v_id, 'outcome', 'refused', 'flags', '["forged-id"]'::jsonb,
      'detail', format('%s is no movement id this shop''s floats handed out', v_id));
  END IF;
  v_as := CASE WHEN v_found THEN 'found'
               WHEN p_reporter IS NULL THEN 'operator'
               WHEN p_reporter = f.till_id THEN 'till' END;
  IF v_as IS NULL THEN
    RETURN jsonb_build_object('id', v_id, 'outcome', 'refused', 'flags', '["other-till"]'::jsonb,
      'detail', format('float %s is till %s''s: another till reports its movements only as found on a card',
                       f.id, f.till_id));
  END IF;
  IF p_revoked THEN
    v_flags := v_flags || 'key-revoked'::text;
  END IF;
  IF EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer AND card_id = v_card
             AND lifted_at IS NULL) THEN
    v_flags := v_flags || 'card-blocked'::text;
  END IF;
  v_evidence := CASE WHEN v_found
    THEN format('found on card %s at till %s', v_card, p_reporter) END;

  SELECT * INTO m FROM movements WHERE id = v_id FOR NO KEY UPDATE;
  IF FOUND THEN
    IF m.customer_id <> p_customer OR m.float_id IS DISTINCT FROM f.id OR m.card_id <> v_card
       OR m.credits <> v_credits
       OR (NOT v_found AND m.reported_as <> 'found' AND m.bonus_credits <> v_bonus)
       OR (m.state = 'posted' AND v_written = 'not-written')
       OR (m.state = 'voided' AND v_written = 'written') THEN
      RETURN jsonb_build_object('id', v_id, 'outcome', 'refused', 'state', m.state,
        'flags', '["conflict"]'::jsonb,
        'detail', format('movement %s is recorded %s: %s credits on card %s', v_id, m.state,
                         m.credits, m.card_id));
    END IF;
    IF m.state = 'pending' AND v_written = 'written' THEN
      -- An undecided write, now seen on its card (by its till, or found by another).
      UPDATE movements SET state = 'posted', resolved_at = now(),
        occurred_at = COALESCE(v_occurred, now()), resolved_by_till = p_reporter,
        evidence = COALESCE(v_evidence, evidence),
        reported_as = CASE WHEN v_found THEN 'found' ELSE reported_as END,
        report_flags = report_flags || v_flags
      WHERE customer_id = p_customer AND id = v_id;
      PERFORM ledger_card_account_change(p_customer, v_card, v_credits, m.bonus_credits,
                                         m.paid_amount);
      RETURN jsonb_build_object('id', v_id, 'outcome', 'recorded', 'state', 'posted',
                                'flags', to_jsonb(v_flags));
    END IF;
    IF m.state = 'pending' AND v_written = 'not-written' THEN
      UPDATE movements SET state = 'voided', resolved_at = now(), resolved_by_till = p_reporter,
        report_flags = report_flags || v_flags
      WHERE customer_id = p_customer AND id = v_id;
      IF f.state = 'open' THEN
        PERFORM ledger_float_change(p_customer, f.id, v_credits, 'release', v_id, NULL);
      ELSE
        PERFORM ledger_change_balance(p_customer, v_credits, 'release', v_id);
      END IF;
      RETURN jsonb_build_object('id', v_id, 'outcome', 'recorded', 'state', 'voided',
                                'flags', to_jsonb(v_flags));
    END IF;
    RETURN jsonb_build_object('id', v_id, 'outcome', 'known', 'state', m.state,
                              'flags', to_jsonb(m.report_flags));
  END IF;

  v_cost := (p_item->>'creditCost')::numeric;
  IF v_cost IS NULL THEN
    -- Found on a card, which shows its credits but not their price: today's.
    SELECT credit_cost INTO v_cost FROM customers WHERE id = p_customer;
    v_flags := v_flags || 'cost-estimated'::text;
  ELSIF v_bonus > ledger_bonus_for(p_customer, v_credits - v_bonus, v_cost) THEN
    -- More bonus than the shop's tiers give now (they may have changed since the sale).
    v_flags := v_flags || 'bonus-above-tiers'::text;
  END IF;
  v_state := CASE v_written WHEN 'written' THEN 'posted' WHEN 'not-written' THEN 'voided'
                            ELSE 'pending' END;
  INSERT INTO movements (id, customer_id, kind, card_id, state, credits, credit_cost,
                         resolved_at, till_id, card_before, resolved_by_till, evidence,
                         occurred_at, float_id, float_seq, reported_as, reference, bonus_credits,
                         amount, paid_amount)
  VALUES (v_id, p_customer, 'recharge', v_card, v_state, v_credits, v_cost,
          CASE WHEN v_state <> 'pending' THEN now() END, f.till_id, p_item->>'cardBefore',
          CASE WHEN v_state <> 'pending' THEN p_reporter END, v_evidence,
          CASE WHEN v_state = 'posted' THEN COALESCE(v_occurred, now()) END, f.id, v_seq, v_as,
          p_item->>'reference', v_bonus, (v_credits - v_bonus) * v_cost,
          (v_credits - v_bonus) * v_cost);
  IF v_state <> 'voided' THEN
    v_flags := v_flags || ledger_float_draw(p_customer, f.id, v_id, v_credits);
  END IF;
  IF v_state = 'posted' THEN
    PERFORM ledger_card_account_change(p_customer, v_card, v_credits, v_bonus,
                                       (v_credits - v_bonus) * v_cost);
  END IF;
  IF cardinality(v_flags) > 0 THEN
    UPDATE movements SET report_flags = v_flags WHERE customer_id = p_customer AND id = v_id;
  END IF;
  RETURN jsonb_build_object('id', v_id, 'outcome', 'recorded', 'state', v_state,
                            'flags', to_jsonb(v_flags));
END
$$;
`,
};
