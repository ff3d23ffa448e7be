export const ledgerPayoutSplit = {
  name: 'ledger_payout_split',
  sql: /* sql */ `
-- What a payout of p_credits takes from a card's account (docs/cloud-api.md, "Payouts of
-- bonus credits"): its bonus credits first (the default) or last, the rest paid credits, and
-- the euros paid for those at their average price (all of them with the last paid credit),
-- rounded down to the ten-thousandth. The payout's amount is those euros, never more than
-- were paid in; except where the shop has no tiers and the card no bonus credits: then the
-- documented rule holds as before, amount = credits x the credit cost now.
CREATE FUNCTION ledger_payout_split(p_account_credits bigint, p_account_bonus bigint,
                                    p_account_paid numeric, p_credits bigint,
                                    p_bonus_first boolean, p_tiers_on boolean, p_cost numeric,
                                    OUT bonus bigint, OUT paid_taken numeric, OUT amount numeric)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_paid_credits bigint := p_account_credits - p_account_bonus;
  v_paid bigint;
BEGIN
  bonus := CASE WHEN p_bonus_first THEN least(p_credits, p_account_bonus)
                ELSE greatest(0, p_credits - v_paid_credits) END;
  v_paid := p_credits - bonus;
  paid_taken := CASE WHEN v_paid <= 0 THEN 0
                     WHEN v_paid >= v_paid_credits THEN p_account_paid
                     ELSE trunc(p_account_paid * v_paid / v_paid_credits, 4) END;
  amount := CASE WHEN NOT p_tiers_on AND p_account_bonus = 0 THEN p_credits * p_cost
                 ELSE paid_taken END;
END
$$;
`,
};
