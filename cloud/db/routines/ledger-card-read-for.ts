export const ledgerCardReadFor = {
  name: 'ledger_card_read_for',
  sql: /* sql */ `
-- A till read the card an operator's word on p_movement waited for (its compensation is made,
-- or refused and flagged): the card is held no more, and the card list, which names the cards
-- held (docs/cloud-api.md, "Blocking a card"), moves on. Nothing when it was not held.
CREATE FUNCTION ledger_card_read_for(p_customer uuid, p_movement uuid)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE movements SET awaits_card = false
  WHERE customer_id = p_customer AND id = p_movement AND awaits_card;
  IF FOUND THEN
    PERFORM ledger_card_list_changed(p_customer);
  END IF;
END;
$$;
`,
};
