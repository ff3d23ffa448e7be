export const ledgerCardListChanged = {
  name: 'ledger_card_list_changed',
  sql: /* sql */ `
-- The shop's card list (its blocked cards and the changes waiting for cards) changed: its
-- sequence number moves on, so tills polling with the last ETag see it, and the blocklist
-- feed for machines is signed anew. Takes the shop's row lock. Answers the new number.
CREATE FUNCTION ledger_card_list_changed(p_customer uuid)
RETURNS bigint LANGUAGE sql AS $$
  UPDATE customers SET card_list_seq = card_list_seq + 1, card_list_changed_at = now()
  WHERE id = p_customer
  RETURNING card_list_seq
$$;
`,
};
