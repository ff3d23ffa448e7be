/**
 * The commands of `card-wallet-cloud` (cli.ts is the thin host that wires in the process's
 * streams, environment and signals, and exits). Exit codes: 0 done, 1 failed, 2 invalid
 * arguments (the message names the option).
 */
import { compensationDue, compensationDueText } from './movements/decision-due.ts';
import { readFile } from 'node:fs/promises';
import {
  addCustomer,
  assignKey,
  issueKey,
  listAllMovements,
  listCustomers,
  resolveByOperator,
  revokeKey,
  setCreditCost,
  topUp,
} from './admin.ts';
import { CARD_ID, importCards, parseCardImportCsv, readCardAccount } from './card-accounts.ts';
import { checkLedger } from './check.ts';
import {
  cliAudit,
  creditCost,
  DATABASE_ENV,
  databaseTarget,
  integer,
  MAX_CREDITS,
  NAME,
  parse,
  print,
  text,
  UsageError,
  uuid,
  withDatabase,
  type CliIo,
} from './cli-args.ts';
import {
  auditCommand,
  operatorCommand,
  reportCommand,
  setTimeZoneCommand,
} from './cli-back-office.ts';
import { startLedgerServer } from './create-ledger-server.ts';
import { FLOAT_USAGE, floatCommand } from './float-cli.ts';
import { blocklistCommand, CARD_RULES_USAGE, cardRulesCommand } from './cards-cli.ts';
import { LedgerError, ledgerErrors } from './errors.ts';
import { MAX_LIST_LIMIT } from './ledger.ts';
import { findCustomer, type MovementState } from './records.ts';
import { readSeedFile } from './seed.ts';

export { NAME, UsageError, type CliIo };

const USAGE = `Usage: ${NAME} <command> [options]

  serve --port N [--host H] [--seed FILE] [--pool-size N] [--secure-cookies] [--trust-proxy IPS]
      Serve contract v1 and the console (/console); prints "listening on http://HOST:PORT"
      when ready. --port 0 takes any free port; --host defaults to 127.0.0.1.
      --secure-cookies: the console is served over HTTPS (a TLS proxy in front, named by
      --trust-proxy, comma-separated addresses, whose X-Forwarded-* headers are believed).
  customer add --name NAME --credits N --credit-cost D [--id UUID] [--time-zone TZ] [--reason TEXT]
  customer topup --customer ID --credits N --reason TEXT
  customer set-cost --customer ID --credit-cost D [--reason TEXT]
  customer set-time-zone --customer ID --time-zone TZ    (Europe/Brussels: the shop's local day)
  customer list
  key issue [--customer ID] [--key KEY] --reason TEXT    (--key registers a key handed out already)
  key assign --key KEY --customer ID --reason TEXT
  key revoke --key KEY --reason TEXT
  movements list [--state pending|posted|voided] [--customer ID] [--till ID] [--limit N]
  movements post|void --customer ID --id MOVEMENT --evidence TEXT
      An operator decides a pending movement whose till cannot (gone for good, its card
      lost), saying on what evidence; the evidence is kept with the movement.
  card import --customer ID --file CSV [--reason TEXT]
      Give cards the shop sold before it used this ledger their account, once: one
      "cardId,credits" per line. All or nothing; a second run of the same file changes
      nothing. Imported credits do not come out of the shop's pool.
  card show --customer ID --card CARDID
      A card's account at the shop, its flags (suspect) and latest movements.
  report day --shop ID [--date YYYY-MM-DD] [--csv]
      The shop's day report (default: today in the shop's time zone), as JSON or CSV.
  operator add --login LOGIN --name NAME --role admin|owner|staff [--shop ID]...
      A console account; prints a temporary password, changed at the first log-in.
  operator list [--shop ID]
  operator disable|enable|reset-password --login LOGIN [--reason TEXT]
  audit list [--shop ID] [--limit N]      the audit log, newest first
${CARD_RULES_USAGE}
${FLOAT_USAGE}
  check          exit 0 when every balance equals the sum of its ledger entries,
                 every card's account its import and movements, every float its
                 entries, every shop's book (pool, floats, cards, ...) sums to zero,
                 the audit log's chain is intact, every operator decision and top-up
                 has its audit row, and the daily takings (day reports, chart) equal
                 the posted movements per local day

Every command takes --database <postgres://... | FOLDER> (or ${DATABASE_ENV}):
a PostgreSQL URL, or a folder for the embedded PGlite database (created when missing).
Admin commands need a PGlite folder that no running "serve" holds; on PostgreSQL they run
next to the servers. Actions that move money or change a key need --reason; each operator
action is written to the audit log as cli:$USER.`;

