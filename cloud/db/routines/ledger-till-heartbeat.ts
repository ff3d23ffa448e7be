export const ledgerTillHeartbeat = {
  name: 'ledger_till_heartbeat',
  sql: /* sql */ `
-- POST /v1/tills/{tillId}/heartbeat (docs/cloud-api.md, "Till heartbeats"): what a till says of
-- itself, kept on its row of the shop's tills (made when it is new). p_key_hash as for a create:
-- the caller's key, checked in this statement's transaction; no row when it is not valid.
CREATE FUNCTION ledger_till_heartbeat(p_customer uuid, p_till uuid, p_version text,
                                      p_reader_state text, p_reader_name text,
                                      p_reader_problem text, p_pending integer,
                                      p_waiting integer, p_float jsonb, p_key_hash text)
RETURNS SETOF tills LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN;
  END IF;
  RETURN QUERY
  INSERT INTO tills AS t (customer_id, id, last_seen_at, version, reader_state, reader_name,
                          reader_problem, pending_movements, waiting_movements, reported_float)
  VALUES (p_customer, p_till, now(), p_version, p_reader_state, p_reader_name, p_reader_problem,
          p_pending, p_waiting, p_float)
  ON CONFLICT (customer_id, id) DO UPDATE
  SET last_seen_at = now(), version = EXCLUDED.version, reader_state = EXCLUDED.reader_state,
      reader_name = EXCLUDED.reader_name, reader_problem = EXCLUDED.reader_problem,
      pending_movements = EXCLUDED.pending_movements,
      waiting_movements = EXCLUDED.waiting_movements, reported_float = EXCLUDED.reported_float
  RETURNING t.*;
END
$$;
`,
};
