export const ledgerRebuildDailyTakings = {
  name: 'ledger_rebuild_daily_takings',
  sql: /* sql */ `
-- Makes a shop's daily_takings anew from its posted movements, in the shop's time zone as it
-- is now (after a change of zone; NULL: every shop, after a bulk load). Holds the shop's
-- exclusive lock so no post is counted meanwhile (see ledger_count_posted).
CREATE FUNCTION ledger_rebuild_daily_takings(p_customer uuid) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_rows bigint;
BEGIN
  IF p_customer IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(11, hashtext(p_customer::text));
  END IF;
  DELETE FROM daily_takings WHERE p_customer IS NULL OR customer_id = p_customer;
  INSERT INTO daily_takings (customer_id, day, till_id, kind, compensation, movements, credits,
                             euros, bonus_credits)
  SELECT m.customer_id, (m.occurred_at AT TIME ZONE c.time_zone)::date,
         coalesce(m.till_id, '00000000-0000-0000-0000-000000000000'), m.kind,
         m.compensates IS NOT NULL, sum(m.sign), sum(m.sign * m.credits), sum(m.sign * m.amount),
         sum(m.sign * m.bonus_credits)
  FROM (SELECT *, CASE WHEN undoes THEN -1 ELSE 1 END AS sign FROM movements) m
       JOIN customers c ON c.id = m.customer_id
  WHERE m.state = 'posted' AND (p_customer IS NULL OR m.customer_id = p_customer)
  GROUP BY 1, 2, 3, 4, 5;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  RETURN v_rows;
END
$$;
`,
};
