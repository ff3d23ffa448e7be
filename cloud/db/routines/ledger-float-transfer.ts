export const ledgerFloatTransfer = {
  name: 'ledger_float_transfer',
  sql: /* sql */ `
-- Credits between the pool and a float: 'grant' (pool to float: a top-up, or the open's first
-- grant, p_topup naming it) or 'return' (float to pool, at close). The pool's entry names the
-- float; the float's entry is its own. The CHECKs refuse either going negative. Answers the
-- pool after.
CREATE FUNCTION ledger_float_transfer(p_customer uuid, p_float uuid, p_credits bigint,
                                      p_operation text, p_topup uuid)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_pool_delta bigint := CASE WHEN p_operation = 'grant' THEN -p_credits ELSE p_credits END;
  v_pool bigint;
BEGIN
  WITH changed AS (
    UPDATE customers SET credits = credits + v_pool_delta WHERE id = p_customer
    RETURNING id, credits
  )
  INSERT INTO ledger_entries (customer_id, operation, delta, balance_after, float_id)
  SELECT id, CASE WHEN p_operation = 'grant' THEN 'float-out' ELSE 'float-in' END, v_pool_delta,
         credits, p_float
  FROM changed
  RETURNING balance_after INTO v_pool;
  PERFORM ledger_float_change(p_customer, p_float, -v_pool_delta, p_operation, NULL, p_topup);
  RETURN v_pool;
END
$$;
`,
};
