import { randomUUID } from 'node:crypto';
import { appendAudit, type AuditActor } from '../audit/audit-log.ts';
import type { Database, Queryable } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import {
  endSessions,
  findOperatorRow,
  LOGIN_PATTERN,
  normalLogin,
  toOperator,
  type Operator,
  type Role,
} from './operators.ts';
import { hashPassword, passwordProblem, temporaryPassword, verifyPassword } from './passwords.ts';

/**
 * Who acts on accounts: an operator in the console, or the provider at the admin CLI (no
 * operator: may do anything, and is audited as `cli:USER`).
 */
export interface Acting {
  actor: AuditActor;
  operator: Operator | null;
}

export interface NewOperator {
  login: string;
  name: string;
  role: Role;
  /** Owner: one or more; staff: exactly one; admin: none. */
  shops: string[];
  /** A password chosen now (the setup link); without it a temporary one is made and shown once. */
  password?: string;
}

export interface CreatedOperator {
  operator: Operator;
  /** Shown once; the operator must choose their own at the first log-in. */
  temporaryPassword: string | null;
}

/** Whether `acting` may create, disable or reset an account of `role` in `shops`. */
export function mayManage(acting: Operator | null, role: Role, shops: readonly string[]): boolean {
  if (acting === null) return true;
  if (acting.disabledAt !== null) return false;
  if (acting.role === 'admin') return role !== 'admin';
  if (acting.role === 'owner') {
    return (
      role === 'staff' && shops.length > 0 && shops.every((shop) => acting.shops.includes(shop))
    );
  }
  return false;
}

function checkShape(input: NewOperator): { login: string; name: string } {
  const login = normalLogin(input.login);
  if (!LOGIN_PATTERN.test(login)) {
    throw ledgerErrors.invalidInput(
      'login: 3 to 64 of a-z, 0-9 and . _ @ -, starting with a letter or digit',
    );
  }
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    throw ledgerErrors.invalidInput('name: 1 to 100 characters');
  }
  if (input.role === 'admin' && input.shops.length > 0) {
    throw ledgerErrors.invalidInput('shops: a provider admin sees every shop and belongs to none');
  }
  if (input.role === 'owner' && input.shops.length === 0) {
    throw ledgerErrors.invalidInput('shops: an owner has at least one shop');
  }
  if (input.role === 'staff' && input.shops.length !== 1) {
    throw ledgerErrors.invalidInput('shops: a staff member belongs to exactly one shop');
  }
  return { login, name };
}

export async function createOperator(
  db: Database,
  acting: Acting,
  input: NewOperator,
): Promise<CreatedOperator> {
  const checked = await prepareOperator(acting, input);
  return db.transaction((tx) => insertOperator(tx, acting, checked));
}

/** A new account checked and its password hashed: ready to insert in a transaction. */
export interface PreparedOperator extends NewOperator {
  passwordHash: string;
  temporaryPassword: string | null;
}

/** Checks who may make the account and its shape, and hashes its password (slow: no lock held). */
export async function prepareOperator(
  acting: Acting,
  input: NewOperator,
): Promise<PreparedOperator> {
  const { login, name } = checkShape(input);
  if (!mayManage(acting.operator, input.role, input.shops)) {
    throw ledgerErrors.forbidden(`you may not create a ${input.role} account here`);
  }
  if (input.password !== undefined) {
    const problem = passwordProblem(input.password, login);
    if (problem) throw ledgerErrors.invalidInput(`password: ${problem}`);
  }
  const temporary = input.password === undefined ? temporaryPassword() : null;
  const passwordHash = await hashPassword(input.password ?? (temporary as string));
  return { ...input, login, name, passwordHash, temporaryPassword: temporary };
}

/** Inserts a prepared account with its shops and audit rows, in the caller's transaction. */
export async function insertOperator(
  tx: Queryable,
  acting: Acting,
  input: PreparedOperator,
): Promise<CreatedOperator> {
  const id = randomUUID();
  const { rowCount } = await tx.query(
    `INSERT INTO operators (id, login, name, role, password_hash, must_change_password, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (login) DO NOTHING`,
    [
      id,
      input.login,
      input.name,
      input.role,
      input.passwordHash,
      input.temporaryPassword !== null,
      acting.operator?.id ?? null,
    ],
  );
  if (rowCount === 0) throw ledgerErrors.loginTaken(input.login);
  for (const shop of new Set(input.shops)) {
    const known = await tx.query('SELECT 1 FROM customers WHERE id = $1', [shop]);
    if (known.rowCount === 0) throw ledgerErrors.customerNotFound(shop);
    await tx.query('INSERT INTO operator_shops (operator_id, customer_id) VALUES ($1, $2)', [
      id,
      shop,
    ]);
  }
  for (const shop of input.shops.length > 0 ? input.shops : [null]) {
    await appendAudit(tx, {
      actor: acting.actor,
      customerId: shop,
      action: 'operator.create',
      subject: input.login,
      detail: { role: input.role, name: input.name },
    });
  }
  const row = await findOperatorRow(tx, { id });
  if (!row) throw new Error('an operator just made is gone');
  return { operator: toOperator(row), temporaryPassword: input.temporaryPassword };
}

