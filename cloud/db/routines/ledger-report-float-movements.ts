export const ledgerReportFloatMovements = {
  name: 'ledger_report_float_movements',
  sql: /* sql */ `
-- POST /v1/float-reports: a batch of float movements, one transaction, each answered on its
-- own, in the order given (a card's movements in the order its till made them). A revoked key
-- still reports: what its till sold before it knew is on cards (each movement flagged
-- key-revoked); an unknown key, or another shop's, is refused.
-- Set-based (bench/float-reports.ts): the floats the batch names are locked once, in id order,
-- before anything is read (two reports of one float, a retry racing its first send, take
-- turns, and the second sees what the first recorded). A new movement of one of them, as
-- its till, an operator or a finder may report it, is "new": runs of consecutive new ones
-- are recorded together (ledger_report_float_run). Every other one (known, to be decided,
-- refused, forged: a retry's or a rare case) goes through ledger_report_float_movement in its
-- place, so what each sees of its float is what the movements before it left.
CREATE FUNCTION ledger_report_float_movements(p_customer uuid, p_reporter uuid, p_items jsonb,
                                              p_key_hash text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_revoked boolean := false;
  v_results jsonb := '[]';
  v_others integer[];
  v_other integer;
  v_from integer := 1;
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
  PERFORM 1 FROM floats
  WHERE customer_id = p_customer
    AND id_prefix IN (SELECT substr(replace((e->>'id')::uuid::text, '-', ''), 1, 12)
                      FROM jsonb_array_elements(p_items) e)
  ORDER BY id FOR NO KEY UPDATE;
  -- Positions (1-based) of the movements that are not new.
  SELECT COALESCE(array_agg(i.ord ORDER BY i.ord), '{}') INTO v_others
  FROM (SELECT e.ord, (e.item->>'id')::uuid AS id,
               replace((e.item->>'id')::uuid::text, '-', '') AS hex,
               COALESCE((e.item->>'found')::boolean, false) AS found,
               row_number() OVER (PARTITION BY (e.item->>'id')::uuid ORDER BY e.ord) AS nth
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(item, ord)) i
  LEFT JOIN floats f ON f.customer_id = p_customer AND f.id_prefix = substr(i.hex, 1, 12)
  WHERE NOT (substr(i.hex, 13, 14) = '80008000000000' AND f.id IS NOT NULL AND i.nth = 1
             AND ('x' || substr(i.hex, 27, 6))::bit(24)::integer BETWEEN 1 AND f.ids_issued
             AND (i.found OR p_reporter IS NULL OR p_reporter = f.till_id)
             -- A scalar sub-select, not NOT EXISTS: the planner may hash an EXISTS into one
             -- scan of every movement, and a plan cached on a connection while the table was
             -- small kept doing so as it grew (a report cost 4 times as much after a few
             -- minutes: bench/float-reports.ts); this one is a look-up by id whatever the size.
             AND (SELECT m.id FROM movements m WHERE m.id = i.id) IS NULL);
  FOREACH v_other IN ARRAY v_others || (jsonb_array_length(p_items) + 1) LOOP
    IF v_other > v_from THEN
      v_results := v_results || ledger_report_float_run(p_customer, p_reporter, p_items, v_from,
                                                        v_other - 1, v_revoked);
    END IF;
    IF v_other <= jsonb_array_length(p_items) THEN
      v_results := v_results || jsonb_build_array(ledger_report_float_movement(
        p_customer, p_reporter, p_items->(v_other - 1), v_revoked));
    END IF;
    v_from := v_other + 1;
  END LOOP;
  RETURN jsonb_build_object('results', v_results);
END
$$;
`,
};
