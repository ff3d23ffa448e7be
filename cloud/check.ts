import { checkAuditLog } from './audit/audit-check.ts';
import { readShopBooks, type ShopBook } from './book.ts';
import type { Database, Queryable } from './db/database.ts';
import { parseStoredDecimal } from '../common/decimal.ts';
import { checkDailyTakings } from './reports/daily-takings-check.ts';

export interface CheckReport {
  ok: boolean;
  customers: number;
  movements: number;
  entries: number;
  cards: number;
  auditRows: number;
  /** Operator decisions and pool top-ups matched with their audit log row. */
  operatorActions: number;
  floats: number;
  /** Every shop's book (book.ts): each sums to zero when the ledger holds. */
  books: ShopBook[];
  problems: string[];
}

/**
 * Verifies the ledger from one consistent snapshot (safe while ledger processes serve):
 * every customer's balance equals the sum of its entries and its last entry's balance_after;
 * every movement's entries add up to what its kind and state imply (a pending or posted
 * recharge -credits, a posted discharge +credits, anything else 0: a float recharge's entries
 * are its float's, and a pool release of one whose float closed); every card's account
 * equals its import + posted recharges - posted and pending discharges (+ the overdraw written
 * off by migration 3); every float's balance and totals equal its entries, and what the pool
 * gave it and got back; every shop's book (book.ts) sums to zero; the audit log's chain is
 * intact and every operator decision and pool top-up since it began has its row
 * (audit/audit-check.ts); and the daily takings the reports read are the posted movements
 * counted per local day (reports/daily-takings-check.ts).
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
      `WITH moved AS (
         SELECT movement_id, customer_id, delta FROM ledger_entries WHERE movement_id IS NOT NULL
         UNION ALL
         SELECT movement_id, customer_id, delta FROM float_entries
         WHERE operation IN ('recharge', 'release'))
       SELECT m.id, m.kind, m.state, m.credits, COALESCE(sum(e.delta), 0) AS total,
              count(e.movement_id) FILTER (WHERE e.customer_id <> m.customer_id) AS foreign_entries
       FROM movements m LEFT JOIN moved e ON e.movement_id = m.id
       GROUP BY m.customer_id, m.id
       HAVING COALESCE(sum(e.delta), 0) <> CASE
           WHEN (m.kind = 'recharge' OR (m.kind IN ('refund', 'correction') AND m.undoes))
                AND m.state IN ('pending', 'posted') THEN -m.credits
           WHEN (m.kind = 'discharge' OR (m.kind IN ('refund', 'correction') AND NOT m.undoes))
                AND m.state = 'posted' THEN m.credits
           ELSE 0 END
         OR count(e.movement_id) FILTER (WHERE e.customer_id <> m.customer_id) > 0
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
      bonus: number | string;
      expected_bonus: number | string;
      paid: string;
      expected_paid: string;
    }>(
      `WITH moved AS (
         SELECT customer_id, card_id,
           sum(sign * credits) AS net, sum(sign * bonus_credits) AS bonus,
           sum(sign * paid_amount) AS paid
         FROM (
           -- A compensation that undoes (undoes) a refund or correction puts back, one that
           -- undoes a pickup takes off, what they did.
           SELECT customer_id, card_id, credits, bonus_credits, paid_amount,
             CASE WHEN state = 'posted' AND (kind = 'recharge'
                         OR (kind = 'replacement' AND NOT undoes)
                         OR (kind IN ('refund', 'correction') AND undoes)) THEN 1
                  WHEN state IN ('pending', 'posted') AND (kind = 'discharge'
                         OR (kind IN ('refund', 'correction') AND NOT undoes)
                         OR (kind = 'replacement' AND undoes)) THEN -1
                  ELSE 0 END AS sign
           FROM movements) signed
         GROUP BY customer_id, card_id
         UNION ALL
         -- A replacement takes the old card's account with it, unless it was cancelled. One
         -- that waits again (its id an undoing compensation's) took the new card's, and gives
         -- it to the old card when cancelled.
         SELECT w.customer_id, w.from_card,
                CASE WHEN u.id IS NULL THEN -1 ELSE 1 END * w.credits,
                CASE WHEN u.id IS NULL THEN -1 ELSE 1 END * w.bonus_credits,
                CASE WHEN u.id IS NULL THEN -1 ELSE 1 END * w.paid_amount
         FROM card_changes w
         LEFT JOIN movements u ON u.customer_id = w.customer_id AND u.id = w.id AND u.undoes
         WHERE w.kind = 'replacement' AND (w.state <> 'cancelled') = (u.id IS NULL)),
       summed AS (
         SELECT customer_id, card_id, sum(net) AS net, sum(bonus) AS bonus, sum(paid) AS paid
         FROM moved GROUP BY customer_id, card_id),
       cards AS (
         SELECT customer_id, card_id FROM card_accounts
         UNION SELECT customer_id, card_id FROM summed
         UNION SELECT customer_id, card_id FROM card_imports)
       SELECT k.customer_id, k.card_id, COALESCE(a.credits, 0) AS credits,
              COALESCE(m.net, 0) + COALESCE(i.credits, 0) + COALESCE(a.legacy_overdraw, 0) AS expected,
              COALESCE(a.bonus_credits, 0) AS bonus, COALESCE(m.bonus, 0) AS expected_bonus,
              COALESCE(a.paid_amount, 0) AS paid,
              COALESCE(a.opening_amount, 0) + COALESCE(i.amount, 0) + COALESCE(m.paid, 0)
                AS expected_paid
       FROM cards k
       LEFT JOIN card_accounts a ON a.customer_id = k.customer_id AND a.card_id = k.card_id
       LEFT JOIN summed m ON m.customer_id = k.customer_id AND m.card_id = k.card_id
       LEFT JOIN card_imports i ON i.customer_id = k.customer_id AND i.card_id = k.card_id
       ORDER BY k.customer_id, k.card_id`,
    );
    for (const row of cards.rows) {
      const card = `card ${row.card_id} of customer ${row.customer_id}`;
      if (BigInt(row.credits) !== BigInt(row.expected)) {
        problems.push(`${card}: account ${row.credits} != imported + movements ${row.expected}`);
      }
      if (BigInt(row.bonus) !== BigInt(row.expected_bonus)) {
        problems.push(`${card}: bonus credits ${row.bonus} != movements ${row.expected_bonus}`);
      }
      if (parseStoredDecimal(String(row.paid)) !== signedDecimal(String(row.expected_paid))) {
        problems.push(
          `${card}: paid amount ${row.paid} != opening + imported + movements ${row.expected_paid}`,
        );
      }
    }

    const floats = await checkFloats(tx, problems);
    const books = await readShopBooks(tx);
    for (const book of books) {
      if (book.sum !== 0n) {
        const accounts = Object.entries(book.accounts)
          .map(([name, value]) => `${name} ${value}`)
          .join(', ');
        problems.push(`customer ${book.customerId}: the book sums to ${book.sum} (${accounts})`);
      }
    }

    const audit = await checkAuditLog(tx);
    problems.push(...audit.problems);
    const days = await checkDailyTakings(tx);
    problems.push(...days.problems);

    const counts = await tx.query<{ movements: number | string; entries: number | string }>(
      `SELECT (SELECT count(*) FROM movements) AS movements,
              (SELECT count(*) FROM ledger_entries) + (SELECT count(*) FROM float_entries)
                AS entries`,
    );
    return {
      ok: problems.length === 0,
      customers: balances.rows.length,
      movements: Number(counts.rows[0]?.movements ?? 0),
      entries: Number(counts.rows[0]?.entries ?? 0),
      cards: cards.rows.length,
      auditRows: audit.rows,
      operatorActions: audit.operatorActions,
      floats,
      books,
      problems,
    };
  });
}

/**
 * Every float's balance equals the sum of its entries and its last entry's balance_after, its
 * totals (granted, returned, written off, overdrawn) its entries of each kind, and what the
 * pool gave it and got back the pool's entries naming it. Answers how many floats there are.
 */
