import { appendAudit, type AuditedBy } from '../audit/audit-log.ts';
import type { Database, Queryable } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import type { TillHeartbeat, TillState } from '../../common/ledger-contract.ts';

/**
 * A shop's tills as the ledger knows them (table `tills`): every till that made a movement or
 * sent a heartbeat, the name its owner gave it, and what its last heartbeat said. A till not
 * heard from for longer than its shop's bound (`till_quiet_minutes`) is quiet: shown as such,
 * never acted on.
 */
export interface TillRow {
  customer_id: string;
  id: string;
  first_seen_at: Date | string;
  name: string | null;
  last_seen_at: Date | string | null;
  version: string | null;
  reader_state: TillHeartbeat['reader']['state'] | null;
  reader_name: string | null;
  reader_problem: string | null;
  pending_movements: number | null;
  waiting_movements: number | null;
  reported_float: Record<string, unknown> | string | null;
}

export interface Till extends TillState {
  customerId: string;
  /** Not heard from for longer than the shop's bound (or never, and first seen that long ago). */
  quiet: boolean;
}

const iso = (value: Date | string | null): string | null =>
  value === null ? null : (value instanceof Date ? value : new Date(value)).toISOString();

export function toTillState(row: TillRow): TillState {
  const float =
    typeof row.reported_float === 'string' ? JSON.parse(row.reported_float) : row.reported_float;
  return {
    tillId: row.id,
    name: row.name,
    firstSeenAt: iso(row.first_seen_at) as string,
    lastSeenAt: iso(row.last_seen_at),
    version: row.version,
    reader:
      row.reader_state === null
        ? null
        : { state: row.reader_state, name: row.reader_name, problem: row.reader_problem },
    pendingMovements: row.pending_movements,
    waitingMovements: row.waiting_movements,
    float: (float as TillState['float']) ?? null,
  };
}

/** Whether a till is quiet at `now` under a bound of `quietMinutes`. */
export function isQuiet(till: TillState, quietMinutes: number, now: Date): boolean {
  const heard = Date.parse(till.lastSeenAt ?? till.firstSeenAt);
  return now.getTime() - heard > quietMinutes * 60_000;
}

/** A till's heartbeat; undefined when the key is no longer valid (then nothing is kept). */
export async function recordHeartbeat(
  db: Queryable,
  customerId: string,
  tillId: string,
  heartbeat: TillHeartbeat,
  keyHash: string | null,
): Promise<TillState | undefined> {
  const { rows } = await db.query<TillRow>(
    'SELECT * FROM ledger_till_heartbeat($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [
      customerId,
      tillId.toLowerCase(),
      heartbeat.version,
      heartbeat.reader.state,
      heartbeat.reader.name,
      heartbeat.reader.problem,
      heartbeat.pendingMovements,
      heartbeat.waitingMovements,
      heartbeat.float === undefined || heartbeat.float === null
        ? null
        : JSON.stringify(heartbeat.float),
      keyHash,
    ],
  );
  const row = rows[0];
  return row ? toTillState(row) : undefined;
}

/** A shop's tills, named ones first, each marked quiet or not as of now. */
export async function listTills(db: Queryable, customerId: string): Promise<Till[]> {
  const { rows } = await db.query<TillRow & { quiet_minutes: number; now: Date | string }>(
    `SELECT t.*, c.till_quiet_minutes AS quiet_minutes, now() AS now
     FROM tills t JOIN customers c ON c.id = t.customer_id
     WHERE t.customer_id = $1
     ORDER BY t.name IS NULL, lower(t.name), t.first_seen_at, t.id`,
    [customerId],
  );
  return rows.map((row) => {
    const state = toTillState(row);
    const now = row.now instanceof Date ? row.now : new Date(row.now);
    return { ...state, customerId, quiet: isQuiet(state, row.quiet_minutes, now) };
  });
}

/** Names of a shop's tills by id (for reports and lists). */
export async function tillNames(db: Queryable, customerId: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM tills WHERE customer_id = $1 AND name IS NOT NULL',
    [customerId],
  );
  return new Map(rows.map((row) => [row.id, row.name]));
}

export const MAX_TILL_NAME = 60;

/** Normalises a till name: trimmed, inner blanks as one space; undefined when not valid. */
export function tillName(raw: string): string | undefined {
  const name = raw.trim().replace(/\s+/g, ' ');
  return name.length >= 1 && name.length <= MAX_TILL_NAME ? name : undefined;
}

/** The owner names a till ("front counter"); an empty name clears it. */
export async function renameTill(
  db: Database,
  customerId: string,
  tillId: string,
  rawName: string,
  by: AuditedBy,
): Promise<void> {
  const name = rawName.trim() === '' ? null : tillName(rawName);
  if (name === undefined) {
    throw ledgerErrors.invalidInput(`name: 1 to ${MAX_TILL_NAME} characters, or empty to clear it`);
  }
  await db.transaction(async (tx) => {
    const before = await tx.query<{ name: string | null }>(
      'SELECT name FROM tills WHERE customer_id = $1 AND id = $2 FOR NO KEY UPDATE',
      [customerId, tillId],
    );
    if (before.rowCount === 0) throw ledgerErrors.tillNotFound(tillId);
    const from = before.rows[0]?.name ?? null;
    if (from === name) return;
    await tx.query('UPDATE tills SET name = $3 WHERE customer_id = $1 AND id = $2', [
      customerId,
      tillId,
      name,
    ]);
    await appendAudit(tx, {
      ...by,
      customerId,
      action: 'till.rename',
      subject: tillId,
      detail: { from, to: name },
    });
  });
}
