export const ledgerCorrectCard = {
  name: 'ledger_correct_card',
  sql: /* sql */ `
-- An operator's correction (docs/cloud-api.md, "Refunds and corrections"): up to p_credits of
-- a posted recharge of the card taken back, with a reason. It waits for the card: the next
-- till POST with the card on the reader applies it (a correction movement), taking back what
-- the card still holds of it, bonus first, euros at the recharge's price. Idempotent by p_id.
CREATE FUNCTION ledger_correct_card(p_customer uuid, p_id uuid, p_card text, p_recharge uuid,
                                    p_credits bigint, p_by text, p_reason text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  w card_changes%ROWTYPE;
  r movements%ROWTYPE;
  v_left bigint;
BEGIN
  PERFORM 1 FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO w FROM card_changes WHERE id = p_id;
  IF FOUND THEN
    IF w.customer_id <> p_customer OR w.kind <> 'correction' OR w.card_id <> p_card
       OR w.corrects <> p_recharge OR w.credits <> p_credits THEN
      RETURN jsonb_build_object('error', 'CardChangeConflict', 'detail',
        format('card change %s is another change', p_id));
    END IF;
    RETURN jsonb_build_object('created', false, 'change', ledger_card_change_view(w));
  END IF;
  SELECT * INTO r FROM movements WHERE customer_id = p_customer AND id = p_recharge;
  IF NOT FOUND OR r.kind <> 'recharge' OR r.state <> 'posted' OR r.card_id <> p_card THEN
    RETURN jsonb_build_object('error', 'InvalidRefund', 'detail',
      format('movement %s is no posted recharge of card %s', p_recharge, p_card));
  END IF;
  IF EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer AND card_id = p_card
             AND lifted_at IS NULL) THEN
    RETURN jsonb_build_object('error', 'CardBlocked', 'detail',
      format('card %s is blocked: replace it instead', p_card));
  END IF;
  -- What refunds, corrections applied and corrections waiting have not claimed yet (one its
  -- compensation undid claims nothing).
  v_left := r.credits
    - (SELECT COALESCE(sum(t.credits), 0) FROM movements t
       WHERE t.customer_id = p_customer AND t.refunds = r.id AND t.state <> 'voided'
         AND NOT ledger_undone(p_customer, t.id))::bigint
    - (SELECT COALESCE(sum(credits), 0) FROM card_changes
       WHERE customer_id = p_customer AND corrects = r.id AND state = 'waiting')::bigint;
  IF p_credits > v_left THEN
    RETURN jsonb_build_object('error', 'NothingToRefund', 'detail',
      format('recharge %s put %s credits on card %s; %s of them are not taken back or claimed',
             r.id, r.credits, p_card, greatest(v_left, 0)));
  END IF;
  INSERT INTO card_changes (customer_id, id, kind, card_id, corrects, credits, reason, created_by)
  VALUES (p_customer, p_id, 'correction', p_card, p_recharge, p_credits, p_reason, p_by)
  RETURNING * INTO w;
  PERFORM ledger_card_list_changed(p_customer);
  RETURN jsonb_build_object('created', true, 'change', ledger_card_change_view(w));
END
$$;
`,
};
