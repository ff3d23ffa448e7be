export const ledgerFloatView = {
  name: 'ledger_float_view',
  sql: /* sql */ `
-- A float as the contract shows it (docs/cloud-api.md, "Till floats"): its balance and what
-- moved through it, and its movements by what became of them: told by its till (or an
-- operator's final report), found on cards by other tills, undecided (a card write its till
-- could not prove), not written; and how many of its handed-out ids nothing names yet.
CREATE FUNCTION ledger_float_view(p_customer uuid, p_float uuid)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', f.id, 'tillId', f.till_id, 'state', f.state, 'credits', f.credits,
    'granted', f.granted, 'idPrefix', f.id_prefix, 'idsIssued', f.ids_issued,
    'openedAt', f.opened_at, 'closedAt', f.closed_at, 'closedBy', f.closed_by,
    'returned', f.returned, 'writtenOff', f.written_off, 'writeOffReason', f.write_off_reason,
    'overdrawn', f.overdrawn, 'lastReportAt', t.last_report_at,
    'reported', jsonb_build_object('count', k.reported_count, 'credits', k.reported_credits),
    'found', jsonb_build_object('count', k.found_count, 'credits', k.found_credits),
    'undecided', jsonb_build_object('count', k.pending_count, 'credits', k.pending_credits),
    'notWritten', k.voided_count,
    'unaccountedIds', f.ids_issued - k.known)
  FROM floats f
  JOIN tills t ON t.customer_id = f.customer_id AND t.id = f.till_id
  CROSS JOIN LATERAL (
    SELECT count(*) AS known,
      count(*) FILTER (WHERE state = 'posted' AND reported_as <> 'found') AS reported_count,
      COALESCE(sum(credits) FILTER (WHERE state = 'posted' AND reported_as <> 'found'), 0)
        AS reported_credits,
      count(*) FILTER (WHERE state = 'posted' AND reported_as = 'found') AS found_count,
      COALESCE(sum(credits) FILTER (WHERE state = 'posted' AND reported_as = 'found'), 0)
        AS found_credits,
      count(*) FILTER (WHERE state = 'pending') AS pending_count,
      COALESCE(sum(credits) FILTER (WHERE state = 'pending'), 0) AS pending_credits,
      count(*) FILTER (WHERE state = 'voided') AS voided_count
    FROM movements m WHERE m.customer_id = f.customer_id AND m.float_id = f.id
  ) k
  WHERE f.customer_id = p_customer AND f.id = p_float
$$;
`,
};
