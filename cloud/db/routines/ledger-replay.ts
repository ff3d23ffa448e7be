export const ledgerReplay = {
  name: 'ledger_replay',
  sql: /* sql */ `
-- The same id again: the stored movement as of now when it is the same request (same
-- customer, kind, card, till, compensated movement, and credits or amount), else a conflict.
CREATE FUNCTION ledger_replay(m movements, p_customer uuid, p_kind text, p_card text,
                              p_credits bigint, p_amount numeric, p_till uuid,
                              p_compensates uuid, p_pool bigint)
RETURNS ledger_answer LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN m.customer_id = p_customer AND m.kind = p_kind AND m.card_id = p_card
         AND m.till_id IS NOT DISTINCT FROM p_till
         AND m.compensates IS NOT DISTINCT FROM p_compensates
         AND CASE WHEN p_amount IS NULL
                  THEN m.requested_amount IS NULL AND m.credits = p_credits
                  ELSE m.requested_amount = p_amount END
    THEN ledger_answer_of(m, true, p_pool)
    ELSE ledger_refusal('MovementIdConflict') END
$$;
`,
};
