export const ledgerFloatChange = {
  name: 'ledger_float_change',
  sql: /* sql */ `
-- A change of a float's balance and its entry, in one statement (the float's row is the
-- caller's to lock). The CHECK refuses a negative float. What the operation moves is also kept
-- on the float: granted (grant), returned (return), written off (write-off, less write-back)
-- and drawn beyond it (overdraw). Answers the float's balance after.
CREATE FUNCTION ledger_float_change(p_customer uuid, p_float uuid, p_delta bigint,
                                    p_operation text, p_movement uuid, p_topup uuid)
RETURNS bigint LANGUAGE plpgsql AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and a
-- float report calls this once or more per movement (bench/float-reports.ts).
DECLARE
  v_balance bigint;
BEGIN
  UPDATE floats SET
    credits = credits + p_delta,
    granted = granted + CASE WHEN p_operation = 'grant' THEN p_delta ELSE 0 END,
    returned = returned + CASE WHEN p_operation = 'return' THEN -p_delta ELSE 0 END,
    written_off = written_off
      + CASE WHEN p_operation IN ('write-off', 'write-back') THEN -p_delta ELSE 0 END,
    overdrawn = overdrawn + CASE WHEN p_operation = 'overdraw' THEN p_delta ELSE 0 END
  WHERE customer_id = p_customer AND id = p_float
  RETURNING credits INTO v_balance;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO float_entries (customer_id, float_id, operation, delta, balance_after, movement_id,
                             topup_id)
  VALUES (p_customer, p_float, p_operation, p_delta, v_balance, p_movement, p_topup);
  RETURN v_balance;
END
$$;
`,
};
