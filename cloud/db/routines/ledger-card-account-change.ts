export const ledgerCardAccountChange = {
  name: 'ledger_card_account_change',
  sql: /* sql */ `
-- A change of a card's account at a shop: its credits, the bonus credits among them, and the
-- euros paid for the others (docs/cloud-api.md, "Card accounts"). Made on first use; the
-- CHECKs refuse any of them going negative, or more bonus than credits.
CREATE FUNCTION ledger_card_account_change(p_customer uuid, p_card text, p_credits bigint,
                                           p_bonus bigint, p_paid_amount numeric)
RETURNS void LANGUAGE plpgsql AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- posted movement calls this (bench/float-reports.ts).
BEGIN
  -- An update where the account exists: INSERT ... ON CONFLICT checks the row it proposes
  -- against the CHECKs first, and a negative change is never a row of its own.
  UPDATE card_accounts SET
    credits = credits + p_credits,
    bonus_credits = bonus_credits + p_bonus,
    paid_amount = paid_amount + p_paid_amount
  WHERE customer_id = p_customer AND card_id = p_card;
  IF FOUND THEN
    RETURN;
  END IF;
  INSERT INTO card_accounts (customer_id, card_id, credits, bonus_credits, paid_amount)
  VALUES (p_customer, p_card, p_credits, p_bonus, p_paid_amount)
  ON CONFLICT (customer_id, card_id) DO UPDATE SET
    credits = card_accounts.credits + EXCLUDED.credits,
    bonus_credits = card_accounts.bonus_credits + EXCLUDED.bonus_credits,
    paid_amount = card_accounts.paid_amount + EXCLUDED.paid_amount;
END
$$;
`,
};
