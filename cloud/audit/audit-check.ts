import type { Queryable } from '../db/database.ts';
import {
  AUDIT_COLUMNS,
  auditHash,
  GENESIS_HASH,
  PROVIDER_CHAIN,
  toAuditRecord,
  type AuditRow,
} from './audit-log.ts';

export interface AuditCheck {
  /** Rows read. */
  rows: number;
  /** Operator-made movements and pool top-ups matched with their row. */
  operatorActions: number;
  problems: string[];
}

/** Rows read per query while walking the chain. */
const PAGE = 5_000;

/**
 * Proves, from the caller's snapshot (a REPEATABLE READ transaction), that each of the audit
 * log's chains is intact (every row's hash is the hash of its fields and the row before it,
 * with no gap) and that every movement an operator decided, and every pool top-up, since the log began
 * (migration 10) has its row.
 */
export async function checkAuditLog(tx: Queryable): Promise<AuditCheck> {
  const problems: string[] = [];
  let rows = 0;
  const chains = await tx.query<{ customer_id: string }>(
    'SELECT DISTINCT customer_id FROM audit_log ORDER BY customer_id',
  );
  for (const { customer_id: chain } of chains.rows) {
    const name = chain === PROVIDER_CHAIN ? "the provider's chain" : `shop ${chain}`;
    let expectedSeq = 1;
    let prevHash = GENESIS_HASH;
    for (;;) {
      const page = await tx.query<AuditRow>(
        `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE customer_id = $1 AND seq >= $2
         ORDER BY seq LIMIT ${PAGE}`,
        [chain, expectedSeq],
      );
      for (const row of page.rows) {
        const record = toAuditRecord(row);
        rows += 1;
        if (record.seq !== expectedSeq) {
          problems.push(
            `audit log, ${name}: row ${expectedSeq} is missing (the next row is ${record.seq})`,
          );
        }
        if (record.prevHash !== prevHash) {
          problems.push(
            `audit log, ${name}: row ${record.seq} does not chain to the row before it`,
          );
        }
        const { hash, ...fields } = record;
        if (auditHash(fields) !== hash) {
          problems.push(`audit log, ${name}: row ${record.seq} was changed after it was written`);
        }
        expectedSeq = record.seq + 1;
        prevHash = hash;
      }
      if (page.rows.length < PAGE) break;
    }
  }

  const unrecorded = await tx.query<{ what: string; customer_id: string; id: string }>(
    `WITH since AS (SELECT started_at FROM audit_log_start)
     SELECT 'movement' AS what, m.customer_id, m.id::text AS id
     FROM movements m, since
     WHERE m.evidence IS NOT NULL AND m.resolved_by_till IS NULL AND m.resolved_at >= since.started_at
       AND NOT EXISTS (
         SELECT 1 FROM audit_log a
         WHERE a.subject = m.id::text AND a.customer_id = m.customer_id
           AND a.action = CASE m.state WHEN 'posted' THEN 'movement.post' ELSE 'movement.void' END)
     UNION ALL
     SELECT 'top-up', e.customer_id, e.id::text
     FROM ledger_entries e, since
     WHERE e.operation = 'topup' AND e.created_at >= since.started_at
       AND NOT EXISTS (
         SELECT 1 FROM audit_log a
         WHERE a.subject = 'entry:' || e.id AND a.customer_id = e.customer_id
           AND a.action = 'pool.top-up')
     ORDER BY 1, 2, 3`,
  );
  for (const row of unrecorded.rows) {
    problems.push(
      row.what === 'movement'
        ? `movement ${row.id} of customer ${row.customer_id} was decided by an operator without an audit log row`
        : `top-up entry ${row.id} of customer ${row.customer_id} has no audit log row`,
    );
  }
  const matched = await tx.query<{ count: number | string }>(
    `SELECT count(*) AS count FROM audit_log WHERE action IN ('movement.post', 'movement.void', 'pool.top-up')`,
  );
  return { rows, operatorActions: Number(matched.rows[0]?.count ?? 0), problems };
}
