export const ledgerBlockCard = {
  name: 'ledger_block_card',
  sql: /* sql */ `
-- Blocks a card at a shop (p_block) or lifts its block, saying who and why (docs/cloud-api.md,
-- "Lost cards"). Blocking a blocked card, or lifting no block, changes nothing ('changed'
-- false) and answers the card as it is. Every change moves the shop's card list on.
CREATE FUNCTION ledger_block_card(p_customer uuid, p_card text, p_block boolean, p_by text,
                                  p_reason text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_changed boolean := false;
  v_seq bigint;
BEGIN
  -- The shop's row lock: the card list and its sequence number change together.
  SELECT card_list_seq INTO v_seq FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  IF p_block THEN
    INSERT INTO card_blocks (customer_id, card_id, blocked_by, reason)
    SELECT p_customer, p_card, p_by, p_reason
    WHERE NOT EXISTS (SELECT 1 FROM card_blocks WHERE customer_id = p_customer
                      AND card_id = p_card AND lifted_at IS NULL);
    v_changed := FOUND;
  ELSE
    UPDATE card_blocks SET lifted_at = now(), lifted_by = p_by, lift_reason = p_reason
    WHERE customer_id = p_customer AND card_id = p_card AND lifted_at IS NULL;
    v_changed := FOUND;
  END IF;
  IF v_changed THEN
    v_seq := ledger_card_list_changed(p_customer);
  END IF;
  RETURN jsonb_build_object('changed', v_changed, 'cardId', p_card,
                            'blocked', ledger_card_block_view(p_customer, p_card), 'seq', v_seq);
END
$$;
`,
};
