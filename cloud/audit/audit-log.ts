import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

/**
 * The audit log: every operator action, who, when, what and why, in an append-only table
 * whose rows are chained by hash (each row's hash covers its fields and the hash of the row
 * before it), so a row changed or taken out afterwards breaks the chain, and
 * `card-wallet-cloud check` says where (audit-check.ts). Each shop has its own chain (its
 * rows live with the shop's, like every table keyed by its customer), and the provider's own
 * actions (an admin account made, say) have one of their own.
 *
 * A row is appended in the transaction of the action it records: an action without its row,
 * or a row without its action, never commits. A chain's appends are serialised by an advisory
 * lock, so it never forks, whichever ledger process appends.
 */

/** The hash the first row of a chain chains to. */
export const GENESIS_HASH = '0'.repeat(64);
/** The chain of the provider's own actions (no shop). */
export const PROVIDER_CHAIN = '00000000-0000-0000-0000-000000000000';
/** The advisory lock class of the chains (migration 10's number). */
const AUDIT_LOCK_CLASS = 10;

/** Who did it: an operator in the console, a provider at the admin CLI, a till, a setup link. */
export type AuditActor =
  | { kind: 'operator'; operatorId: string; login: string }
  | { kind: 'cli'; user: string }
  | { kind: 'till'; tillId: string }
  /** A caller of the ledger's API with this key (its fingerprint), deciding without a till. */
  | { kind: 'key'; fingerprint: string }
  | { kind: 'setup-link' };

export type AuditAction =
  | 'operator.create'
  | 'operator.disable'
  | 'operator.enable'
  | 'operator.reset-password'
  | 'operator.change-password'
  | 'operator.log-in'
  | 'operator.log-out-everywhere'
  | 'movement.post'
  | 'movement.void'
  | 'key.issue'
  | 'key.assign'
  | 'key.revoke'
  | 'pool.top-up'
  | 'shop.create'
  | 'shop.credit-cost'
  | 'shop.time-zone'
  | 'shop.till-quiet-bound'
  | 'till.rename'
  | 'card.import'
  | 'float.settings'
  | 'float.close'
  | 'float.write-off'
  | 'card.block'
  | 'card.unblock'
  | 'card.replace'
  | 'card.correct'
  | 'card.cancel-change'
  | 'card.rules'
  | 'card.holder-label';

/** Actions that move money or change a key: their reason is required. */
export const ACTIONS_NEEDING_A_REASON: ReadonlySet<AuditAction> = new Set<AuditAction>([
  'movement.post',
  'movement.void',
  'key.issue',
  'key.assign',
  'key.revoke',
  'pool.top-up',
  'float.write-off',
  'card.block',
  'card.unblock',
  'card.replace',
  'card.correct',
  'card.cancel-change',
]);

/** Who acts, and why: what an operator action's audit log row says of its doer. */
export interface AuditedBy {
  actor: AuditActor;
  reason?: string | null;
}

export interface AuditEntry {
  actor: AuditActor;
  /** The shop it concerns; null: the provider's own (an admin account, say). */
  customerId: string | null;
  action: AuditAction;
  /** What it was done to: a movement id, `key:` and a key's fingerprint, an operator's login. */
  subject?: string | null;
  reason?: string | null;
  /** What else describes it (credits, the old and new value), as JSON. */
  detail?: Record<string, unknown>;
}

export interface AuditRecord {
  /** The shop whose chain it is in; null: the provider's chain. */
  customerId: string | null;
  seq: number;
  at: string;
  actor: string;
  operatorId: string | null;
  action: string;
  subject: string | null;
  reason: string | null;
  /** JSON text, exactly as hashed. */
  detail: string;
  prevHash: string;
  hash: string;
}

/** The actor as stored: `operator:LOGIN`, `cli:USER`, `till:ID`, `key:FINGERPRINT`, `setup-link`. */
export function actorText(actor: AuditActor): string {
  switch (actor.kind) {
    case 'operator':
      return `operator:${actor.login}`;
    case 'cli':
      return `cli:${actor.user}`;
    case 'till':
      return `till:${actor.tillId}`;
    case 'key':
      return `key:${actor.fingerprint}`;
    case 'setup-link':
      return 'setup-link';
  }
}

