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
 *   run by pgbench itself; and once more with the daily takings' triggers off (every post adds
 *   to its shop's `daily_takings` row for the back office's reports: what that costs).
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
import { median, table, verdict } from './measure.ts';
import { initPgbench, pgbenchRound, round, type Processes, type Round } from './pgbench-rounds.ts';

const TARGET = 0.7;
/** Of pgbench's transactions/s, at 4 and 16 clients (a movement is two transactions). */
const HTTP_OF_PGBENCH = 0.5;
const RAW_OF_PGBENCH = 0.6;
const PGBENCH_TARGET_CLIENTS = [4, 16];
const WARM_UP_SECONDS = 3;

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

  const results: {
    clients: number;
    pgbench: Round[];
    ledgerSql: Round[];
    ledgerSqlUncounted: Round[];
    raw: Round[];
    http: Round[];
  }[] = [];
  /** The posts' counting into daily_takings (migration 10) on or off, for one side's rounds. */
  const dailyTakings = async (on: boolean) => {
    for (const trigger of ['movements_count_posted_insert', 'movements_count_posted_update']) {
      await (db as Database).query(
        `ALTER TABLE movements ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`,
      );
    }
  };
  for (const clients of clientCounts) {
    const result = {
      clients,
      pgbench: [] as Round[],
      ledgerSql: [] as Round[],
      ledgerSqlUncounted: [] as Round[],
      raw: [] as Round[],
      http: [] as Round[],
    };
    for (let r = 0; r < rounds; r += 1) {
      result.pgbench.push(await pgbenchRound(pgbenchUrl, clients, roundSeconds, processes));
      result.ledgerSql.push(
        await pgbenchRound(postgres.url, clients, roundSeconds, processes, ledgerScript),
      );
      await dailyTakings(false);
      try {
        result.ledgerSqlUncounted.push(
          await pgbenchRound(postgres.url, clients, roundSeconds, processes, ledgerScript),
        );
      } finally {
        await dailyTakings(true);
      }
      result.raw.push(await round(clients, raw, roundSeconds, processes));
      result.http.push(await round(clients, http, roundSeconds, processes));
    }
    results.push(result);
  }

  console.log(
    `ledger throughput on PostgreSQL: ${rounds} alternating rounds of ${roundSeconds} s per side ` +
      `after a ${WARM_UP_SECONDS} s warm-up, ${processCount} ledger process(es), ` +
      `${values.shared ? 'one shared customer' : 'one customer per client'}, ` +
      `${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} before the run`,
  );
  const rate = (rs: Round[]) => median(rs.map((r) => r.perSecond));
  const cpu = (rs: Round[], group: keyof Round['cpu']) => median(rs.map((r) => r.cpu[group]));
  console.log(
    table(
      [
        'clients',
        'pgbench TPC-B transactions/s',
        'raw SQL movements/s',
        'ledger HTTP movements/s',
        'raw / pgbench',
        'HTTP / pgbench',
      ],
      results.map((r) => [
        r.clients,
        rate(r.pgbench).toFixed(0),
        rate(r.raw).toFixed(0),
        rate(r.http).toFixed(0),
        (rate(r.raw) / rate(r.pgbench)).toFixed(2),
        (rate(r.http) / rate(r.pgbench)).toFixed(2),
      ]),
    ),
  );
  console.log('');
  console.log(
    table(
      [
        'clients',
        "the ledger's calls run by pgbench, movements/s",
        '/ pgbench TPC-B',
        'daily takings off, movements/s',
        '/ pgbench TPC-B',
        'on / off',
      ],
      results.map((r) => [
        r.clients,
        rate(r.ledgerSql).toFixed(0),
        (rate(r.ledgerSql) / rate(r.pgbench)).toFixed(2),
        rate(r.ledgerSqlUncounted).toFixed(0),
        (rate(r.ledgerSqlUncounted) / rate(r.pgbench)).toFixed(2),
        (rate(r.ledgerSql) / rate(r.ledgerSqlUncounted)).toFixed(2),
      ]),
    ),
  );
  console.log('');
  console.log(
    table(
      ['clients', 'side', 'per second', 'CPU µs per one: bench', 'ledger', 'postgres'],
      results.flatMap(
        ({
          clients,
          pgbench: pgbenchRounds,
          ledgerSql,
          ledgerSqlUncounted,
          raw: rawRounds,
          http: httpRounds,
        }) =>
          (
            [
              ['pgbench transaction', pgbenchRounds],
              ['pgbench ledger movement', ledgerSql],
              ['pgbench, daily takings off', ledgerSqlUncounted],
              ['raw SQL movement', rawRounds],
              ['ledger HTTP movement', httpRounds],
            ] as const
          ).map(([side, rs]) => [
            clients,
            side,
            rate(rs).toFixed(0),
            Number.isNaN(cpu(rs, 'bench')) ? '-' : cpu(rs, 'bench').toFixed(0),
            cpu(rs, 'ledger').toFixed(0),
            cpu(rs, 'postgres').toFixed(0),
          ]),
      ),
    ),
  );
  for (const { clients, pgbench: pgbenchRounds, raw: rawRounds, http: httpRounds } of results) {
    if (PGBENCH_TARGET_CLIENTS.includes(clients)) {
      for (const [side, rs, target] of [
        ['raw SQL', rawRounds, RAW_OF_PGBENCH],
        ['ledger HTTP', httpRounds, HTTP_OF_PGBENCH],
      ] as const) {
        const ratio = rate(rs) / rate(pgbenchRounds);
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
    const perRound = httpRounds.map((h, i) => h.perSecond / (rawRounds[i] as Round).perSecond);
    const ratio = rate(httpRounds) / rate(rawRounds);
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
