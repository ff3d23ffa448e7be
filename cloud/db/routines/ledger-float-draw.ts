export const ledgerFloatDraw = {
  name: 'ledger_float_draw',
  sql: /* sql */ `
-- Takes a float movement's credits from its float (locked by the caller), whatever happened
-- since the sale: the credits are on the card. An open float too low for them, or a closed
-- one (whose balance went to the pool and the write-off), is made good first: a closed float
-- takes them back from its write-off ('write-back'), and whatever is still missing is drawn
-- beyond the float ('overdraw'). Answers the flags that say so.
CREATE FUNCTION ledger_float_draw(p_customer uuid, p_float uuid, p_movement uuid,
                                  p_credits bigint)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  f floats%ROWTYPE;
  v_flags text[] := '{}';
  v_back bigint := 0;
  v_over bigint;
BEGIN
  SELECT * INTO f FROM floats WHERE customer_id = p_customer AND id = p_float;
  IF f.state = 'closed' THEN
    v_flags := v_flags || 'float-closed'::text;
    v_back := least(p_credits, f.written_off);
    IF v_back > 0 THEN
      PERFORM ledger_float_change(p_customer, p_float, v_back, 'write-back', p_movement, NULL);
    END IF;
    v_over := p_credits - v_back;
  ELSE
    v_over := greatest(0, p_credits - f.credits);
  END IF;
  IF v_over > 0 THEN
    v_flags := v_flags || 'beyond-float'::text;
    PERFORM ledger_float_change(p_customer, p_float, v_over, 'overdraw', p_movement, NULL);
  END IF;
  PERFORM ledger_float_change(p_customer, p_float, -p_credits, 'recharge', p_movement, NULL);
  RETURN v_flags;
END
$$;
`,
};