/** A row's hash: SHA-256 of its fields and the previous hash, in a fixed order. */
export function auditHash(record: Omit<AuditRecord, 'hash'>): string {
  const fields = [
    record.customerId,
    record.seq,
    record.at,
    record.actor,
    record.operatorId,
    record.action,
    record.subject,
    record.reason,
    record.detail,
    record.prevHash,
  ];
  return createHash('sha256').update(JSON.stringify(fields), 'utf8').digest('hex');
}

export class AuditReasonMissing extends Error {
  constructor(readonly action: AuditAction) {
    super(`${action} needs a reason`);
    this.name = 'AuditReasonMissing';
  }
}

/**
 * Appends one row, in the caller's transaction (`tx` must be one: the lock is released at its
 * end). Throws AuditReasonMissing for an action that needs a reason and has none.
 */
export async function appendAudit(tx: Queryable, entry: AuditEntry): Promise<AuditRecord> {
  const reason = entry.reason?.trim() || null;
  if (reason === null && ACTIONS_NEEDING_A_REASON.has(entry.action)) {
    throw new AuditReasonMissing(entry.action);
  }
  const chain = entry.customerId ?? PROVIDER_CHAIN;
  await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [
    AUDIT_LOCK_CLASS,
    chain,
  ]);
  const last = await tx.query<{ seq: number | string; hash: string }>(
    'SELECT seq, hash FROM audit_log WHERE customer_id = $1 ORDER BY seq DESC LIMIT 1',
    [chain],
  );
  const previous = last.rows[0];
  const unhashed: Omit<AuditRecord, 'hash'> = {
    customerId: entry.customerId,
    seq: previous ? Number(previous.seq) + 1 : 1,
    at: new Date().toISOString(),
    actor: actorText(entry.actor),
    operatorId: entry.actor.kind === 'operator' ? entry.actor.operatorId : null,
    action: entry.action,
    subject: entry.subject ?? null,
    reason,
    detail: JSON.stringify(entry.detail ?? {}),
    prevHash: previous?.hash ?? GENESIS_HASH,
  };
  const record: AuditRecord = { ...unhashed, hash: auditHash(unhashed) };
  await tx.query(
    `INSERT INTO audit_log (customer_id, seq, at, actor, operator_id, action, subject, reason,
                            detail, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      chain,
      record.seq,
      record.at,
      record.actor,
      record.operatorId,
      record.action,
      record.subject,
      record.reason,
      record.detail,
      record.prevHash,
      record.hash,
    ],
  );
  return record;
}

export interface AuditRow {
  customer_id: string;
  seq: number | string;
  at: Date | string;
  actor: string;
  operator_id: string | null;
  action: string;
  subject: string | null;
  reason: string | null;
  detail: string;
  prev_hash: string;
  hash: string;
}

export const AUDIT_COLUMNS =
  'customer_id, seq, at, actor, operator_id, action, subject, reason, detail, prev_hash, hash';

export function toAuditRecord(row: AuditRow): AuditRecord {
  return {
    customerId: row.customer_id === PROVIDER_CHAIN ? null : row.customer_id,
    seq: Number(row.seq),
    at: (row.at instanceof Date ? row.at : new Date(row.at)).toISOString(),
    actor: row.actor,
    operatorId: row.operator_id,
    action: row.action,
    subject: row.subject,
    reason: row.reason,
    detail: row.detail,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * The newest rows first: of some shops' chains (null: every chain, the provider's included;
 * then newest by time), before `beforeSeq` when paging one shop's.
 */
export async function listAudit(
  db: Queryable,
  {
    customerIds,
    beforeSeq,
    subject,
    limit = 100,
  }: {
    customerIds: readonly string[] | null;
    beforeSeq?: number;
    /** Only the rows about this (a movement id, say). */
    subject?: string;
    limit?: number;
  },
): Promise<AuditRecord[]> {
  const params: unknown[] = [Math.min(Math.max(limit, 1), 1000)];
  const conditions: string[] = [];
  if (customerIds !== null)
    conditions.push(`customer_id = ANY($${params.push(customerIds)}::uuid[])`);
  if (beforeSeq !== undefined) conditions.push(`seq < $${params.push(beforeSeq)}`);
  if (subject !== undefined) conditions.push(`subject = $${params.push(subject)}`);
  const { rows } = await db.query<AuditRow>(
    `SELECT ${AUDIT_COLUMNS} FROM audit_log
     ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
     ORDER BY at DESC, seq DESC LIMIT $1`,
    params,
  );
  return rows.map(toAuditRecord);
}
