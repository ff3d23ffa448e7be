import type { Queryable } from '../db/database.ts';

/**
 * Proves, from the caller's snapshot, that daily_takings is its shops' posted movements counted
 * per local day (in each shop's time zone as it is now), till, kind and compensation (their
 * count, credits, euros and bonus credits): every
 * row, none missing and none extra. A problem names the shop, the day and what differs.
 */
export async function checkDailyTakings(
  tx: Queryable,
): Promise<{ rows: number; problems: string[] }> {
  const { rows } = await tx.query<{
    customer_id: string;
    day: string;
    till_id: string;
    kind: string;
    compensation: boolean;
    kept: string | null;
    counted: string | null;
  }>(
    `WITH counted AS (
       SELECT m.customer_id, (m.occurred_at AT TIME ZONE c.time_zone)::date AS day,
              coalesce(m.till_id, '00000000-0000-0000-0000-000000000000') AS till_id, m.kind,
              m.compensates IS NOT NULL AS compensation, sum(m.sign) AS movements,
              sum(m.sign * m.credits) AS credits, sum(m.sign * m.amount) AS euros,
              sum(m.sign * m.bonus_credits) AS bonus_credits
       FROM (SELECT *, CASE WHEN undoes THEN -1 ELSE 1 END AS sign FROM movements) m
       JOIN customers c ON c.id = m.customer_id
       WHERE m.state = 'posted'
       GROUP BY 1, 2, 3, 4, 5)
     SELECT coalesce(k.customer_id, n.customer_id) AS customer_id,
            coalesce(k.day, n.day)::text AS day, coalesce(k.till_id, n.till_id) AS till_id,
            coalesce(k.kind, n.kind) AS kind, coalesce(k.compensation, n.compensation) AS compensation,
            CASE WHEN k.customer_id IS NULL THEN NULL
                 ELSE k.movements || ' movements, ' || k.credits || ' credits, ' || k.euros || ' euros, '
                      || k.bonus_credits || ' bonus credits' END AS kept,
            CASE WHEN n.customer_id IS NULL THEN NULL
                 ELSE n.movements || ' movements, ' || n.credits || ' credits, ' || n.euros || ' euros, '
                      || n.bonus_credits || ' bonus credits' END AS counted
     FROM daily_takings k
     FULL JOIN counted n USING (customer_id, day, till_id, kind, compensation)
     WHERE k.customer_id IS NULL OR n.customer_id IS NULL
        OR k.movements <> n.movements OR k.credits <> n.credits OR k.euros <> n.euros
        OR k.bonus_credits <> n.bonus_credits
     ORDER BY 1, 2, 3, 4, 5
     LIMIT 100`,
  );
  const total = await tx.query<{ count: number | string }>(
    'SELECT count(*) AS count FROM daily_takings',
  );
  return {
    rows: Number(total.rows[0]?.count ?? 0),
    problems: rows.map(
      (row) =>
        `daily takings of customer ${row.customer_id} on ${row.day} (till ${row.till_id}, ${row.kind}${row.compensation ? ' compensations' : ''}): kept ${row.kept ?? 'nothing'}, the movements make ${row.counted ?? 'nothing'}`,
    ),
  };
}