async function serve(io: CliIo, args: string[]): Promise<number> {
  const values = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    seed: { type: 'string' },
    'pool-size': { type: 'string' },
    'secure-cookies': { type: 'boolean' },
    'trust-proxy': { type: 'string' },
  });
  const port = integer(values, 'port', 0, 65535);
  const host = text(values, 'host', false) ?? '127.0.0.1';
  const poolSize = integer(values, 'pool-size', 1, 1000, false);
  const trustProxy = text(values, 'trust-proxy', false)
    ?.split(',')
    .map((address) => address.trim())
    .filter((address) => address !== '');
  const console = { secureCookies: values['secure-cookies'] === true };
  const database = databaseTarget(io, values);
  const seedPath = text(values, 'seed', false);
  let seed;
  if (seedPath !== undefined) {
    try {
      seed = await readSeedFile(seedPath);
    } catch (error) {
      throw new UsageError(`--seed ${(error as LedgerError).detail ?? (error as Error).message}`);
    }
  }

  const server = await startLedgerServer({
    database,
    host,
    port,
    seed,
    poolSize,
    trustProxy,
    console,
  });
  io.stdout.write(`listening on ${server.url}\n`);
  const reason = await io.waitForStop();
  io.stderr.write(`${reason}: closing\n`);
  await server.close(5_000);
  return 0;
}

async function customer(io: CliIo, sub: string | undefined, args: string[]): Promise<number> {
  switch (sub) {
    case 'add': {
      const values = parse(args, {
        name: { type: 'string' },
        credits: { type: 'string' },
        'credit-cost': { type: 'string' },
        id: { type: 'string' },
        'time-zone': { type: 'string' },
        reason: { type: 'string' },
      });
      const name = text(values, 'name') ?? '';
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
      const input = {
        id: uuid(values, 'id', false),
        name,
        credits: integer(values, 'credits', 0, MAX_CREDITS),
        creditCost: creditCost(values),
      };
      const by = cliAudit(io, values, false);
      const zone = text(values, 'time-zone', false);
      print(
        io,
        await withDatabase(io, values, async (db) => {
          const added = await addCustomer(db, input, by);
          if (zone === undefined) return added;
          const shop = await setTimeZoneCommand(db, added.customerId, zone, by);
          return { ...added, timeZone: shop.timeZone };
        }),
      );
      return 0;
    }
    case 'topup': {
      const values = parse(args, {
        customer: { type: 'string' },
        credits: { type: 'string' },
        reason: { type: 'string' },
      });
      const id = uuid(values, 'customer');
      const credits = integer(values, 'credits', 1, MAX_CREDITS);
      const by = cliAudit(io, values, true);
      print(io, await withDatabase(io, values, (db) => topUp(db, id, credits, by)));
      return 0;
    }
    case 'set-cost': {
      const values = parse(args, {
        customer: { type: 'string' },
        'credit-cost': { type: 'string' },
        reason: { type: 'string' },
      });
      const id = uuid(values, 'customer');
      const cost = creditCost(values);
      const by = cliAudit(io, values, false);
      print(io, await withDatabase(io, values, (db) => setCreditCost(db, id, cost, by)));
      return 0;
    }
    case 'set-time-zone': {
      const values = parse(args, { customer: { type: 'string' }, 'time-zone': { type: 'string' } });
      const id = uuid(values, 'customer');
      const zone = text(values, 'time-zone') ?? '';
      const by = cliAudit(io, values, false);
      print(io, await withDatabase(io, values, (db) => setTimeZoneCommand(db, id, zone, by)));
      return 0;
    }
    case 'list': {
      const values = parse(args, {});
      print(io, { customers: await withDatabase(io, values, listCustomers) });
      return 0;
    }
    default:
      throw new UsageError(
        `unknown command "customer ${sub ?? ''}"; use add, topup, set-cost, set-time-zone or list`,
      );
  }
}