/** The account `acting` wants to change, locked, once it may. */
async function managed(tx: Queryable, acting: Acting, login: string) {
  const row = await findOperatorRow(tx, { login }, { lock: true });
  if (!row) throw ledgerErrors.operatorNotFound(normalLogin(login));
  const target = toOperator(row);
  if (acting.operator?.id === target.id) {
    throw ledgerErrors.forbidden('change your own account on the Account page');
  }
  if (!mayManage(acting.operator, target.role, target.shops)) {
    throw ledgerErrors.forbidden(`you may not manage ${target.login}`);
  }
  return target;
}

async function auditPerShop(
  tx: Queryable,
  acting: Acting,
  target: Operator,
  action: 'operator.disable' | 'operator.enable' | 'operator.reset-password',
  reason?: string,
): Promise<void> {
  for (const shop of target.shops.length > 0 ? target.shops : [null]) {
    await appendAudit(tx, {
      actor: acting.actor,
      customerId: shop,
      action,
      subject: target.login,
      reason,
    });
  }
}

/** Disables (ending every session) or enables an account. */
export async function setOperatorDisabled(
  db: Database,
  acting: Acting,
  login: string,
  disabled: boolean,
  reason?: string,
): Promise<Operator> {
  return db.transaction(async (tx) => {
    const target = await managed(tx, acting, login);
    if ((target.disabledAt !== null) === disabled) return target;
    await tx.query(`UPDATE operators SET disabled_at = CASE WHEN $2 THEN now() END WHERE id = $1`, [
      target.id,
      disabled,
    ]);
    if (disabled) await endSessions(tx, target.id);
    await auditPerShop(
      tx,
      acting,
      target,
      disabled ? 'operator.disable' : 'operator.enable',
      reason,
    );
    const row = await findOperatorRow(tx, { id: target.id });
    return toOperator(row as NonNullable<typeof row>);
  });
}

/**
 * The recovery path (no email in scope): the role above sets a temporary password, shown
 * once; every session of the account ends, and its next log-in must choose a new password.
 */
export async function resetOperatorPassword(
  db: Database,
  acting: Acting,
  login: string,
  reason?: string,
): Promise<{ operator: Operator; temporaryPassword: string }> {
  const temporary = temporaryPassword();
  const hash = await hashPassword(temporary);
  return db.transaction(async (tx) => {
    const target = await managed(tx, acting, login);
    await tx.query(
      'UPDATE operators SET password_hash = $2, must_change_password = true WHERE id = $1',
      [target.id, hash],
    );
    await endSessions(tx, target.id);
    await auditPerShop(tx, acting, target, 'operator.reset-password', reason);
    return { operator: { ...target, mustChangePassword: true }, temporaryPassword: temporary };
  });
}

/**
 * An operator changes their own password, proving the current one. Every other session of
 * theirs ends (`keepSession`: the id hash of the one they are using).
 */
export async function changeOwnPassword(
  db: Database,
  operator: Operator,
  current: string,
  next: string,
  keepSession: string | null,
): Promise<void> {
  const problem = passwordProblem(next, operator.login);
  if (problem) throw ledgerErrors.invalidInput(`new password: ${problem}`);
  const row = await findOperatorRow(db, { id: operator.id });
  if (!row || !(await verifyPassword(current, row.password_hash))) {
    throw ledgerErrors.invalidInput('current password: it is not the current password');
  }
  if (current === next) throw ledgerErrors.invalidInput('new password: choose another one');
  const hash = await hashPassword(next);
  await db.transaction(async (tx) => {
    await tx.query(
      'UPDATE operators SET password_hash = $2, must_change_password = false WHERE id = $1',
      [operator.id, hash],
    );
    await tx.query('DELETE FROM console_sessions WHERE operator_id = $1 AND id_hash <> $2', [
      operator.id,
      keepSession ?? '',
    ]);
    await appendAudit(tx, {
      actor: { kind: 'operator', operatorId: operator.id, login: operator.login },
      customerId: null,
      action: 'operator.change-password',
      subject: operator.login,
    });
  });
}

/** Ends every session of the operator, this one included. */
export async function logOutEverywhere(db: Database, operator: Operator): Promise<number> {
  return db.transaction(async (tx) => {
    const ended = await endSessions(tx, operator.id);
    await appendAudit(tx, {
      actor: { kind: 'operator', operatorId: operator.id, login: operator.login },
      customerId: null,
      action: 'operator.log-out-everywhere',
      subject: operator.login,
      detail: { sessions: ended },
    });
    return ended;
  });
}
