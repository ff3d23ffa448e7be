/**
 * What every `card-wallet-cloud` command shares: reading its options (each problem a
 * UsageError naming the option), opening the database it names, printing its answer, and who
 * it is in the audit log.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { AuditedBy } from './audit/audit-log.ts';
import type { Database } from './db/database.ts';
import { openDatabase } from './db/open-database.ts';
import { parseDecimal } from '../common/decimal.ts';

export const NAME = 'card-wallet-cloud';
export const DATABASE_ENV = 'CARD_WALLET_CLOUD_DATABASE';

/** Invalid arguments: exit code 2, the message naming the option. */
export class UsageError extends Error {}

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  /** Resolves (with a reason such as "SIGTERM") when `serve` should close. */
  waitForStop(): Promise<string>;
}

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

const databaseOption: Options = { database: { type: 'string' } };

export function parse(args: string[], options: Options): Values {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, ...databaseOption },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    return values as Values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // node's messages name the option: "Unknown option '--foo'", "Option '--port <value>' ..."
    throw new UsageError(
      ((error as Error).message.split('\n')[0] ?? '').split('. To specify')[0] ||
        'invalid arguments',
    );
  }
}

export function text(values: Values, name: string, required = true): string | undefined {
  const value = values[name];
  if (value === undefined || value === '') {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  return String(value);
}

export function integer(values: Values, name: string, min: number, max: number): number;
export function integer(
  values: Values,
  name: string,
  min: number,
  max: number,
  required: false,
): number | undefined;
export function integer(values: Values, name: string, min: number, max: number, required = true) {
  const raw = text(values, name, required);
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

export function uuid(values: Values, name: string): string;
export function uuid(values: Values, name: string, required: false): string | undefined;
export function uuid(values: Values, name: string, required = true) {
  const raw = text(values, name, required);
  if (raw === undefined) return undefined;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    throw new UsageError(`--${name} must be a UUID, got "${raw}"`);
  }
  return raw.toLowerCase();
}

export function creditCost(values: Values): bigint {
  const raw = text(values, 'credit-cost') ?? '';
  const value = parseDecimal(raw, { maxIntegerDigits: 8 });
  if (value === undefined || value <= 0n) {
    throw new UsageError(
      `--credit-cost must be a decimal > 0 with at most 4 decimals, like 0.50 (got "${raw}")`,
    );
  }
  return value;
}

export function databaseTarget(io: CliIo, values: Values): string {
  const target = text(values, 'database', false) ?? io.env[DATABASE_ENV];
  if (!target) throw new UsageError(`--database is required (or set ${DATABASE_ENV})`);
  return target;
}

export async function withDatabase<T>(
  io: CliIo,
  values: Values,
  fn: (db: Database) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(databaseTarget(io, values), { poolSize: 2 });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

export function print(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export const MAX_CREDITS = Number.MAX_SAFE_INTEGER;

/**
 * The provider at the command line, as the audit log names them (`cli:USER`), with the
 * command's `--reason`; `required` for actions that move money or change a key.
 */
export function cliAudit(io: CliIo, values: Values, required: boolean): AuditedBy {
  const reason = text(values, 'reason', false)?.trim();
  if (required && !reason) {
    throw new UsageError('--reason is required: say why, in 1 to 500 characters (audit log)');
  }
  if (reason !== undefined && reason.length > 500) {
    throw new UsageError('--reason must be at most 500 characters');
  }
  const user = io.env.USER ?? io.env.USERNAME ?? io.env.LOGNAME ?? 'unknown';
  return { actor: { kind: 'cli', user }, reason: reason || null };
}
