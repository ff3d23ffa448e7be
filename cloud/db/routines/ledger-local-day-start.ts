export const ledgerLocalDayStart = {
  name: 'ledger_local_day_start',
  sql: /* sql */ `
-- When a shop's local day begins: midnight of p_day in the shop's time zone, as an instant. A
-- day runs from its start to the next day's, so a day that changes to or from summer time has
-- 23 or 25 hours. Day reports, the takings chart and the movement filters all count by it.
CREATE FUNCTION ledger_local_day_start(p_time_zone text, p_day date)
RETURNS timestamptz LANGUAGE sql STABLE STRICT AS $$
  SELECT p_day::timestamp AT TIME ZONE p_time_zone
$$;
`,
};
