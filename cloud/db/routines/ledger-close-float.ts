export const ledgerCloseFloat = {
  name: 'ledger_close_float',
  sql: /* sql */ `
-- POST /v1/floats/{id}/close, or an operator closing a dead till's float (p_till NULL): the
-- final report first (p_items, as ledger_report_float_movements), then what the float still
-- holds goes back to the pool, less what an operator writes off (p_write_off, with a reason:
-- credits its till sold without a report that reached the ledger, bounded by the float). One
-- transaction; closing a closed float answers it as it is.
CREATE FUNCTION ledger_close_float(p_customer uuid, p_float uuid, p_till uuid, p_items jsonb,
                                   p_write_off bigint, p_reason text,
                                   p_key_hash text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  f floats%ROWTYPE;
  v_report jsonb;
BEGIN
  -- The pool's row before the float's, as every call takes them.
  PERFORM 1 FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO f FROM floats WHERE customer_id = p_customer AND id = p_float FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'FloatNotFound');
  END IF;
  IF p_till IS NOT NULL AND p_till <> f.till_id THEN
    RETURN jsonb_build_object('error', 'FloatOfAnotherTill', 'detail',
      format('float %s is till %s''s', f.id, f.till_id));
  END IF;
  IF f.state = 'closed' THEN
    RETURN jsonb_build_object('closed', false, 'results', '[]'::jsonb,
                              'float', ledger_float_view(p_customer, f.id));
  END IF;
  v_report := ledger_report_float_movements(p_customer, p_till, p_items, p_key_hash);
  IF v_report ? 'error' THEN
    RETURN v_report;
  END IF;
  SELECT * INTO f FROM floats WHERE customer_id = p_customer AND id = p_float;
  IF p_write_off > f.credits THEN
    -- Nothing of this call may stay: the final report goes too.
    RAISE EXCEPTION USING ERRCODE = 'CW001', MESSAGE = 'WriteOffBeyondFloat',
      DETAIL = format('float %s holds %s credits after the final report; %s cannot be written off',
                      f.id, f.credits, p_write_off);
  END IF;
  IF p_write_off > 0 THEN
    PERFORM ledger_float_change(p_customer, f.id, -p_write_off, 'write-off', NULL, NULL);
  END IF;
  IF f.credits - p_write_off > 0 THEN
    PERFORM ledger_float_transfer(p_customer, f.id, f.credits - p_write_off, 'return', NULL);
  END IF;
  UPDATE floats SET state = 'closed', closed_at = now(),
    closed_by = CASE WHEN p_till IS NULL THEN 'operator' ELSE 'till' END,
    write_off_reason = CASE WHEN p_write_off > 0 THEN p_reason END
  WHERE customer_id = p_customer AND id = f.id;
  RETURN jsonb_build_object('closed', true, 'results', v_report->'results',
                            'float', ledger_float_view(p_customer, f.id));
END
$$;
`,
};
