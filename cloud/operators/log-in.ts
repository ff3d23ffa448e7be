import { appendAudit } from '../audit/audit-log.ts';
import type { Database } from '../db/database.ts';
import type { LoginLimits } from './login-limits.ts';
import { findOperatorRow, normalLogin, toOperator, type Operator } from './operators.ts';
import { decoyHash, MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';

export interface LogInAttempt {
  login: string;
  password: string;
  address: string;
  /** The browser's device cookie, once its signature is checked: whose it is, and itself. */
  device: { operatorId: string; token: string } | null;
}

export type LogInResult =
  | { outcome: 'ok'; operator: Operator }
  /** Unknown login or wrong password (said alike). */
  | { outcome: 'refused' }
  /** The right password of a disabled account. */
  | { outcome: 'disabled' }
  /** Too many failures from here or for this account: the password was not checked. */
  | { outcome: 'held'; retryAfterSeconds: number };

/**
 * Checks a console log-in. An unknown login costs as much as a wrong password (a decoy hash is
 * verified), so the answer's timing does not tell which logins exist.
 */
export async function logIn(
  db: Database,
  limits: LoginLimits,
  attempt: LogInAttempt,
): Promise<LogInResult> {
  const login = normalLogin(attempt.login).slice(0, 64);
  const row = await findOperatorRow(db, { login });
  const device =
    row !== undefined && attempt.device?.operatorId === row.id ? attempt.device.token : null;
  const source = { address: attempt.address, login, device };
  const heldFor = limits.heldFor(source);
  if (heldFor > 0) return { outcome: 'held', retryAfterSeconds: Math.ceil(heldFor / 1000) };

  const password = attempt.password.slice(0, MAX_PASSWORD_LENGTH + 1);
  const matches = await verifyPassword(password, row?.password_hash ?? (await decoyHash()));
  if (!row || !matches) {
    limits.failed(source);
    return { outcome: 'refused' };
  }
  if (row.disabled_at !== null) return { outcome: 'disabled' };
  limits.succeeded(source);
  const operator = toOperator(row);
  await db.transaction((tx) =>
    appendAudit(tx, {
      actor: { kind: 'operator', operatorId: operator.id, login: operator.login },
      customerId: null,
      action: 'operator.log-in',
      subject: operator.login,
      detail: { address: attempt.address },
    }),
  );
  return { outcome: 'ok', operator };
}
