export const ledgerCountPosted = {
  name: 'ledger_count_posted',
  sql: /* sql */ `
-- A pending movement posted counts in its shop's day (one created posted: ledger_count_posted_
-- rows, once per statement): the daily_takings row of its local day, till, kind and
-- compensation grows by it (its credits, euros and bonus credits; a compensation that undoes
-- its movement, shrinks), in the post's own transaction. The day is that of occurred_at in the
-- shop's time zone as it is now: a change of zone waits for posts in flight and they for it (a
-- shared lock against the rebuild's exclusive one, ledger_rebuild_daily_takings), so no post is
-- counted in a day of the old zone.
CREATE FUNCTION ledger_count_posted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_zone text;
  v_sign integer := CASE WHEN NEW.undoes THEN -1 ELSE 1 END;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(11, hashtext(NEW.customer_id::text));
  SELECT time_zone INTO v_zone FROM customers WHERE id = NEW.customer_id;
  INSERT INTO daily_takings AS d (customer_id, day, till_id, kind, compensation, movements,
                                  credits, euros, bonus_credits)
  VALUES (NEW.customer_id, (NEW.occurred_at AT TIME ZONE v_zone)::date,
          coalesce(NEW.till_id, '00000000-0000-0000-0000-000000000000'), NEW.kind,
          NEW.compensates IS NOT NULL, v_sign, v_sign * NEW.credits, v_sign * NEW.amount,
          v_sign * NEW.bonus_credits)
  ON CONFLICT (customer_id, day, till_id, kind, compensation) DO UPDATE
  SET movements = d.movements + EXCLUDED.movements, credits = d.credits + EXCLUDED.credits,
      euros = d.euros + EXCLUDED.euros, bonus_credits = d.bonus_credits + EXCLUDED.bonus_credits;
  RETURN NULL;
END
$$;
CREATE TRIGGER movements_count_posted_update AFTER UPDATE OF state ON movements
  FOR EACH ROW WHEN (OLD.state <> 'posted' AND NEW.state = 'posted')
  EXECUTE FUNCTION ledger_count_posted();
`,
};
