export const ledgerCardBlockView = {
  name: 'ledger_card_block_view',
  sql: /* sql */ `
-- A card's open block as the contract shows it (docs/cloud-api.md, "Lost cards"), or NULL.
CREATE FUNCTION ledger_card_block_view(p_customer uuid, p_card text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('since', b.blocked_at, 'by', b.blocked_by, 'reason', b.reason)
  FROM card_blocks b
  WHERE b.customer_id = p_customer AND b.card_id = p_card AND b.lifted_at IS NULL
$$;
`,
};
