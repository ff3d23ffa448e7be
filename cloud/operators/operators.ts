import type { Queryable } from '../db/database.ts';

/**
 * The console's accounts (migration 10): a provider admin sees every shop; a shop owner their
 * own shops; staff one shop's day, read-only. Rows as stored, and the reads every part needs.
 */
export type Role = 'admin' | 'owner' | 'staff';
export const ROLES: readonly Role[] = ['admin', 'owner', 'staff'];

export interface Operator {
  id: string;
  login: string;
  name: string;
  role: Role;
  /** The shops an owner or staff member belongs to (an admin's list is empty: every shop). */
  shops: string[];
  mustChangePassword: boolean;
  disabledAt: string | null;
  createdAt: string;
}

export interface OperatorRow {
  id: string;
  login: string;
  name: string;
  role: Role;
  password_hash: string;
  must_change_password: boolean;
  disabled_at: Date | string | null;
  created_at: Date | string;
  shops: string[] | null;
}

/** A login: 3 to 64 of a-z, 0-9 and `._@-`, starting with a letter or digit (case folded). */
export const LOGIN_PATTERN = /^[a-z0-9][a-z0-9._@-]{2,63}$/;

export function normalLogin(login: string): string {
  return login.trim().toLowerCase();
}

const iso = (value: Date | string): string =>
  (value instanceof Date ? value : new Date(value)).toISOString();

export function toOperator(row: OperatorRow): Operator {
  return {
    id: row.id,
    login: row.login,
    name: row.name,
    role: row.role,
    shops: [...(row.shops ?? [])].sort(),
    mustChangePassword: row.must_change_password,
    disabledAt: row.disabled_at === null ? null : iso(row.disabled_at),
    createdAt: iso(row.created_at),
  };
}

const SELECT_OPERATOR = `
  SELECT o.id, o.login, o.name, o.role, o.password_hash, o.must_change_password, o.disabled_at,
         o.created_at,
         ARRAY(SELECT s.customer_id::text FROM operator_shops s WHERE s.operator_id = o.id) AS shops
  FROM operators o`;

export async function findOperatorRow(
  db: Queryable,
  by: { id: string } | { login: string },
  { lock = false } = {},
): Promise<OperatorRow | undefined> {
  const { rows } = await db.query<OperatorRow>(
    `${SELECT_OPERATOR} WHERE ${'id' in by ? 'o.id = $1' : 'o.login = $1'}${lock ? ' FOR NO KEY UPDATE OF o' : ''}`,
    ['id' in by ? by.id : normalLogin(by.login)],
  );
  return rows[0];
}

export async function findOperator(
  db: Queryable,
  by: { id: string } | { login: string },
): Promise<Operator | undefined> {
  const row = await findOperatorRow(db, by);
  return row && toOperator(row);
}

/**
 * Accounts as one operator may manage them: an admin every account; an owner the staff of
 * their shops; `shop` narrows to one shop's people.
 */
export async function listOperators(
  db: Queryable,
  { shops, shop }: { shops: readonly string[] | null; shop?: string },
): Promise<Operator[]> {
  const params: unknown[] = [];
  const conditions: string[] = [];
  if (shops !== null) {
    conditions.push(`o.role = 'staff' AND EXISTS (SELECT 1 FROM operator_shops s
      WHERE s.operator_id = o.id AND s.customer_id = ANY($${params.push(shops)}::uuid[]))`);
  }
  if (shop !== undefined) {
    conditions.push(`(o.role = 'admin' OR EXISTS (SELECT 1 FROM operator_shops s
      WHERE s.operator_id = o.id AND s.customer_id = $${params.push(shop)}))`);
  }
  const { rows } = await db.query<OperatorRow>(
    `${SELECT_OPERATOR} ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
     ORDER BY CASE o.role WHEN 'admin' THEN 0 WHEN 'owner' THEN 1 ELSE 2 END, o.login`,
    params,
  );
  return rows.map(toOperator);
}

/** Whether any account of this role exists (of this shop, for owners and staff). */
export async function anyOperator(db: Queryable, role: Role, shop?: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM operators o WHERE o.role = $1 AND ($2::uuid IS NULL OR EXISTS (
       SELECT 1 FROM operator_shops s WHERE s.operator_id = o.id AND s.customer_id = $2))) AS found`,
    [role, shop ?? null],
  );
  return rows[0]?.found === true;
}

/** Ends every session of an operator (log out everywhere, a disable, a password change). */
export async function endSessions(db: Queryable, operatorId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM console_sessions WHERE operator_id = $1', [
    operatorId,
  ]);
  return rowCount;
}
