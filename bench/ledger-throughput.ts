/**
 * Ledger throughput on PostgreSQL: movements per second (a recharge `pending` then its `post`,
 * as the worker does) with N concurrent clients, through the ledger's HTTP API, against the
 * raw-SQL ceiling: the very same transactions (the ledger's own code, key lookup included)
 * sent straight to the same database by this process. Printed side by side as a ratio.
 *
 *   node --import tsx bench/ledger-throughput.ts [--clients 1,4,16] [--seconds 5] [--processes 1]
 *
 * Each client is one shop (its own customer and key), so the figures measure the ledger, not
 * one customer's row lock; `--shared` makes every client use one customer instead.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Database } from '../cloud/db/database.ts';
import { openDatabase } from '../cloud/db/open-database.ts';
import { Ledger } from '../cloud/ledger.ts';
import { applySeed, type Seed } from '../cloud/seed.ts';
import { startLedgerProcess, type LedgerProcess } from '../test/support/ledger-process.ts';
import { startPostgres } from '../test/support/postgres.ts';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,4,16' },
    seconds: { type: 'string', default: '5' },
    processes: { type: 'string', default: '1' },
    shared: { type: 'boolean', default: false },
  },
});
const clientCounts = values.clients.split(',').map(Number);
const seconds = Number(values.seconds);
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

async function measure(clients: number, movement: Movement, forSeconds: number): Promise<number> {
  const warmUntil = Date.now() + 500;
  const endAt = warmUntil + forSeconds * 1000;
  let counted = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (;;) {
        await movement(client);
        const now = Date.now();
        if (now > endAt) return;
        if (now > warmUntil) counted += 1;
      }
    }),
  );
  return counted / forSeconds;
}

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

function overHttp(ledgers: LedgerProcess[], agent: Agent): Movement {
  const post = (client: number, path: string, body?: string) =>
    new Promise<void>((resolve, reject) => {
      const target = ledgers[client % ledgers.length] as LedgerProcess;
      const req = request(
        {
          agent,
          host: '127.0.0.1',
          port: target.port,
          method: 'POST',
          path,
          headers: {
            'x-api-key': keyOf(client),
            ...(body
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
              : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 201 || res.statusCode === 200
              ? resolve()
              : reject(new Error(`${path}: HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
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

const postgres = await startPostgres();
const ledgers: LedgerProcess[] = [];
let db: Database | undefined;
const agent = new Agent({ keepAlive: true, maxSockets: maxClients });
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
  const loadBefore = loadavg()[0] ?? 0;
  const rows: { clients: number; raw: number; http: number }[] = [];
  for (const clients of clientCounts) {
    // A-B-B-A: half the time each, in two halves, so a drift of the machine's load over the
    // run weighs on both sides alike.
    const half = seconds / 2;
    const rawFirst = await measure(clients, rawSql(db), half);
    const httpFirst = await measure(clients, overHttp(ledgers, agent), half);
    const httpSecond = await measure(clients, overHttp(ledgers, agent), half);
    const rawSecond = await measure(clients, rawSql(db), half);
    rows.push({ clients, raw: (rawFirst + rawSecond) / 2, http: (httpFirst + httpSecond) / 2 });
  }
  console.log(
    `ledger throughput on PostgreSQL (${seconds} s per cell, ${processCount} ledger process(es), ` +
      `${values.shared ? 'one shared customer' : 'one customer per client'}, ${cpus().length} CPUs, ` +
      `load average ${loadBefore.toFixed(1)} before the run)`,
  );
  console.log('| clients | raw SQL (movements/s) | ledger HTTP (movements/s) | ratio |');
  console.log('|--------:|----------------------:|--------------------------:|------:|');
  for (const row of rows) {
    console.log(
      `| ${String(row.clients).padStart(7)} | ${row.raw.toFixed(0).padStart(21)} | ` +
        `${row.http.toFixed(0).padStart(25)} | ${(row.http / row.raw).toFixed(2).padStart(5)} |`,
    );
  }
} finally {
  agent.destroy();
  await Promise.all(ledgers.map((ledger) => ledger.stop()));
  await db?.close();
  await postgres.stop();
}
