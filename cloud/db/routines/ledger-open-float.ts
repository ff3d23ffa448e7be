export const ledgerOpenFloat = {
  name: 'ledger_open_float',
  sql: /* sql */ `
-- POST /v1/floats (docs/cloud-api.md, "Till floats"): the till's float, granted from the pool
-- (as much of the shop's float size as the pool holds), with its first p_ids movement ids. The
-- open request's id makes it idempotent: the same request again answers the same float. A till
-- holds one open float: another open request is FloatOpen until that one is closed.
CREATE FUNCTION ledger_open_float(p_customer uuid, p_till uuid, p_request uuid, p_ids integer,
                                  p_key_hash text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  f floats%ROWTYPE;
  v_prefix text;
  v_grant bigint;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN jsonb_build_object('error', 'InvalidApiKey');
  END IF;
  -- The customer's row lock: the pool's grant, and one open float per till, decided alone.
  SELECT * INTO c FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO f FROM floats WHERE customer_id = p_customer AND open_request = p_request;
  IF FOUND THEN
    IF f.till_id <> p_till THEN
      RETURN jsonb_build_object('error', 'FloatRequestConflict', 'detail',
        format('open request %s opened float %s of till %s', p_request, f.id, f.till_id));
    END IF;
    RETURN jsonb_build_object('created', false, 'float', ledger_float_view(p_customer, f.id));
  END IF;
  SELECT * INTO f FROM floats
  WHERE customer_id = p_customer AND till_id = p_till AND state = 'open';
  IF FOUND THEN
    RETURN jsonb_build_object('error', 'FloatOpen', 'detail',
      format('till %s holds float %s, open since %s: close it first', p_till, f.id, f.opened_at));
  END IF;
  IF c.float_size = 0 THEN
    RETURN jsonb_build_object('error', 'FloatsOff', 'detail',
      'this shop gives its tills no float (its float size is 0)');
  END IF;
  INSERT INTO tills (customer_id, id) VALUES (p_customer, p_till) ON CONFLICT DO NOTHING;
  -- 48 random bits, unique among all floats.
  LOOP
    v_prefix := substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    EXIT WHEN NOT EXISTS (SELECT 1 FROM floats WHERE id_prefix = v_prefix);
  END LOOP;
  INSERT INTO floats (customer_id, id, till_id, id_prefix, ids_issued, open_request)
  VALUES (p_customer, gen_random_uuid(), p_till, v_prefix, least(p_ids, 16777215), p_request)
  RETURNING * INTO f;
  v_grant := least(c.float_size, c.credits);
  IF v_grant > 0 THEN
    PERFORM ledger_float_transfer(p_customer, f.id, v_grant, 'grant', p_request);
  END IF;
  RETURN jsonb_build_object('created', true, 'float', ledger_float_view(p_customer, f.id));
END
$$;
`,
};
