/**
 * Ledger throughput on PostgreSQL: movements per second (a recharge `pending` then its `post`,
 * as the worker does) with N concurrent clients, through the ledger's HTTP API, against the
 * raw-SQL ceiling: the very same transactions (the ledger's own code, key lookup included)
 * sent straight to the same database by this process. Printed side by side as a ratio, with
 * the CPU each process spends per movement, which is what decides the ratio on a small machine.
 *
 *   node --import tsx bench/ledger-throughput.ts [--clients 1,4,16] [--seconds 2] [--rounds 3]
 *     [--processes 1] [--shared]
 *
 * Both sides are warmed up first (a fresh ledger process is still compiling its hot paths for
 * its first seconds; a long-running one is not). Then, for each client count, rounds alternate
 * raw, HTTP, raw, HTTP..., so a drift of the shared machine's load weighs on both alike; the
 * ratio is of the medians. Each client is one shop (its own customer and key), so the figures
 * measure the ledger, not one customer's row lock; `--shared` makes every client use one
 * customer instead.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import type { Database } from '../cloud/db/database.ts';
import { openDatabase } from '../cloud/db/open-database.ts';
import { Ledger } from '../cloud/ledger.ts';
import { applySeed, type Seed } from '../cloud/seed.ts';
import { startLedgerProcess, type LedgerProcess } from '../test/support/ledger-process.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { clockTicksPerSecond, cpuTicks, median, procStat, table, verdict } from './measure.ts';

const TARGET = 0.7;
const WARM_UP_SECONDS = 3;

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,4,16' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    processes: { type: 'string', default: '1' },
    shared: { type: 'boolean', default: false },
  },
});
const clientCounts = values.clients.split(',').map(Number);
const roundSeconds = Number(values.seconds);
const rounds = Number(values.rounds);
const processCount = Number(values.processes);
const maxClients = Math.max(...clientCounts);

const keyOf = (i: number) => `bench-key-${String(i).padStart(4, '0')}-0123456789`;
const customers = values.shared ? 1 : maxClients;
const seed: Seed = {
  customers: Array.from({ length: customers }, (_, i) => ({
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
  return async (client) => {
    const key = keyOf(client);
    const id = randomUUID();
    const customerId = await ledger.authenticate(key);
    await ledger.createMovement(customerId, {
      id,
      kind: 'recharge',
      cardId: '04A1B2C3',
      credits: 1,
    });
    await ledger.postMovement(await ledger.authenticate(key), id);
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

/** The postmaster and its children (the backends serving the connections). */
function postgresPids(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return Number(procStat(pid)[1]) === postmaster;
      } catch {
        return false; // gone meanwhile
      }
    });
  return [postmaster, ...children];
}

function ticksOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuTicks(pid);
    } catch {
      return sum;
    }
  }, 0);
}

interface Round {
  perSecond: number;
  /** CPU per movement in microseconds, by process group. */
  cpu: { bench: number; ledger: number; postgres: number };
}

interface Processes {
  ledger: number[];
  postmaster: number;
}

const ticksPerSecond = clockTicksPerSecond();

/** `clients` loops of `movement` for `seconds`; movements per second and CPU per movement. */
async function round(
  clients: number,
  movement: Movement,
  seconds: number,
  processes: Processes,
): Promise<Round> {
  const groups = () => ({
    bench: cpuTicks(process.pid),
    ledger: ticksOf(processes.ledger),
    postgres: ticksOf(postgresPids(processes.postmaster)),
  });
  const before = groups();
  const endAt = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (Date.now() < endAt) {
        await movement(client);
        done += 1;
      }
    }),
  );
  const after = groups();
  const micros = (group: keyof typeof before) =>
    ((after[group] - before[group]) / ticksPerSecond / Math.max(1, done)) * 1e6;
  return {
    perSecond: done / seconds,
    cpu: { bench: micros('bench'), ledger: micros('ledger'), postgres: micros('postgres') },
  };
}

const postgres = await startPostgres();
const ledgers: LedgerProcess[] = [];
let db: Database | undefined;
let pools: Pool[] = [];
try {
  db = await openDatabase(postgres.url, { poolSize: maxClients });
  await applySeed(db, seed);
  for (let i = 0; i < processCount; i += 1) {
    ledgers.push(
      await startLedgerProcess({
        database: postgres.url,
        poolSize: Math.max(2, Math.ceil(maxClients / processCount)),
      }),
    );
  }
  const processes: Processes = { ledger: ledgers.map((l) => l.pid), postmaster: postgres.pid };
  const raw = rawSql(db);
  pools = ledgers.map((l) => new Pool(l.url, { connections: maxClients }));
  const http = overHttp(pools);
  const loadBefore = loadavg()[0] ?? 0;
  await round(maxClients, raw, WARM_UP_SECONDS, processes);
  await round(maxClients, http, WARM_UP_SECONDS, processes);

  const results: { clients: number; raw: Round[]; http: Round[] }[] = [];
  for (const clients of clientCounts) {
    const result = { clients, raw: [] as Round[], http: [] as Round[] };
    for (let r = 0; r < rounds; r += 1) {
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
      ['clients', 'side', 'movements/s', 'CPU µs/movement: bench', 'ledger', 'postgres', 'total'],
      results.flatMap(({ clients, raw: rawRounds, http: httpRounds }) =>
        (
          [
            ['raw SQL', rawRounds],
            ['ledger HTTP', httpRounds],
          ] as const
        ).map(([side, rs]) => [
          clients,
          side,
          rate(rs).toFixed(0),
          cpu(rs, 'bench').toFixed(0),
          cpu(rs, 'ledger').toFixed(0),
          cpu(rs, 'postgres').toFixed(0),
          (cpu(rs, 'bench') + cpu(rs, 'ledger') + cpu(rs, 'postgres')).toFixed(0),
        ]),
      ),
    ),
  );
  for (const { clients, raw: rawRounds, http: httpRounds } of results) {
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
