export const ledgerReportFloatMovements = {
  name: 'ledger_report_float_movements',
  sql: /* sql */ `
-- POST /v1/floats/reports: a batch of float movements, one transaction, each answered on its
-- own (ledger_report_float_movement), in the order given (a card's movements in the order its
-- till made them). A revoked key still reports: what its till sold before it knew is on cards
-- (each movement flagged key-revoked); an unknown key, or another shop's, is refused.
CREATE FUNCTION ledger_report_float_movements(p_customer uuid, p_reporter uuid, p_items jsonb,
                                              p_key_hash text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_revoked boolean := false;
  v_results jsonb := '[]';
  v_item jsonb;
BEGIN
  IF p_key_hash IS NOT NULL THEN
    SELECT revoked_at IS NOT NULL INTO v_revoked FROM api_keys
    WHERE key_hash = p_key_hash AND customer_id = p_customer;
    IF NOT FOUND THEN
      RETURN jsonb_build_object('error', 'InvalidApiKey');
    END IF;
  END IF;
  IF p_reporter IS NOT NULL THEN
    INSERT INTO tills (customer_id, id, last_report_at) VALUES (p_customer, p_reporter, now())
    ON CONFLICT (customer_id, id) DO UPDATE SET last_report_at = now();
  END IF;
  FOR v_item IN SELECT value FROM jsonb_array_elements(p_items) LOOP
    v_results := v_results
      || jsonb_build_array(ledger_report_float_movement(p_customer, p_reporter, v_item, v_revoked));
  END LOOP;
  RETURN jsonb_build_object('results', v_results);
END
$$;
`,
};
