/**
 * Ledger throughput on PostgreSQL, against the database's own speed. Three sides on one server
 * in one run, with N concurrent clients:
 *
 * - pgbench's TPC-B (3 updates, an insert and a select per transaction), in its own database:
 *   what this PostgreSQL does with transactions of about a movement's half;
 * - raw SQL: movements (a recharge `pending` then its `post`, as the worker does) made by the
 *   ledger's own code, each call checking the key as the ledger's do, sent straight to the
 *   database by this process: one statement per call;
 * - ledger HTTP: the same movements through the ledger's HTTP API;
 * - and, to tell the database's share from the ledger's, the ledger's two calls per movement
 *   run by pgbench itself; once more with the insert's statement trigger off (it counts the
 *   movements an INSERT created posted: a float report's; a create's pending movement is
 *   none of them, what does the trigger cost it?); and once more with both of the daily
 *   takings' triggers off (every post adds to its shop's `daily_takings` row for the back
 *   office's reports: what that costs).
 *
 * A movement is two transactions, so its targets are halves of pgbench's rate: ledger HTTP at
 * least 0.5 x pgbench transactions/s at 4 and 16 clients, raw SQL at least 0.6 x; and ledger
 * HTTP at least 0.7 of raw SQL. Printed with the CPU each process spends per movement, which
 * is what decides the ratios on a small machine.
 *
 *   node --import tsx bench/ledger-throughput.ts [--clients 1,4,16] [--seconds 2] [--rounds 3]
 *     [--processes 1] [--pool-size N] [--shared]
 *
 * Every side is warmed up first (a fresh ledger process is still compiling its hot paths for
 * its first seconds; a long-running one is not). Then, for each client count, rounds alternate
 * pgbench, raw, HTTP, pgbench, raw, HTTP..., so a drift of the shared machine's load weighs on
 * all alike; ratios are of the medians. Each client is one shop (its own customer and key), as
 * each pgbench client mostly updates its own branch (scale = the most clients), so the figures
 * measure the ledger, not one customer's row lock; `--shared` makes every client use one
 * customer instead. `--pool-size` is each ledger process's connections (default: the
 * ledger's own default).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { hashApiKey } from '../cloud/api-keys.ts';
import type { Database } from '../cloud/db/database.ts';
import { openDatabase } from '../cloud/db/open-database.ts';
import { Ledger } from '../cloud/ledger.ts';
import { applySeed, type Seed } from '../cloud/seed.ts';
import { startLedgerProcess, type LedgerProcess } from '../test/support/ledger-process.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { verdict } from './measure.ts';
import { initPgbench, pgbenchRound, round, type Processes, type Round } from './pgbench-rounds.ts';
import { cpuTable, ratesTable, ratioOf, type ClientSides, type Side } from './round-tables.ts';

const TARGET = 0.7;
/** Of pgbench's transactions/s, at 4 and 16 clients (a movement is two transactions). */
const HTTP_OF_PGBENCH = 0.5;
const RAW_OF_PGBENCH = 0.6;
const PGBENCH_TARGET_CLIENTS = [4, 16];
const WARM_UP_SECONDS = 3;
/** The daily takings' count of movements created posted, once per INSERT statement. */
const INSERT_TRIGGER = 'movements_count_posted_insert';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,4,16' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    processes: { type: 'string', default: '1' },
    'pool-size': { type: 'string' },
    shared: { type: 'boolean', default: false },
  },
});
const clientCounts = values.clients.split(',').map(Number);
const roundSeconds = Number(values.seconds);
const rounds = Number(values.rounds);
const processCount = Number(values.processes);
const maxClients = Math.max(...clientCounts);
const poolSize = values['pool-size'] === undefined ? undefined : Number(values['pool-size']);

const keyOf = (i: number) => `bench-key-${String(i).padStart(4, '0')}-0123456789`;
const customers = values.shared ? 1 : maxClients;
/** Customer i's id (from 0), made the same way by SQL in the pgbench script below (from 1). */
const CUSTOMER_ID_PREFIX = '00000000-0000-4000-8000-';
const customerIdOf = (i: number) => `${CUSTOMER_ID_PREFIX}${String(i + 1).padStart(12, '0')}`;
const seed: Seed = {
  customers: Array.from({ length: customers }, (_, i) => ({
    id: customerIdOf(i),
    name: `Bench shop ${i}`,
    credits: 1_000_000_000,
    creditCost: '0.50',
    keys: values.shared ? Array.from({ length: maxClients }, (_, k) => keyOf(k)) : [keyOf(i)],
  })),
};

/** One movement: create a pending recharge of 1 credit, then post it. */
type Movement = (client: number) => Promise<void>;

