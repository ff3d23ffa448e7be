export const ledgerReplaceCard = {
  name: 'ledger_replace_card',
  sql: /* sql */ `
-- Moves a blocked card's account to a new card (docs/cloud-api.md, "Replacements"): its
-- credits, bonus credits and the euros paid for them leave the old card's account and wait as
-- a replacement until a till picks them up onto the new card. Idempotent by p_id: the same
-- replacement again answers it as it is now ('created' false); the id used for anything else is
-- CardChangeConflict. What machines spent from the old card is not known: the account moves.
CREATE FUNCTION ledger_replace_card(p_customer uuid, p_id uuid, p_old text, p_new text,
                                    p_by text, p_reason text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  w card_changes%ROWTYPE;
  a card_accounts%ROWTYPE;
  v_other record;
BEGIN
  PERFORM 1 FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO w FROM card_changes WHERE id = p_id;
  IF FOUND THEN
    IF w.customer_id <> p_customer OR w.kind <> 'replacement' OR w.from_card <> p_old
       OR w.card_id <> p_new THEN
      RETURN jsonb_build_object('error', 'CardChangeConflict', 'detail',
        format('card change %s is another change', p_id));
    END IF;
    RETURN jsonb_build_object('created', false, 'change', ledger_card_change_view(w));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer AND card_id = p_old
                 AND lifted_at IS NULL) THEN
    RETURN jsonb_build_object('error', 'CardNotBlocked', 'detail',
      format('card %s is not blocked: block it before replacing it', p_old));
  END IF;
  IF EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer AND card_id = p_new
             AND lifted_at IS NULL) THEN
    RETURN jsonb_build_object('error', 'CardBlocked', 'detail',
      format('card %s, the new card, is blocked', p_new));
  END IF;
  SELECT id, kind INTO v_other FROM card_changes
  WHERE customer_id = p_customer AND card_id = p_old AND state = 'waiting' LIMIT 1;
  IF FOUND THEN
    RETURN jsonb_build_object('error', 'CardChangeWaiting', 'detail',
      format('%s %s waits for card %s: cancel it first', v_other.kind, v_other.id, p_old));
  END IF;
  SELECT id, state INTO v_other FROM movements
  WHERE customer_id = p_customer AND card_id = p_old AND (state = 'pending' OR awaits_card)
  LIMIT 1;
  IF FOUND THEN
    RETURN jsonb_build_object('error', 'CardMovementPending', 'detail',
      format('movement %s of card %s is %s: decide it first', v_other.id, p_old,
             CASE WHEN v_other.state = 'pending' THEN 'pending' ELSE 'awaiting its card' END));
  END IF;
  SELECT * INTO a FROM card_accounts WHERE customer_id = p_customer AND card_id = p_old
  FOR NO KEY UPDATE;
  IF COALESCE(a.credits, 0) = 0 THEN
    RETURN jsonb_build_object('error', 'NothingToReplace', 'detail',
      format('card %s has an account of 0 at this shop', p_old));
  END IF;
  INSERT INTO card_changes (customer_id, id, kind, card_id, from_card, credits, bonus_credits,
                            paid_amount, reason, created_by)
  VALUES (p_customer, p_id, 'replacement', p_new, p_old, a.credits, a.bonus_credits,
          a.paid_amount, p_reason, p_by)
  RETURNING * INTO w;
  PERFORM ledger_card_account_change(p_customer, p_old, -a.credits, -a.bonus_credits,
                                     -a.paid_amount);
  PERFORM ledger_card_list_changed(p_customer);
  RETURN jsonb_build_object('created', true, 'change', ledger_card_change_view(w));
END
$$;
`,
};