async function key(io: CliIo, sub: string | undefined, args: string[]): Promise<number> {
  switch (sub) {
    case 'issue': {
      const values = parse(args, {
        customer: { type: 'string' },
        key: { type: 'string' },
        reason: { type: 'string' },
      });
      const customerId = uuid(values, 'customer', false);
      const apiKey = text(values, 'key', false);
      if (apiKey !== undefined && !/^[\x21-\x7e]{16,256}$/.test(apiKey)) {
        throw new UsageError('--key must be 16 to 256 visible ASCII characters (a random token)');
      }
      const by = cliAudit(io, values, true);
      print(
        io,
        await withDatabase(io, values, (db) => issueKey(db, { customerId, key: apiKey }, by)),
      );
      return 0;
    }
    case 'assign': {
      const values = parse(args, {
        key: { type: 'string' },
        customer: { type: 'string' },
        reason: { type: 'string' },
      });
      const apiKey = text(values, 'key') ?? '';
      const customerId = uuid(values, 'customer');
      const by = cliAudit(io, values, true);
      print(io, await withDatabase(io, values, (db) => assignKey(db, apiKey, customerId, by)));
      return 0;
    }
    case 'revoke': {
      const values = parse(args, { key: { type: 'string' }, reason: { type: 'string' } });
      const apiKey = text(values, 'key') ?? '';
      const by = cliAudit(io, values, true);
      print(io, await withDatabase(io, values, (db) => revokeKey(db, apiKey, by)));
      return 0;
    }
    default:
      throw new UsageError(`unknown command "key ${sub ?? ''}"; use issue, assign or revoke`);
  }
}

async function movements(io: CliIo, sub: string | undefined, args: string[]): Promise<number> {
  if (sub === 'post' || sub === 'void') return resolveMovement(io, sub, args);
  if (sub !== 'list') {
    throw new UsageError(`unknown command "movements ${sub ?? ''}"; use list, post or void`);
  }
  const values = parse(args, {
    state: { type: 'string' },
    customer: { type: 'string' },
    till: { type: 'string' },
    limit: { type: 'string' },
  });
  const state = text(values, 'state', false);
  if (state !== undefined && !['pending', 'posted', 'voided'].includes(state)) {
    throw new UsageError(`--state must be pending, posted or voided (got "${state}")`);
  }
  const filter = {
    state: state as MovementState | undefined,
    customerId: uuid(values, 'customer', false),
    tillId: uuid(values, 'till', false),
    // The same bound as GET /v1/movements: one list never holds more than the API gives.
    limit: integer(values, 'limit', 1, MAX_LIST_LIMIT, false),
  };
  const listed = await withDatabase(io, values, (db) => listAllMovements(db, filter));
  const now = new Date();
  // A compensation left pending past the bound needs an operator (or a till settling its card).
  const marked = listed.map((movement) =>
    compensationDue(movement, now)
      ? { ...movement, needsDecision: compensationDueText(movement) }
      : movement,
  );
  print(io, { movements: marked });
  return 0;
}

async function resolveMovement(io: CliIo, action: 'post' | 'void', args: string[]) {
  const values = parse(args, {
    customer: { type: 'string' },
    id: { type: 'string' },
    evidence: { type: 'string' },
  });
  const input = {
    customerId: uuid(values, 'customer'),
    id: uuid(values, 'id'),
    target: action === 'post' ? ('posted' as const) : ('voided' as const),
    evidence: (text(values, 'evidence') ?? '').trim(),
  };
  if (input.evidence === '' || input.evidence.length > 500) {
    throw new UsageError('--evidence must say in 1 to 500 characters what the decision rests on');
  }
  const by = cliAudit(io, values, false);
  print(io, await withDatabase(io, values, (db) => resolveByOperator(db, input, by)));
  return 0;
}

