export const ledgerFlagCardRecord = {
  name: 'ledger_flag_card_record',
  sql: /* sql */ `
-- A card its newest movement record does not explain (docs/cloud-api.md, "Card accounts"), as
-- movement p_movement found it: only a till raises a card's value, and each till write adds a
-- record in the same transaction, so a card holding more than its newest record's value after
-- holds credits no till wrote (card-above-record); and a record naming a movement of this shop
-- and card that the ledger voided holds credits nobody paid for, unless a compensation set the
-- books right or an operator's word still waits for the card (record-of-voided-movement).
-- Machines lower a card below its record, never above. Flags the card for each; true when
-- either holds. p_card_credits: what the card holds (null: not known, only the record is
-- checked).
CREATE FUNCTION ledger_flag_card_record(p_customer uuid, p_card text, p_movement uuid,
                                        p_card_credits bigint, p_record_counter bigint,
                                        p_record_movement uuid, p_record_value bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_flagged boolean := false;
BEGIN
  IF p_record_movement IS NULL THEN
    RETURN false;
  END IF;
  IF p_card_credits > p_record_value THEN
    PERFORM ledger_flag_card(p_customer, p_card, 'card-above-record', p_movement, p_card_credits,
                             NULL, p_record_counter, p_record_movement, p_record_value);
    v_flagged := true;
  END IF;
  IF EXISTS (SELECT 1 FROM movements v
             WHERE v.customer_id = p_customer AND v.id = p_record_movement AND v.card_id = p_card
               AND v.state = 'voided' AND NOT v.awaits_card
               AND NOT EXISTS (SELECT 1 FROM movements fix
                               WHERE fix.customer_id = p_customer AND fix.compensates = v.id
                                 AND fix.state <> 'voided')) THEN
    PERFORM ledger_flag_card(p_customer, p_card, 'record-of-voided-movement', p_movement,
                             p_card_credits, NULL, p_record_counter, p_record_movement,
                             p_record_value);
    v_flagged := true;
  END IF;
  RETURN v_flagged;
END
$$;
`,
};
