/**
 * `card-wallet-cloud float ...`: a shop's float settings, what the ledger knows of its tills and
 * floats, and an operator closing the float of a till that cannot (docs/operators.md, "When
 * the internet drops").
 */
import { readFile } from 'node:fs/promises';
import type { CardType, FloatMovementReport, FloatSettings } from '../common/ledger-contract.ts';
import {
  cliAudit,
  integer,
  parse,
  print,
  text,
  UsageError,
  uuid,
  withDatabase,
  type CliIo,
} from './cli-args.ts';
import { ledgerErrors } from './errors.ts';
import { CARD_TYPES, OFFLINE_LIMIT_BOUNDS, setFloatSettings, showFloats } from './float-admin.ts';
import { Floats } from './floats.ts';
import { parseMovements } from './http/float-request.ts';
import { findCustomer } from './records.ts';

export const FLOAT_USAGE = `  float settings --customer ID [--size N] [--low-water N] [--offline-cap N|none]
                 [--offline-limit DURATION] [--card-types classic,desfire] [--reason TEXT]
      The shop's till floats: what a full float holds (0: no float), the low-water mark
      its tills top up at, the most one recharge may take while offline, how long a till
      may sell offline (24h, 90m, 2d; default 24h), which card types. Prints them all.
      Written to the audit log (float.settings), with the reason if given.
  float show --customer ID [--till ID]
      The shop's tills and floats as the ledger knows them: what each float holds, what
      was reported, found on cards, undecided, and the ids nothing names yet.
  float close --customer ID --float ID --write-off N [--reason TEXT] [--report FILE]
      Close the float of a till that cannot (gone, or back without its journal): the
      final report (FILE: a JSON array of movements, as POST /v1/float-reports takes),
      then N credits written off (what the till sold without a report; at most what the
      float holds; a reason is required when N > 0), the rest back to the pool. Written
      to the audit log (float.write-off, or float.close when N is 0).`;

const MAX_SIZE = 2_147_483_647;

export async function floatCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number> {
  switch (sub) {
    case 'settings':
      return settings(io, args);
    case 'show':
      return show(io, args);
    case 'close':
      return close(io, args);
    default:
      throw new UsageError(`unknown command "float ${sub ?? ''}"; use settings, show or close`);
  }
}

async function settings(io: CliIo, args: string[]): Promise<number> {
  const values = parse(args, {
    customer: { type: 'string' },
    size: { type: 'string' },
    'low-water': { type: 'string' },
    'offline-cap': { type: 'string' },
    'offline-limit': { type: 'string' },
    'card-types': { type: 'string' },
    reason: { type: 'string' },
  });
  const customerId = uuid(values, 'customer');
  const by = cliAudit(io, values, false);
  const change: Partial<FloatSettings> = {};
  const size = integer(values, 'size', 0, MAX_SIZE, false);
  if (size !== undefined) change.size = size;
  const lowWater = integer(values, 'low-water', 0, MAX_SIZE, false);
  if (lowWater !== undefined) change.lowWater = lowWater;
  const cap = text(values, 'offline-cap', false);
  if (cap !== undefined) {
    change.offlineCap = cap === 'none' ? null : integer(values, 'offline-cap', 1, MAX_SIZE);
  }
  const limit = text(values, 'offline-limit', false);
  if (limit !== undefined) change.offlineLimitSeconds = durationSeconds(limit);
  const types = text(values, 'card-types', false);
  if (types !== undefined) change.cardTypes = cardTypes(types);
  print(io, await withDatabase(io, values, (db) => setFloatSettings(db, customerId, change, by)));
  return 0;
}

async function show(io: CliIo, args: string[]): Promise<number> {
  const values = parse(args, { customer: { type: 'string' }, till: { type: 'string' } });
  const customerId = uuid(values, 'customer');
  const tillId = uuid(values, 'till', false);
  print(
    io,
    await withDatabase(io, values, async (db) => {
      if (tillId === undefined) return showFloats(db, customerId);
      if (!(await findCustomer(db, customerId))) throw ledgerErrors.customerNotFound(customerId);
      return new Floats(db).till(customerId, tillId);
    }),
  );
  return 0;
}

async function close(io: CliIo, args: string[]): Promise<number> {
  const values = parse(args, {
    customer: { type: 'string' },
    float: { type: 'string' },
    'write-off': { type: 'string' },
    reason: { type: 'string' },
    report: { type: 'string' },
  });
  const customerId = uuid(values, 'customer');
  const floatId = uuid(values, 'float');
  const writeOff = integer(values, 'write-off', 0, MAX_SIZE);
  const by = cliAudit(io, values, false);
  if (writeOff > 0 && !by.reason) {
    throw new UsageError(
      '--reason must say in 1 to 500 characters why the credits are written off',
    );
  }
  const reportFile = text(values, 'report', false);
  const movements = reportFile === undefined ? [] : await readReport(reportFile);
  print(
    io,
    await withDatabase(io, values, async (db) => {
      if (!(await findCustomer(db, customerId))) throw ledgerErrors.customerNotFound(customerId);
      return new Floats(db).closeByOperator(
        customerId,
        floatId,
        { movements, writeOff, reason: by.reason ?? null },
        by.actor,
      );
    }),
  );
  return 0;
}

async function readReport(file: string): Promise<FloatMovementReport[]> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--report cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return parseMovements(value, 0, (detail) => new UsageError(`--report ${file}: ${detail}`));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--report ${file}: ${(error as Error).message}`);
  }
}

/** `24h`, `90m`, `2d`, `3600s` or a number of seconds, within the offline limit's bounds. */
export function durationSeconds(raw: string): number {
  const match = /^(\d{1,7})([smhd]?)$/.exec(raw.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match?.[2] ?? ''] ?? 1;
  const seconds = match ? Number(match[1]) * unit : NaN;
  if (!(seconds >= OFFLINE_LIMIT_BOUNDS.min && seconds <= OFFLINE_LIMIT_BOUNDS.max)) {
    throw new UsageError(
      `--offline-limit must be a duration from 1m to 30d, like 24h, 90m or 2d (got "${raw}")`,
    );
  }
  return seconds;
}

function cardTypes(raw: string): CardType[] {
  const types = raw.split(',').map((type) => type.trim().toLowerCase());
  const unknown = types.find((type) => !CARD_TYPES.includes(type as CardType));
  if (types.length === 0 || unknown !== undefined) {
    throw new UsageError(`--card-types must list classic and/or desfire (got "${raw}")`);
  }
  return [...new Set(types)] as CardType[];
}
