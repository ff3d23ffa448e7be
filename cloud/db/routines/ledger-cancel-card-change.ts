export const ledgerCancelCardChange = {
  name: 'ledger_cancel_card_change',
  sql: /* sql */ `
-- Cancels a card change still waiting for its card, saying who and why: a replacement's
-- credits go back to the old card's account. One a till is applying (its movement pending)
-- is CardMovementPending; one applied is CardChangeTaken. Cancelling a cancelled change
-- changes nothing ('changed' false).
CREATE FUNCTION ledger_cancel_card_change(p_customer uuid, p_id uuid, p_by text, p_reason text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  w card_changes%ROWTYPE;
  v_pending uuid;
BEGIN
  PERFORM 1 FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO w FROM card_changes WHERE customer_id = p_customer AND id = p_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CardChangeNotFound');
  END IF;
  IF w.state = 'cancelled' THEN
    RETURN jsonb_build_object('changed', false, 'change', ledger_card_change_view(w));
  END IF;
  IF w.state = 'applied' THEN
    RETURN jsonb_build_object('error', 'CardChangeTaken', 'detail',
      format('%s %s was applied by movement %s', w.kind, w.id, w.movement_id));
  END IF;
  SELECT id INTO v_pending FROM movements
  WHERE customer_id = p_customer AND applies = p_id AND state = 'pending';
  IF FOUND THEN
    RETURN jsonb_build_object('error', 'CardMovementPending', 'detail',
      format('movement %s is applying %s %s: it is decided on the card first', v_pending,
             w.kind, w.id));
  END IF;
  UPDATE card_changes SET state = 'cancelled', resolved_at = now(), cancelled_by = p_by,
    cancel_reason = p_reason
  WHERE customer_id = p_customer AND id = p_id
  RETURNING * INTO w;
  IF w.kind = 'replacement' THEN
    PERFORM ledger_card_account_change(p_customer, w.from_card, w.credits, w.bonus_credits,
                                       w.paid_amount);
  END IF;
  PERFORM ledger_card_list_changed(p_customer);
  RETURN jsonb_build_object('changed', true, 'change', ledger_card_change_view(w));
END
$$;
`,
};
