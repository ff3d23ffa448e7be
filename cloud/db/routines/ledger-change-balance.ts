export const ledgerChangeBalance = {
  name: 'ledger_change_balance',
  sql: /* sql */ `
-- A balance change and its ledger entry, in one statement. The CHECK refuses a negative pool.
CREATE FUNCTION ledger_change_balance(p_customer uuid, p_delta bigint, p_operation text,
                                      p_movement uuid)
RETURNS bigint LANGUAGE plpgsql AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- recharge calls this (bench/ledger-throughput.ts).
DECLARE
  v_balance bigint;
BEGIN
  WITH changed AS (
    UPDATE customers SET credits = credits + p_delta WHERE id = p_customer RETURNING id, credits
  )
  INSERT INTO ledger_entries (customer_id, movement_id, operation, delta, balance_after)
  SELECT id, p_movement, p_operation, p_delta, credits FROM changed
  RETURNING balance_after INTO v_balance;
  RETURN v_balance;
END
$$;
`,
};
