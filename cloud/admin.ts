import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-keys.ts';
import type { Database, Queryable } from './db/database.ts';
import { formatDecimal } from '../common/decimal.ts';
import { ledgerErrors } from './errors.ts';
import { appendAudit, type AuditActor, type AuditedBy } from './audit/audit-log.ts';

export type { AuditedBy };
import { keyFingerprintOfHash } from './api-keys.ts';
import { decideWithoutTill } from './ledger.ts';
import {
  changeBalance,
  CUSTOMER_COLUMNS,
  findCustomer,
  movementColumnsOf,
  toCustomer,
  toMovement,
  type Customer,
  type CustomerRow,
  type Movement,
  type MovementRow,
  type MovementState,
} from './records.ts';

/**
 * The provider's and owners' operations (the admin CLI, the console): customers, their credit
 * pools and costs, API keys, decisions without the card. Inputs are validated by the caller;
 * amounts here are already exact. Each operator action writes its audit log row in its own
 * transaction (`by`); only set-up without an operator (tests, a seed) leaves it out where it
 * may.
 */

export interface NewCustomer {
  id?: string;
  name: string;
  credits: number;
  /** Ten-thousandths of a euro, > 0. */
  creditCost: bigint;
}

export async function addCustomer(
  db: Database,
  customer: NewCustomer,
  by?: AuditedBy,
): Promise<Customer> {
  const id = customer.id ?? randomUUID();
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<CustomerRow>(
      `INSERT INTO customers (id, name, credits, credit_cost) VALUES ($1, $2, 0, $3)
       RETURNING ${CUSTOMER_COLUMNS}`,
      [id, customer.name, formatDecimal(customer.creditCost)],
    );
    const row = rows[0];
    if (!row) throw new Error('customer insert returned nothing');
    if (customer.credits > 0) {
      row.credits = (await changeBalance(tx, id, BigInt(customer.credits), 'open', null)).balance;
    }
    if (by) {
      await appendAudit(tx, {
        ...by,
        customerId: id,
        action: 'shop.create',
        subject: id,
        detail: { name: customer.name, credits: customer.credits },
      });
    }
    return toCustomer(row);
  });
}

/** Credits bought from the provider go into a shop's pool (a reason is required). */
export async function topUp(
  db: Database,
  customerId: string,
  credits: number,
  by: AuditedBy,
): Promise<Customer> {
  return db.transaction(async (tx) => {
    const row = await findCustomer(tx, customerId, { lock: true });
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    const entry = await changeBalance(tx, customerId, BigInt(credits), 'topup', null);
    row.credits = entry.balance;
    await appendAudit(tx, {
      ...by,
      customerId,
      action: 'pool.top-up',
      subject: `entry:${entry.entryId}`,
      detail: { credits, poolAfter: entry.balance },
    });
    return toCustomer(row);
  });
}

export async function setCreditCost(
  db: Database,
  customerId: string,
  creditCost: bigint,
  by?: AuditedBy,
): Promise<Customer> {
  return db.transaction(async (tx) => {
    const before = await findCustomer(tx, customerId, { lock: true });
    if (!before) throw ledgerErrors.customerNotFound(customerId);
    const { rows } = await tx.query<CustomerRow>(
      `UPDATE customers SET credit_cost = $2 WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`,
      [customerId, formatDecimal(creditCost)],
    );
    const row = rows[0] as CustomerRow;
    if (by) {
      await appendAudit(tx, {
        ...by,
        customerId,
        action: 'shop.credit-cost',
        subject: customerId,
        detail: { from: toCustomer(before).creditCost, to: toCustomer(row).creditCost },
      });
    }
    return toCustomer(row);
  });
}

