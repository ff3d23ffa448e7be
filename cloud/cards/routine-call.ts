import type { Queryable } from '../db/database.ts';
import { contractRefusal, ledgerErrors } from '../errors.ts';

/**
 * One call of a ledger routine that answers jsonb (cloud/db/routines/): its refusal
 * (`{ error, detail }`) as the contract's LedgerError, else the answer.
 */
export async function callRoutine<T>(
  db: Queryable,
  sql: string,
  params: unknown[],
  customerId: string,
): Promise<T> {
  const { rows } = await db.query<{ answer: T | { error: string; detail?: string } }>(sql, params);
  const answer = rows[0]?.answer;
  if (!answer) throw new Error('a ledger function answered no row');
  if (typeof answer === 'object' && 'error' in answer && typeof answer.error === 'string') {
    if (answer.error === 'CustomerNotFound') throw ledgerErrors.customerNotFound(customerId);
    throw (
      contractRefusal(answer.error, answer.detail ?? null) ??
      new Error(`a ledger function answered an unknown refusal ${answer.error}`)
    );
  }
  return answer as T;
}
