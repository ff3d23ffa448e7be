export const ledgerTakeBackSplit = {
  name: 'ledger_take_back_split',
  sql: /* sql */ `
-- What a refund or a correction of a recharge takes back from its card (docs/cloud-api.md,
-- "Refunds and corrections"): at most p_most credits, and never more than the account holds;
-- bonus first, as far as the recharge gave bonus not taken back yet (p_bonus_left); the rest
-- paid credits, refunded at the recharge's own credit cost (pro rata of what it cost), never
-- more than the account's euros. The last paid credit of the account takes all its euros
-- (paid_taken) though the customer is refunded the recharge's price (amount).
CREATE FUNCTION ledger_take_back_split(p_account_credits bigint, p_account_bonus bigint,
                                       p_account_paid numeric, p_most bigint,
                                       p_bonus_left bigint, p_cost numeric,
                                       OUT credits bigint, OUT bonus bigint,
                                       OUT paid_taken numeric, OUT amount numeric)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_most bigint := greatest(0, least(p_most, p_account_credits));
  v_paid_credits bigint := p_account_credits - p_account_bonus;
  v_paid bigint;
BEGIN
  bonus := greatest(0, least(v_most, p_bonus_left, p_account_bonus));
  v_paid := least(v_most - bonus, v_paid_credits);
  credits := bonus + v_paid;
  amount := least(v_paid * p_cost, p_account_paid);
  paid_taken := CASE WHEN v_paid > 0 AND v_paid >= v_paid_credits THEN p_account_paid
                     ELSE amount END;
END
$$;
`,
};