export async function listCustomers(db: Database): Promise<Customer[]> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${CUSTOMER_COLUMNS} FROM customers ORDER BY created_at, id`,
  );
  return rows.map(toCustomer);
}

export interface IssuedKey {
  apiKey: string;
  customerId: string | null;
}

/** Issues a new random key, or registers `key` that the provider handed out already. */
export async function issueKey(
  db: Database,
  { customerId, key }: { customerId?: string; key?: string } = {},
  by?: AuditedBy,
): Promise<IssuedKey> {
  const apiKey = key ?? generateApiKey();
  if (!isWellFormedApiKey(apiKey)) {
    throw ledgerErrors.invalidKey();
  }
  return db.transaction(async (tx) => {
    if (customerId !== undefined && !(await findCustomer(tx, customerId))) {
      throw ledgerErrors.customerNotFound(customerId);
    }
    const { rowCount } = await tx.query(
      `INSERT INTO api_keys (key_hash, customer_id, assigned_at)
       VALUES ($1, $2::uuid, CASE WHEN $2::uuid IS NULL THEN NULL ELSE now() END)
       ON CONFLICT (key_hash) DO NOTHING`,
      [hashApiKey(apiKey), customerId ?? null],
    );
    if (rowCount === 0) throw ledgerErrors.keyConflict('this key is already registered');
    if (by) {
      await appendAudit(tx, {
        ...by,
        customerId: customerId ?? null,
        action: 'key.issue',
        subject: `key:${keyFingerprintOfHash(hashApiKey(apiKey))}`,
        detail: { registered: key !== undefined },
      });
    }
    return { apiKey, customerId: customerId ?? null };
  });
}

interface KeyRow {
  customer_id: string | null;
  revoked_at: Date | string | null;
}

/** Binds an unassigned key to a customer (a key never moves from one customer to another). */
export async function assignKey(
  db: Database,
  apiKey: string,
  customerId: string,
  by?: AuditedBy,
): Promise<{ customerId: string }> {
  return assignKeyByHash(db, hashApiKey(apiKey), customerId, by);
}

/** assignKey by the key's hash (the console knows keys only by their hash). */
export async function assignKeyByHash(
  db: Database,
  keyHash: string,
  customerId: string,
  by?: AuditedBy,
): Promise<{ customerId: string }> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<KeyRow>(
      'SELECT customer_id, revoked_at FROM api_keys WHERE key_hash = $1 FOR NO KEY UPDATE',
      [keyHash],
    );
    const key = rows[0];
    if (!key) throw ledgerErrors.keyNotFound();
    if (key.revoked_at !== null) throw ledgerErrors.keyConflict('the key is revoked');
    if (key.customer_id === customerId) return { customerId };
    if (key.customer_id !== null) {
      throw ledgerErrors.keyConflict(
        `the key is assigned to customer ${key.customer_id}; revoke it and issue another`,
      );
    }
    if (!(await findCustomer(tx, customerId))) throw ledgerErrors.customerNotFound(customerId);
    await tx.query(
      'UPDATE api_keys SET customer_id = $2, assigned_at = now() WHERE key_hash = $1',
      [keyHash, customerId],
    );
    if (by) {
      await appendAudit(tx, {
        ...by,
        customerId,
        action: 'key.assign',
        subject: `key:${keyFingerprintOfHash(keyHash)}`,
      });
    }
    return { customerId };
  });
}

/** Revokes a key for good (revoking a revoked key changes nothing). */
export async function revokeKey(
  db: Database,
  apiKey: string,
  by?: AuditedBy,
): Promise<{ revoked: true; customerId: string | null }> {
  return revokeKeyByHash(db, hashApiKey(apiKey), by);
}

/**
 * revokeKey by the key's hash; `of` (the console) refuses a key of another shop as unknown.
 * An audited revoke of a key revoked already changes nothing and writes no row.
 */
export async function revokeKeyByHash(
  db: Database,
  keyHash: string,
  by?: AuditedBy,
  of?: string,
): Promise<{ revoked: true; customerId: string | null }> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<KeyRow>(
      'SELECT customer_id, revoked_at FROM api_keys WHERE key_hash = $1 FOR NO KEY UPDATE',
      [keyHash],
    );
    const key = rows[0];
    if (!key || (of !== undefined && key.customer_id !== of)) throw ledgerErrors.keyNotFound();
    if (key.revoked_at !== null) return { revoked: true, customerId: key.customer_id };
    await tx.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [keyHash]);
    if (by) {
      await appendAudit(tx, {
        ...by,
        customerId: key.customer_id,
        action: 'key.revoke',
        subject: `key:${keyFingerprintOfHash(keyHash)}`,
      });
    }
    return { revoked: true, customerId: key.customer_id };
  });
}

/** A key as the back office lists it: by fingerprint, never the key itself (only its hash is kept). */
export interface ListedKey {
  hash: string;
  fingerprint: string;
  createdAt: string;
  assignedAt: string | null;
  revokedAt: string | null;
}

/** A shop's keys (`shopId`), or the provider's keys no shop has yet (null), newest first. */
export async function listKeys(db: Queryable, shopId: string | null): Promise<ListedKey[]> {
  const { rows } = await db.query<{
    key_hash: string;
    created_at: Date | string;
    assigned_at: Date | string | null;
    revoked_at: Date | string | null;
  }>(
    `SELECT key_hash, created_at, assigned_at, revoked_at FROM api_keys
     WHERE ${shopId === null ? 'customer_id IS NULL AND revoked_at IS NULL' : 'customer_id = $1'}
     ORDER BY revoked_at IS NOT NULL, created_at DESC, key_hash LIMIT 500`,
    shopId === null ? [] : [shopId],
  );
  const iso = (value: Date | string | null) =>
    value === null ? null : (value instanceof Date ? value : new Date(value)).toISOString();
  return rows.map((row) => ({
    hash: row.key_hash,
    fingerprint: keyFingerprintOfHash(row.key_hash),
    createdAt: iso(row.created_at) as string,
    assignedAt: iso(row.assigned_at),
    revokedAt: iso(row.revoked_at),
  }));
}

export type AdminMovement = Movement & { customerId: string };

/** Movements of every customer (or one), newest first. */
export async function listAllMovements(
  db: Database,
  {
    state,
    customerId,
    tillId,
    limit = 1000,
  }: { state?: MovementState; customerId?: string; tillId?: string; limit?: number },
): Promise<AdminMovement[]> {
  const conditions: string[] = [];
  const params: unknown[] = [limit];
  if (state) {
    params.push(state);
    conditions.push(`m.state = $${params.length}`);
  }
  if (customerId) {
    params.push(customerId);
    conditions.push(`m.customer_id = $${params.length}`);
  }
  if (tillId) {
    params.push(tillId);
    conditions.push(`m.till_id = $${params.length}`);
  }
  const { rows } = await db.query<MovementRow & { customer_credits: number | string }>(
    `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
     FROM movements m JOIN customers c ON c.id = m.customer_id
     ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
     ORDER BY m.created_at DESC, m.id DESC
     LIMIT $1`,
    params,
  );
  return rows.map((row) => ({
    customerId: row.customer_id,
    ...toMovement(row, row.customer_credits),
  }));
}

/**
 * An operator posts or voids a pending movement, typically one whose till is gone for good,
 * and says on what evidence (the card read at another till, a lost card, ...). The evidence is
 * kept with the movement. Nothing else decides another till's movement (docs/cloud-api.md,
 * "Tills"). Made without the card, the decision holds the card (`awaitsCard`) until a till
 * reads it and confirms it or sets the books right.
 */
export async function resolveByOperator(
  db: Database,
  input: { customerId: string; id: string; target: 'posted' | 'voided'; evidence: string },
  by: { actor: AuditActor },
): Promise<AdminMovement> {
  if (!(await findCustomer(db, input.customerId))) {
    throw ledgerErrors.customerNotFound(input.customerId);
  }
  const movement = await decideWithoutTill(
    db,
    input.customerId,
    input.id,
    input.target,
    input.evidence,
    by.actor,
  );
  return { customerId: input.customerId, ...movement };
}