async function card(io: CliIo, sub: string | undefined, args: string[]): Promise<number> {
  switch (sub) {
    case 'import': {
      const values = parse(args, {
        customer: { type: 'string' },
        file: { type: 'string' },
        reason: { type: 'string' },
      });
      const customerId = uuid(values, 'customer');
      const by = cliAudit(io, values, false);
      const file = text(values, 'file') ?? '';
      let csv: string;
      try {
        csv = await readFile(file, 'utf8');
      } catch (error) {
        throw new UsageError(
          `--file cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`,
        );
      }
      const { lines, problems } = parseCardImportCsv(csv);
      if (problems.length > 0) {
        throw new UsageError(`--file ${file}: nothing imported:\n  ${problems.join('\n  ')}`);
      }
      const result = await withDatabase(io, values, (db) => importCards(db, customerId, lines, by));
      print(io, { cards: lines.length, ...result });
      return 0;
    }
    case 'show': {
      const values = parse(args, { customer: { type: 'string' }, card: { type: 'string' } });
      const customerId = uuid(values, 'customer');
      const cardId = (text(values, 'card') ?? '').toUpperCase();
      if (!CARD_ID.test(cardId)) {
        throw new UsageError(`--card must be a card id of 8 or 14 hex digits (got "${cardId}")`);
      }
      print(
        io,
        await withDatabase(io, values, async (db) => {
          if (!(await findCustomer(db, customerId))) {
            throw ledgerErrors.customerNotFound(customerId);
          }
          return readCardAccount(db, customerId, cardId);
        }),
      );
      return 0;
    }
    default:
      return (
        (await cardRulesCommand(io, sub, args)) ??
        failUsage(
          `unknown command "card ${sub ?? ''}"; use import, show, block, unblock, replace, correct, cancel-change, list or rules`,
        )
      );
  }
}

async function check(io: CliIo, args: string[]): Promise<number> {
  const values = parse(args, {});
  const report = await withDatabase(io, values, checkLedger);
  if (report.ok) {
    io.stdout.write(
      `ok: ${report.customers} customers, ${report.movements} movements, ${report.entries} entries, ` +
        `${report.cards} cards, ${report.floats} floats; every balance equals the sum of its ` +
        "entries, every card account its import and movements, and every shop's book sums to " +
        `zero; the audit log's chain of ${report.auditRows} rows is intact and its ` +
        `${report.operatorActions} operator decisions, top-ups and float closes are recorded; the daily ` +
        'takings are the posted movements per local day\n',
    );
    return 0;
  }
  io.stdout.write(`FAILED: ${report.problems.length} problems\n`);
  for (const problem of report.problems) io.stdout.write(`  ${problem}\n`);
  return 1;
}

async function dispatch(io: CliIo, argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  switch (command) {
    case 'serve':
      return serve(io, argv.slice(1));
    case 'customer':
      return customer(io, sub, rest);
    case 'key':
      return key(io, sub, rest);
    case 'movements':
      return movements(io, sub, rest);
    case 'card':
      return card(io, sub, rest);
    case 'float':
      return floatCommand(io, sub, rest);
    case 'blocklist':
      return blocklistCommand(io, sub, rest);
    case 'check':
      return check(io, argv.slice(1));
    case 'report':
      return reportCommand(io, sub, rest);
    case 'operator':
      return operatorCommand(io, sub, rest);
    case 'audit':
      return auditCommand(io, sub, rest);
    case undefined:
      throw new UsageError('a command is required');
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Runs one command line and resolves with its exit code; failures are reported on stderr
 * (never a stack for a usage or ledger error).
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(io, argv);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${NAME}: ${error.message}\nRun "${NAME} --help" for usage.\n`);
      return 2;
    }
    if (error instanceof LedgerError) {
      io.stderr.write(`${NAME}: ${error.code}${error.detail ? `: ${error.detail}` : ''}\n`);
    } else {
      io.stderr.write(`${NAME}: ${(error as Error)?.message ?? String(error)}\n`);
    }
    return 1;
  }
}

function failUsage(message: string): never {
  throw new UsageError(message);
}
