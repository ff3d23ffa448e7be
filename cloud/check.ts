import { checkAuditLog } from './audit/audit-check.ts';
import { checkDailyTakings } from './reports/daily-takings-check.ts';
import type { Database } from './db/database.ts';

export interface CheckReport {
  ok: boolean;
  customers: number;
  movements: number;
  entries: number;
  cards: number;
  auditRows: number;
  /** Operator decisions and pool top-ups matched with their audit log row. */
  operatorActions: number;
  problems: string[];
}

/**
 * Verifies the ledger from one consistent snapshot (safe while ledger processes serve):
 * every customer's balance equals the sum of its entries and its last entry's balance_after;
 * every movement's entries add up to what its kind and state imply (a pending or posted
 * recharge -credits, a posted discharge +credits, anything else 0); every card's account
 * equals its import + posted recharges - posted and pending discharges (+ the overdraw written
 * off by migration 3); the audit log's chain is intact and every operator decision and pool
 * top-up since it began has its row (audit/audit-check.ts); the daily takings the reports read
 * are the posted movements counted per local day (reports/daily-takings-check.ts).
 */
export async function checkLedger(db: Database): Promise<CheckReport> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const problems: string[] = [];

    const balances = await tx.query<{
      id: string;
      credits: string | number;
      total: string | number;
      last_balance: string | number | null;
    }>(
      `SELECT c.id, c.credits, COALESCE(sums.total, 0) AS total, last.balance_after AS last_balance
       FROM customers c
       LEFT JOIN (SELECT customer_id, sum(delta) AS total FROM ledger_entries GROUP BY customer_id) sums
         ON sums.customer_id = c.id
       LEFT JOIN (SELECT DISTINCT ON (customer_id) customer_id, balance_after FROM ledger_entries
                  ORDER BY customer_id, id DESC) last
         ON last.customer_id = c.id
       ORDER BY c.id`,
    );
    for (const row of balances.rows) {
      const credits = BigInt(row.credits);
      if (credits !== BigInt(row.total)) {
        problems.push(`customer ${row.id}: balance ${credits} != sum of entries ${row.total}`);
      }
      const last = row.last_balance === null ? 0n : BigInt(row.last_balance);
      if (credits !== last) {
        problems.push(
          `customer ${row.id}: balance ${credits} != last entry's balance_after ${last}`,
        );
      }
    }

    const movements = await tx.query<{
      id: string;
      kind: string;
      state: string;
      credits: number | string;
      total: number | string;
      foreign_entries: number | string;
    }>(
      `SELECT m.id, m.kind, m.state, m.credits, COALESCE(sum(e.delta), 0) AS total,
              count(e.id) FILTER (WHERE e.customer_id <> m.customer_id) AS foreign_entries
       FROM movements m LEFT JOIN ledger_entries e ON e.movement_id = m.id
       GROUP BY m.customer_id, m.id
       HAVING COALESCE(sum(e.delta), 0) <> CASE
           WHEN m.kind = 'recharge' AND m.state IN ('pending', 'posted') THEN -m.credits
           WHEN m.kind = 'discharge' AND m.state = 'posted' THEN m.credits
           ELSE 0 END
         OR count(e.id) FILTER (WHERE e.customer_id <> m.customer_id) > 0
       ORDER BY m.id`,
    );
    for (const row of movements.rows) {
      problems.push(
        `movement ${row.id} (${row.kind}, ${row.state}, ${row.credits} credits): entries sum to ${row.total}` +
          (Number(row.foreign_entries) > 0
            ? `, ${row.foreign_entries} entries of another customer`
            : ''),
      );
    }

    const cards = await tx.query<{
      customer_id: string;
      card_id: string;
      credits: number | string;
      expected: number | string;
    }>(
      `WITH moved AS (
         SELECT customer_id, card_id, sum(CASE
             WHEN kind = 'recharge' AND state = 'posted' THEN credits
             WHEN kind = 'discharge' AND state IN ('pending', 'posted') THEN -credits
             ELSE 0 END) AS net
         FROM movements GROUP BY customer_id, card_id),
       cards AS (
         SELECT customer_id, card_id FROM card_accounts
         UNION SELECT customer_id, card_id FROM moved
         UNION SELECT customer_id, card_id FROM card_imports)
       SELECT k.customer_id, k.card_id, COALESCE(a.credits, 0) AS credits,
              COALESCE(m.net, 0) + COALESCE(i.credits, 0) + COALESCE(a.legacy_overdraw, 0) AS expected
       FROM cards k
       LEFT JOIN card_accounts a ON a.customer_id = k.customer_id AND a.card_id = k.card_id
       LEFT JOIN moved m ON m.customer_id = k.customer_id AND m.card_id = k.card_id
       LEFT JOIN card_imports i ON i.customer_id = k.customer_id AND i.card_id = k.card_id
       ORDER BY k.customer_id, k.card_id`,
    );
    for (const row of cards.rows) {
      if (BigInt(row.credits) !== BigInt(row.expected)) {
        problems.push(
          `card ${row.card_id} of customer ${row.customer_id}: account ${row.credits} != imported + movements ${row.expected}`,
        );
      }
    }

    const audit = await checkAuditLog(tx);
    problems.push(...audit.problems);
    const days = await checkDailyTakings(tx);
    problems.push(...days.problems);

    const counts = await tx.query<{ movements: number | string; entries: number | string }>(
      `SELECT (SELECT count(*) FROM movements) AS movements,
              (SELECT count(*) FROM ledger_entries) AS entries`,
    );
    return {
      ok: problems.length === 0,
      customers: balances.rows.length,
      movements: Number(counts.rows[0]?.movements ?? 0),
      entries: Number(counts.rows[0]?.entries ?? 0),
      cards: cards.rows.length,
      auditRows: audit.rows,
      operatorActions: audit.operatorActions,
      problems,
    };
  });
}
