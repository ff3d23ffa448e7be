/**
 * The admin CLI's back-office commands: day reports, console accounts, the audit log and a
 * shop's time zone (run-cli.ts dispatches to them).
 */
import type { AuditedBy } from './audit/audit-log.ts';
import { listAudit } from './audit/audit-log.ts';
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
  type Values,
} from './cli-args.ts';
import type { Database } from './db/database.ts';
import {
  createOperator,
  resetOperatorPassword,
  setOperatorDisabled,
  type Acting,
} from './operators/accounts.ts';
import { listOperators, ROLES, type Role } from './operators/operators.ts';
import { dayReport, parseReportDate } from './reports/day-report.ts';
import { dayReportCsv } from './reports/report-csv.ts';
import { readShop, setTimeZone, shopToday, type Shop } from './shops/shops.ts';

export function setTimeZoneCommand(
  db: Database,
  shopId: string,
  zone: string,
  by: AuditedBy,
): Promise<Shop> {
  return setTimeZone(db, shopId, zone, by);
}

/** `report day --shop ID [--date D] [--csv]`: the figures the console and the API show. */
export async function reportCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number> {
  if (sub !== 'day') throw new UsageError(`unknown command "report ${sub ?? ''}"; use day`);
  const values = parse(args, {
    shop: { type: 'string' },
    date: { type: 'string' },
    csv: { type: 'boolean' },
  });
  const shopId = uuid(values, 'shop');
  const date = text(values, 'date', false);
  if (date !== undefined && parseReportDate(date) === undefined) {
    throw new UsageError(`--date must be a date like 2026-03-29 (got "${date}")`);
  }
  const report = await withDatabase(io, values, async (db) => {
    const shop = await readShop(db, shopId);
    return dayReport(db, shop, date ?? (await shopToday(db, shop)));
  });
  if (values.csv === true) io.stdout.write(dayReportCsv(report));
  else print(io, report);
  return 0;
}

function cliActing(io: CliIo, values: Values): Acting {
  return { actor: cliAudit(io, values, false).actor, operator: null };
}

function role(values: Values): Role {
  const value = text(values, 'role') ?? '';
  if (!(ROLES as readonly string[]).includes(value)) {
    throw new UsageError(`--role must be admin, owner or staff (got "${value}")`);
  }
  return value as Role;
}

/** `operator add|list|disable|enable|reset-password`: console accounts. */
export async function operatorCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number> {
  switch (sub) {
    case 'add': {
      const values = parse(args, {
        login: { type: 'string' },
        name: { type: 'string' },
        role: { type: 'string' },
        shop: { type: 'string', multiple: true },
      });
      const shops = ((values.shop as unknown as string[] | undefined) ?? []).map((shop) =>
        uuid({ shop }, 'shop'),
      );
      const input = {
        login: text(values, 'login') ?? '',
        name: text(values, 'name') ?? '',
        role: role(values),
        shops,
      };
      const acting = cliActing(io, values);
      print(io, await withDatabase(io, values, (db) => createOperator(db, acting, input)));
      return 0;
    }
    case 'list': {
      const values = parse(args, { shop: { type: 'string' } });
      const shop = uuid(values, 'shop', false);
      print(io, {
        operators: await withDatabase(io, values, (db) => listOperators(db, { shops: null, shop })),
      });
      return 0;
    }
    case 'disable':
    case 'enable':
    case 'reset-password': {
      const values = parse(args, { login: { type: 'string' }, reason: { type: 'string' } });
      const login = text(values, 'login') ?? '';
      const acting = cliActing(io, values);
      const reason = cliAudit(io, values, false).reason ?? undefined;
      print(
        io,
        await withDatabase(io, values, (db): Promise<unknown> =>
          sub === 'reset-password'
            ? resetOperatorPassword(db, acting, login, reason)
            : setOperatorDisabled(db, acting, login, sub === 'disable', reason),
        ),
      );
      return 0;
    }
    default:
      throw new UsageError(
        `unknown command "operator ${sub ?? ''}"; use add, list, disable, enable or reset-password`,
      );
  }
}

/** `audit list [--shop ID] [--limit N]`. */
export async function auditCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number> {
  if (sub !== 'list') throw new UsageError(`unknown command "audit ${sub ?? ''}"; use list`);
  const values = parse(args, { shop: { type: 'string' }, limit: { type: 'string' } });
  const shop = uuid(values, 'shop', false);
  const limit = integer(values, 'limit', 1, 1000, false);
  print(io, {
    audit: await withDatabase(io, values, (db) =>
      listAudit(db, { customerIds: shop === undefined ? null : [shop], limit }),
    ),
  });
  return 0;
}
