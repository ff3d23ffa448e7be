export const ledgerCardChangeView = {
  name: 'ledger_card_change_view',
  sql: /* sql */ `
-- A card change as the contract shows it (docs/cloud-api.md, "Replacements"): what waits for
-- which card, why and by whom, and the movement that applied it (or a pending one applying it).
CREATE FUNCTION ledger_card_change_view(w card_changes)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', w.id, 'kind', w.kind, 'cardId', w.card_id, 'fromCard', w.from_card,
    'corrects', w.corrects, 'credits', w.credits, 'bonusCredits', w.bonus_credits,
    'paidAmount', w.paid_amount::text, 'state', w.state, 'reason', w.reason, 'by', w.created_by,
    'createdAt', w.created_at, 'resolvedAt', w.resolved_at, 'cancelledBy', w.cancelled_by,
    'cancelReason', w.cancel_reason,
    'movementId', COALESCE(w.movement_id,
      (SELECT x.id FROM movements x WHERE x.customer_id = w.customer_id AND x.applies = w.id
         AND x.state = 'pending')))
$$;
`,
};
