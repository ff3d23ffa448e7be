export const ledgerBonusFor = {
  name: 'ledger_bonus_for',
  sql: /* sql */ `
-- The bonus a recharge by amount gets (docs/cloud-api.md, "Bonus tiers"): the shop's tier
-- with the highest minimum amount that the amount paid (p_paid_credits x p_cost) reaches
-- gives its credits, or its percentage of the credits paid for, rounded down. No tier: 0.
-- common/bonus-tiers.ts is the same rule for the worker's quote and the simulated ledger.
CREATE FUNCTION ledger_bonus_for(p_customer uuid, p_paid_credits bigint, p_cost numeric)
RETURNS bigint LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- recharge by amount calls this (bench/ledger-throughput.ts).
BEGIN
  RETURN COALESCE((
    SELECT COALESCE(t.bonus_credits::bigint, floor(p_paid_credits * t.bonus_percent / 100)::bigint)
    FROM bonus_tiers t
    WHERE t.customer_id = p_customer AND t.min_amount <= p_paid_credits * p_cost
    ORDER BY t.min_amount DESC LIMIT 1), 0);
END
$$;
`,
};
