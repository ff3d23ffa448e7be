export const ledgerFlagCard = {
  name: 'ledger_flag_card',
  sql: /* sql */ `
-- Marks a card suspect; a retry of the same refused movement adds no second flag.
CREATE FUNCTION ledger_flag_card(p_customer uuid, p_card text, p_kind text, p_movement uuid,
                                 p_requested bigint, p_account bigint)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO card_flags (customer_id, card_id, kind, movement_id, requested_credits, account_credits)
  VALUES (p_customer, p_card, p_kind, p_movement, p_requested, p_account)
  ON CONFLICT (customer_id, movement_id) WHERE movement_id IS NOT NULL DO NOTHING
$$;
`,
};
