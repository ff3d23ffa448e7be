export const ledgerTopUpFloat = {
  name: 'ledger_top_up_float',
  sql: /* sql */ `
-- POST /v1/floats/{id}/topups: moves up to p_credits from the pool into the float, never
-- beyond the shop's float size (as the ledger counts the float) nor beyond the pool, and hands
-- out p_ids more movement ids. Idempotent by the top-up's id: the same top-up again answers
-- what it granted, with the float as it is now.
CREATE FUNCTION ledger_top_up_float(p_customer uuid, p_float uuid, p_id uuid, p_credits bigint,
                                    p_ids integer, p_till uuid, p_key_hash text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  f floats%ROWTYPE;
  t float_topups%ROWTYPE;
  v_grant bigint;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN jsonb_build_object('error', 'InvalidApiKey');
  END IF;
  SELECT * INTO c FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('error', 'CustomerNotFound');
  END IF;
  SELECT * INTO t FROM float_topups WHERE customer_id = p_customer AND id = p_id;
  IF FOUND THEN
    IF t.float_id <> p_float OR t.requested <> p_credits OR t.ids_requested <> p_ids THEN
      RETURN jsonb_build_object('error', 'TopUpConflict', 'detail',
        format('top-up %s was asked for %s credits and %s ids of float %s', p_id, t.requested,
               t.ids_requested, t.float_id));
    END IF;
  ELSE
    SELECT * INTO f FROM floats WHERE customer_id = p_customer AND id = p_float FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RETURN jsonb_build_object('error', 'FloatNotFound');
    END IF;
    IF p_till IS NOT NULL AND p_till <> f.till_id THEN
      RETURN jsonb_build_object('error', 'FloatOfAnotherTill', 'detail',
        format('float %s is till %s''s', f.id, f.till_id));
    END IF;
    IF f.state = 'closed' THEN
      RETURN jsonb_build_object('error', 'FloatClosed', 'detail',
        format('float %s was closed %s', f.id, f.closed_at));
    END IF;
    v_grant := greatest(0, least(p_credits, c.float_size - f.credits, c.credits));
    INSERT INTO float_topups (customer_id, id, float_id, requested, granted, ids_requested)
    VALUES (p_customer, p_id, p_float, p_credits, v_grant, p_ids)
    RETURNING * INTO t;
    IF v_grant > 0 THEN
      PERFORM ledger_float_transfer(p_customer, p_float, v_grant, 'grant', p_id);
    END IF;
    UPDATE floats SET ids_issued = least(16777215, ids_issued + p_ids)
    WHERE customer_id = p_customer AND id = p_float;
  END IF;
  RETURN jsonb_build_object(
    'topUp', jsonb_build_object('id', t.id, 'requested', t.requested, 'granted', t.granted,
                                'ids', t.ids_requested, 'at', t.created_at),
    'float', ledger_float_view(p_customer, t.float_id));
END
$$;
`,
};
