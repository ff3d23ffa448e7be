export const ledgerAnswerOf = {
  name: 'ledger_answer_of',
  sql: /* sql */ `
CREATE FUNCTION ledger_answer_of(m movements, p_replayed boolean, p_pool bigint)
RETURNS ledger_answer LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(NULL, NULL, p_replayed, p_pool, m.id, m.customer_id, m.kind, m.card_id, m.state,
             m.credits, m.credit_cost, m.amount, m.requested_amount, m.created_at, m.resolved_at,
             m.till_id, m.card_before, m.compensates, m.resolved_by_till, m.evidence,
             m.awaits_card, m.card_evidence, m.occurred_at, m.float_id, m.reported_as,
             m.report_flags, m.reference, m.bonus_credits, m.paid_amount, m.refunds, m.applies,
             m.till_time)::ledger_answer
$$;
`,
};