async function checkFloats(tx: Queryable, problems: string[]): Promise<number> {
  const floats = await tx.query<Record<string, string | number | null>>(
    `SELECT f.customer_id, f.id, f.credits, f.granted, f.returned, f.written_off, f.overdrawn,
            COALESCE(e.total, 0) AS total, COALESCE(e.granted, 0) AS e_granted,
            COALESCE(e.returned, 0) AS e_returned, COALESCE(e.written_off, 0) AS e_written_off,
            COALESCE(e.overdrawn, 0) AS e_overdrawn, last.balance_after AS last_balance,
            COALESCE(p.pool_out, 0) AS pool_out, COALESCE(p.pool_in, 0) AS pool_in
     FROM floats f
     LEFT JOIN (SELECT customer_id, float_id, sum(delta) AS total,
                       sum(delta) FILTER (WHERE operation = 'grant') AS granted,
                       -sum(delta) FILTER (WHERE operation = 'return') AS returned,
                       -sum(delta) FILTER (WHERE operation IN ('write-off', 'write-back'))
                         AS written_off,
                       sum(delta) FILTER (WHERE operation = 'overdraw') AS overdrawn
                FROM float_entries GROUP BY customer_id, float_id) e
       ON e.customer_id = f.customer_id AND e.float_id = f.id
     LEFT JOIN (SELECT DISTINCT ON (customer_id, float_id) customer_id, float_id, balance_after
                FROM float_entries ORDER BY customer_id, float_id, id DESC) last
       ON last.customer_id = f.customer_id AND last.float_id = f.id
     LEFT JOIN (SELECT customer_id, float_id,
                       -sum(delta) FILTER (WHERE operation = 'float-out') AS pool_out,
                       sum(delta) FILTER (WHERE operation = 'float-in') AS pool_in
                FROM ledger_entries WHERE float_id IS NOT NULL GROUP BY customer_id, float_id) p
       ON p.customer_id = f.customer_id AND p.float_id = f.id
     ORDER BY f.customer_id, f.id`,
  );
  const big = (value: string | number | null | undefined) => BigInt(value ?? 0);
  for (const row of floats.rows) {
    const name = `float ${row.id} of customer ${row.customer_id}`;
    const pairs: [string, bigint, bigint][] = [
      ['balance', big(row.credits), big(row.total)],
      ["balance (last entry's balance_after)", big(row.credits), big(row.last_balance)],
      ['granted', big(row.granted), big(row.e_granted)],
      ['returned', big(row.returned), big(row.e_returned)],
      ['written off', big(row.written_off), big(row.e_written_off)],
      ['overdrawn', big(row.overdrawn), big(row.e_overdrawn)],
      ['granted (by the pool)', big(row.granted), big(row.pool_out)],
      ['returned (to the pool)', big(row.returned), big(row.pool_in)],
    ];
    for (const [what, stored, entries] of pairs) {
      if (stored !== entries) problems.push(`${name}: ${what} ${stored} != entries ${entries}`);
    }
  }
  return floats.rows.length;
}

/** A NUMERIC as the database writes it, which may be negative (an opening amount's sum). */
function signedDecimal(text: string): bigint {
  return text.startsWith('-') ? -parseStoredDecimal(text.slice(1)) : parseStoredDecimal(text);
}
