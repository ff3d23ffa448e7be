export const ledgerFloatReportPending = {
  name: 'ledger_float_report_pending',
  sql: /* sql */ `
-- Whether a card may carry float recharges the ledger has not been told of (docs/cloud-api.md,
-- "Till floats"): an open float with a movement on the card at sequence number s, and an id
-- below s that nothing names yet (its till sold it and has not reported: it may be on this
-- card too, and a card showing only its newest float movement cannot tell). Answers what is
-- in the way, or NULL. A closed float's unreported ids are written off: they hold nothing up.
CREATE FUNCTION ledger_float_report_pending(p_customer uuid, p_card text)
RETURNS text LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- till's create calls this (bench/ledger-throughput.ts).
BEGIN
  RETURN (SELECT format('card %s holds float recharges of till %s (float %s) that are not all reported: ids below %s are missing',
                p_card, f.till_id, f.id, x.top)
  FROM (SELECT float_id, max(float_seq) AS top FROM movements
        WHERE customer_id = p_customer AND card_id = p_card AND float_id IS NOT NULL
        GROUP BY float_id) x
  JOIN floats f ON f.customer_id = p_customer AND f.id = x.float_id AND f.state = 'open'
  WHERE (SELECT count(*) FROM movements k
         WHERE k.customer_id = p_customer AND k.float_id = f.id AND k.float_seq < x.top) < x.top - 1
  ORDER BY f.opened_at LIMIT 1);
END
$$;
`,
};
