export const ledgerCountPostedRows = {
  name: 'ledger_count_posted_rows',
  sql: /* sql */ `
-- Movements created posted count in their shops' days as ledger_count_posted counts a pending
-- one posted (the same shared lock against a change of zone, the same daily_takings rows, a
-- compensation that undoes its movement taken away), but
-- once per statement: a float report inserts a run of movements in one statement, and a row
-- trigger would update its day's row once per movement (a new row version each time, which
-- the next update steps over: bench/float-reports.ts).
CREATE FUNCTION ledger_count_posted_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Every create of a pending movement is an INSERT that fires this with nothing to count:
  -- without this test, starting the two statements below cost it about 75 µs of the server's
  -- CPU, 8 % of a movement (bench/ledger-throughput.ts).
  IF NOT EXISTS (SELECT 1 FROM inserted WHERE state = 'posted') THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(11, hashtext(s.customer_id::text))
  FROM (SELECT DISTINCT customer_id FROM inserted WHERE state = 'posted' ORDER BY 1) s;
  INSERT INTO daily_takings AS d (customer_id, day, till_id, kind, compensation, movements,
                                  credits, euros, bonus_credits)
  SELECT n.customer_id, (n.occurred_at AT TIME ZONE c.time_zone)::date,
         coalesce(n.till_id, '00000000-0000-0000-0000-000000000000'), n.kind,
         n.compensates IS NOT NULL, sum(n.sign), sum(n.sign * n.credits),
         sum(n.sign * n.amount), sum(n.sign * n.bonus_credits)
  FROM (SELECT *, CASE WHEN undoes THEN -1 ELSE 1 END AS sign FROM inserted) n
  JOIN customers c ON c.id = n.customer_id
  WHERE n.state = 'posted'
  GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT (customer_id, day, till_id, kind, compensation) DO UPDATE
  SET movements = d.movements + EXCLUDED.movements, credits = d.credits + EXCLUDED.credits,
      euros = d.euros + EXCLUDED.euros, bonus_credits = d.bonus_credits + EXCLUDED.bonus_credits;
  RETURN NULL;
END
$$;
CREATE TRIGGER movements_count_posted_insert AFTER INSERT ON movements
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_count_posted_rows();
`,
};
