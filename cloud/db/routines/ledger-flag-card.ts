export const ledgerFlagCard = {
  name: 'ledger_flag_card',
  sql: /* sql */ `
-- Marks a card suspect; a retry of the same refused movement adds no second flag of a kind.
-- The record (p_record_*): the card's newest movement record, for the record flags.
CREATE FUNCTION ledger_flag_card(p_customer uuid, p_card text, p_kind text, p_movement uuid,
                                 p_requested bigint, p_account bigint,
                                 p_record_counter bigint DEFAULT NULL,
                                 p_record_movement uuid DEFAULT NULL,
                                 p_record_value bigint DEFAULT NULL)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO card_flags (customer_id, card_id, kind, movement_id, requested_credits, account_credits,
                          record_counter, record_movement_id, record_value_after)
  VALUES (p_customer, p_card, p_kind, p_movement, p_requested, p_account,
          p_record_counter, p_record_movement, p_record_value)
  ON CONFLICT (customer_id, movement_id, kind) WHERE movement_id IS NOT NULL DO NOTHING
$$;
`,
};