function rawSql(db: Database): Movement {
  const ledger = new Ledger(db);
  // As the ledger does: a key is looked up once, then each call checks it in its own statement.
  const customers = new Map<number, string>();
  return async (client) => {
    const key = keyOf(client);
    const keyHash = hashApiKey(key);
    let customerId = customers.get(client);
    if (customerId === undefined) {
      customerId = await ledger.authenticate(key);
      customers.set(client, customerId);
    }
    const id = randomUUID();
    await ledger.createMovement(
      customerId,
      { id, kind: 'recharge', cardId: '04A1B2C3', credits: 1 },
      keyHash,
    );
    await ledger.postMovement(customerId, id, {}, keyHash);
  };
}

/**
 * Through the ledgers' HTTP API, with undici's keep-alive pools as the load generator: the
 * cheapest HTTP client at hand, so that what the HTTP side measures is the ledger, as the raw
 * side's `pg` client is the cheapest way to the database.
 */
function overHttp(pools: Pool[]): Movement {
  const post = async (client: number, path: string, body?: string) => {
    const pool = pools[client % pools.length] as Pool;
    const answer = await pool.request({
      method: 'POST',
      path,
      headers: {
        'x-api-key': keyOf(client),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body,
    });
    await answer.body.dump();
    if (answer.statusCode !== 200 && answer.statusCode !== 201) {
      throw new Error(`${path}: HTTP ${answer.statusCode}`);
    }
  };
  return async (client) => {
    const id = randomUUID();
    await post(
      client,
      '/v1/movements',
      JSON.stringify({ id, kind: 'recharge', cardId: '04A1B2C3', credits: 1 }),
    );
    await post(client, `/v1/movements/${id}/post`);
  };
}

/**
 * The ledger's own calls (a recharge created, then posted: one statement each, prepared) run
 * by pgbench's C client instead of the ledger's code: what the database does per movement
 * with next to nothing in front of it. The key check is left out (pgbench cannot hash), one
 * index look-up of the calls' work.
 */
const LEDGER_SCRIPT = `\\set c random(1, ${customers})
SELECT id AS mid FROM ledger_create_movement(('${CUSTOMER_ID_PREFIX}' || lpad(:c::text, 12, '0'))::uuid,
  gen_random_uuid(), 'recharge', '04A1B2C3', 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL) \\gset
SELECT state FROM ledger_resolve_movement(('${CUSTOMER_ID_PREFIX}' || lpad(:c::text, 12, '0'))::uuid,
  :mid, 'posted', NULL, NULL, NULL, NULL);
`;

const postgres = await startPostgres();
const ledgers: LedgerProcess[] = [];
let db: Database | undefined;
let pools: Pool[] = [];
try {
  db = await openDatabase(postgres.url, { poolSize: maxClients });
  await applySeed(db, seed);
  const pgbenchUrl = await initPgbench(postgres.url, db, maxClients);
  const ledgerScript = join(postgres.dir, 'ledger-movement.sql');
  writeFileSync(ledgerScript, LEDGER_SCRIPT);
  for (let i = 0; i < processCount; i += 1) {
    ledgers.push(await startLedgerProcess({ database: postgres.url, poolSize }));
  }
  const processes: Processes = { ledger: ledgers.map((l) => l.pid), postmaster: postgres.pid };
  const raw = rawSql(db);
  pools = ledgers.map((l) => new Pool(l.url, { connections: maxClients }));
  const http = overHttp(pools);
  const loadBefore = loadavg()[0] ?? 0;
  await pgbenchRound(pgbenchUrl, maxClients, WARM_UP_SECONDS, processes);
  await round(maxClients, raw, WARM_UP_SECONDS, processes);
  await round(maxClients, http, WARM_UP_SECONDS, processes);

  /**
   * The ledger's calls run by pgbench without some of the movements' triggers: dropped, not
   * disabled (a disabled trigger with a transition table still has every inserted row copied
   * for it), and made again from their own definitions after the round.
   */
  const withTriggersOff = async (triggers: string[], clients: number) => {
    const { rows } = await (db as Database).query<{ definition: string }>(
      `SELECT pg_get_triggerdef(oid) AS definition FROM pg_trigger
       WHERE tgrelid = 'movements'::regclass AND tgname = ANY($1)`,
      [triggers],
    );
    if (rows.length !== triggers.length) throw new Error(`no trigger among ${triggers.join(', ')}`);
    for (const trigger of triggers) {
      await (db as Database).query(`DROP TRIGGER ${trigger} ON movements`);
    }
    try {
      return await pgbenchRound(postgres.url, clients, roundSeconds, processes, ledgerScript);
    } finally {
      for (const { definition } of rows) await (db as Database).query(definition);
    }
  };
  type SideKey = 'pgbench' | 'ledgerSql' | 'statementOff' | 'countingOff' | 'raw' | 'http';
  const results: ClientSides<SideKey>[] = [];
  for (const clients of clientCounts) {
    const sides: Record<SideKey, Side> = {
      pgbench: { name: 'pgbench transaction', rounds: [] },
      ledgerSql: { name: 'pgbench ledger movement', rounds: [] },
      statementOff: { name: 'pgbench, insert statement trigger off', rounds: [] },
      countingOff: { name: 'pgbench, daily takings off', rounds: [] },
      raw: { name: 'raw SQL movement', rounds: [] },
      http: { name: 'ledger HTTP movement', rounds: [] },
    };
    for (let r = 0; r < rounds; r += 1) {
      sides.pgbench.rounds.push(await pgbenchRound(pgbenchUrl, clients, roundSeconds, processes));
      sides.ledgerSql.rounds.push(
        await pgbenchRound(postgres.url, clients, roundSeconds, processes, ledgerScript),
      );
      // The daily takings (migration 10): every insert runs the statement trigger that counts
      // the movements created posted (none here: a create is pending), every post the row
      // trigger that counts it.
      sides.statementOff.rounds.push(await withTriggersOff([INSERT_TRIGGER], clients));
      sides.countingOff.rounds.push(
        await withTriggersOff([INSERT_TRIGGER, 'movements_count_posted_update'], clients),
      );
      sides.raw.rounds.push(await round(clients, raw, roundSeconds, processes));
      sides.http.rounds.push(await round(clients, http, roundSeconds, processes));
    }
    results.push({ clients, sides });
  }

  console.log(
    `ledger throughput on PostgreSQL: ${rounds} alternating rounds of ${roundSeconds} s per side ` +
      `after a ${WARM_UP_SECONDS} s warm-up, ${processCount} ledger process(es), ` +
      `${values.shared ? 'one shared customer' : 'one customer per client'}, ` +
      `${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} before the run`,
  );
  console.log(
    ratesTable(results, [
      { header: 'pgbench TPC-B transactions/s', side: 'pgbench' },
      { header: 'raw SQL movements/s', side: 'raw' },
      { header: 'ledger HTTP movements/s', side: 'http' },
      { header: 'raw / pgbench', ratio: ['raw', 'pgbench'] },
      { header: 'HTTP / pgbench', ratio: ['http', 'pgbench'] },
    ]),
  );
  console.log('');
  console.log(
    ratesTable(results, [
      { header: "the ledger's calls run by pgbench, movements/s", side: 'ledgerSql' },
      { header: '/ pgbench TPC-B', ratio: ['ledgerSql', 'pgbench'] },
      { header: 'insert statement trigger off', side: 'statementOff' },
      { header: '/ pgbench TPC-B', ratio: ['statementOff', 'pgbench'] },
      { header: 'daily takings off', side: 'countingOff' },
      { header: '/ pgbench TPC-B', ratio: ['countingOff', 'pgbench'] },
      { header: 'on / statement off', ratio: ['ledgerSql', 'statementOff'] },
      { header: 'on / takings off', ratio: ['ledgerSql', 'countingOff'] },
    ]),
  );
  console.log('');
  console.log(
    cpuTable(results, ['pgbench', 'ledgerSql', 'statementOff', 'countingOff', 'raw', 'http']),
  );
  for (const result of results) {
    const { clients } = result;
    if (PGBENCH_TARGET_CLIENTS.includes(clients)) {
      for (const [side, key, target] of [
        ['raw SQL', 'raw', RAW_OF_PGBENCH],
        ['ledger HTTP', 'http', HTTP_OF_PGBENCH],
      ] as const) {
        const ratio = ratioOf(result, [key, 'pgbench']);
        console.log(
          verdict(
            `${clients} client(s): ${side} movements / pgbench transactions`,
            ratio,
            `>= ${target}`,
            ratio >= target,
          ),
        );
      }
    }
    const { raw: rawSide, http: httpSide } = result.sides;
    const perRound = httpSide.rounds.map(
      (h, i) => h.perSecond / (rawSide.rounds[i] as Round).perSecond,
    );
    const ratio = ratioOf(result, ['http', 'raw']);
    console.log(
      `${verdict(`${clients} client(s): ledger HTTP / raw SQL`, ratio, `>= ${TARGET}`, ratio >= TARGET)}` +
        ` (per round: ${perRound.map((r) => r.toFixed(2)).join(' ')})`,
    );
  }
} finally {
  await Promise.all(pools.map((pool) => pool.close()));
  await Promise.all(ledgers.map((ledger) => ledger.stop()));
  await db?.close();
  await postgres.stop();
}
