import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-keys.ts';
import type { Database } from './db/database.ts';
import { formatDecimal } from '../common/decimal.ts';
import { ledgerErrors } from './errors.ts';
import { Ledger } from './ledger.ts';
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
 * The provider's operations (the admin CLI): customers, their credit pools and costs, API
 * keys. Inputs are validated by the caller (the CLI); amounts here are already exact.
 */

export interface NewCustomer {
  id?: string;
  name: string;
  credits: number;
  /** Ten-thousandths of a euro, > 0. */
  creditCost: bigint;
}

export async function addCustomer(db: Database, customer: NewCustomer): Promise<Customer> {
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
      row.credits = await changeBalance(tx, id, BigInt(customer.credits), 'open', null);
    }
    return toCustomer(row);
  });
}

export async function topUp(db: Database, customerId: string, credits: number): Promise<Customer> {
  return db.transaction(async (tx) => {
    const row = await findCustomer(tx, customerId, { lock: true });
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    row.credits = await changeBalance(tx, customerId, BigInt(credits), 'topup', null);
    return toCustomer(row);
  });
}

export async function setCreditCost(
  db: Database,
  customerId: string,
  creditCost: bigint,
): Promise<Customer> {
  const { rows } = await db.query<CustomerRow>(
    `UPDATE customers SET credit_cost = $2 WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`,
    [customerId, formatDecimal(creditCost)],
  );
  const row = rows[0];
  if (!row) throw ledgerErrors.customerNotFound(customerId);
  return toCustomer(row);
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
): Promise<{ customerId: string }> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<KeyRow>(
      'SELECT customer_id, revoked_at FROM api_keys WHERE key_hash = $1 FOR UPDATE',
      [hashApiKey(apiKey)],
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
      [hashApiKey(apiKey), customerId],
    );
    return { customerId };
  });
}

/** Revokes a key for good (revoking a revoked key changes nothing). */
export async function revokeKey(
  db: Database,
  apiKey: string,
): Promise<{ revoked: true; customerId: string | null }> {
  const { rows } = await db.query<KeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE key_hash = $1
     RETURNING customer_id, revoked_at`,
    [hashApiKey(apiKey)],
  );
  const key = rows[0];
  if (!key) throw ledgerErrors.keyNotFound();
  return { revoked: true, customerId: key.customer_id };
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
): Promise<AdminMovement> {
  const ledger = new Ledger(db);
  if (!(await findCustomer(db, input.customerId))) {
    throw ledgerErrors.customerNotFound(input.customerId);
  }
  const movement =
    input.target === 'posted'
      ? await ledger.postMovement(input.customerId, input.id, { evidence: input.evidence })
      : await ledger.voidMovement(input.customerId, input.id, { evidence: input.evidence });
  return { customerId: input.customerId, ...movement };
}
