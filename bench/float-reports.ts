/**
 * The till float's reports at the ledger, against the database's own speed. A till sells from
 * its float without the ledger and reports its recharges afterwards in batches (POST
 * /v1/float-reports: many movements, one call, one transaction, each answered on its own).
 * Side by side on one PostgreSQL server in one run, with N concurrent clients:
 *
 * - pgbench's TPC-B (3 updates, an insert and a select per transaction), in its own database;
 * - float reports through the ledger's HTTP API, 100 movements per report, each a recharge of
 *   one credit on a card of its own (as a till reports them: credit cost, when, the card's
 *   state before), every one of them answered `recorded` with no flag;
 * - the same reports sent straight to the database by this process (the ledger's own
 *   Floats.report): the ledger process's share is the difference.
 *
 * Each client is one shop with one till and its open float (as each pgbench client mostly
 * updates its own branch). The float's movement ids are handed out before the rounds (top-ups
 * of 1000 ids, as a till asks for them); a client that runs out asks for more in its loop, and
 * those top-ups are counted in its time. Target: at least 2 x pgbench's transactions/s in
 * movements/s, at 4 and 16 clients. Rounds alternate pgbench, SQL, HTTP; ratios are of medians.
 *
 *   node --import tsx bench/float-reports.ts [--clients 4,16] [--seconds 2] [--rounds 3]
 *     [--batch 100] [--ids 20000]
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { hashApiKey } from '../cloud/api-keys.ts';
import type { Database } from '../cloud/db/database.ts';
import { openDatabase } from '../cloud/db/open-database.ts';
import { setFloatSettings } from '../cloud/float-admin.ts';
import { Floats } from '../cloud/floats.ts';
import { applySeed, type Seed } from '../cloud/seed.ts';
import { floatMovementId } from '../common/float-ids.ts';
import type {
  FloatMovementReport,
  FloatReportAnswer,
  FloatReportResult,
  OpenFloatRequest,
} from '../common/ledger-contract.ts';
import { startLedgerProcess, type LedgerProcess } from '../test/support/ledger-process.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { verdict } from './measure.ts';
import { initPgbench, pgbenchRound, round, type Processes, type Round } from './pgbench-rounds.ts';
import { cpuTable, ratesTable, ratioOf, type ClientSides } from './round-tables.ts';

const TARGET_OF_PGBENCH = 2;
const WARM_UP_SECONDS = 3;
const IDS_PER_TOP_UP = 1000;

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '4,16' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '100' },
    ids: { type: 'string', default: '20000' },
  },
});
const clientCounts = values.clients.split(',').map(Number);
const roundSeconds = Number(values.seconds);
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const idsBefore = Number(values.ids);
const maxClients = Math.max(...clientCounts);

const keyOf = (i: number) => `bench-key-${String(i).padStart(4, '0')}-0123456789`;
const customerIdOf = (i: number) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
const seed: Seed = {
  customers: Array.from({ length: maxClients }, (_, i) => ({
    id: customerIdOf(i),
    name: `Bench shop ${i}`,
    credits: 1_000_000_000,
    creditCost: '0.50',
    keys: [keyOf(i)],
  })),
};

/** One shop's till and its float: the ids it may hand out, and the next one. */
interface Till {
  customerId: string;
  tillId: string;
  floatId: string;
  prefix: string;
  issued: number;
  next: number;
}

/** A report of `batch` recharges of one credit, each on a card of its own. */
function reportOf(till: Till, client: number): FloatMovementReport[] {
  const occurredAt = new Date().toISOString();
  return Array.from({ length: batch }, () => {
    const seq = till.next;
    till.next += 1;
    return {
      id: floatMovementId(till.prefix, seq),
      cardId:
        `04${client.toString(16).padStart(2, '0')}${seq.toString(16).padStart(10, '0')}`.toUpperCase(),
      credits: 1,
      card: 'written',
      creditCost: '0.50',
      occurredAt,
      cardBefore: 'classic:v1:blank',
    };
  });
}

function checked(results: FloatReportResult[]): void {
  const wrong = results.find((r) => r.outcome !== 'recorded' || r.flags.length > 0);
  if (results.length !== batch || wrong) {
    throw new Error(`a report was not recorded whole: ${JSON.stringify(wrong ?? results.length)}`);
  }
}

let topUpsInLoop = 0;

/** Hands out more ids when the next report would go past them (counted in the loop's time). */
async function idsFor(till: Till, topUp: (till: Till) => Promise<number>): Promise<void> {
  while (till.next + batch - 1 > till.issued) {
    till.issued = await topUp(till);
    topUpsInLoop += 1;
  }
}

const postgres = await startPostgres();
let ledger: LedgerProcess | undefined;
let db: Database | undefined;
let pool: Pool | undefined;
try {
  db = await openDatabase(postgres.url, { poolSize: maxClients });
  await applySeed(db, seed);
  const pgbenchUrl = await initPgbench(postgres.url, db, maxClients);
  ledger = await startLedgerProcess({ database: postgres.url });
  const processes: Processes = { ledger: [ledger.pid], postmaster: postgres.pid };
  pool = new Pool(ledger.url, { connections: maxClients });
  const floats = new Floats(db);

  const call = async <T>(client: number, path: string, body: unknown): Promise<T> => {
    const answer = await (pool as Pool).request({
      method: 'POST',
      path,
      headers: { 'x-api-key': keyOf(client), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200 && answer.statusCode !== 201) {
      throw new Error(`${path}: HTTP ${answer.statusCode} ${text}`);
    }
    return JSON.parse(text) as T;
  };

  // One till per shop, its float opened as a till opens it, and ids handed out before the rounds.
  const tills: Till[] = [];
  for (let client = 0; client < maxClients; client += 1) {
    const customerId = customerIdOf(client);
    await setFloatSettings(db, customerId, {
      size: 2_000_000_000,
      lowWater: 0,
      offlineCap: null,
    });
    const tillId = randomUUID();
    const open: OpenFloatRequest = { tillId, requestId: randomUUID(), ids: IDS_PER_TOP_UP };
    const float = await call<{ id: string; idPrefix: string; idsIssued: number }>(
      client,
      '/v1/floats',
      open,
    );
    const till = {
      customerId,
      tillId,
      floatId: float.id,
      prefix: float.idPrefix,
      issued: float.idsIssued,
      next: 1,
    };
    while (till.issued < idsBefore) {
      const answer = await floats.topUp(customerId, till.floatId, {
        id: randomUUID(),
        credits: 0,
        ids: IDS_PER_TOP_UP,
      });
      till.issued = answer.float.idsIssued;
    }
    tills.push(till);
  }
  const topUpOverHttp = async (till: Till) => {
    const client = tills.indexOf(till);
    const answer = await call<{ float: { idsIssued: number } }>(
      client,
      `/v1/floats/${till.floatId}/topups`,
      { id: randomUUID(), credits: 0, ids: IDS_PER_TOP_UP, tillId: till.tillId },
    );
    return answer.float.idsIssued;
  };

  const overHttp = async (client: number) => {
    const till = tills[client] as Till;
    await idsFor(till, topUpOverHttp);
    const answer = await call<FloatReportAnswer>(client, '/v1/float-reports', {
      tillId: till.tillId,
      movements: reportOf(till, client),
    });
    checked(answer.results);
  };
  const keyHashes = tills.map((_, client) => hashApiKey(keyOf(client)));
  const bySql = async (client: number) => {
    const till = tills[client] as Till;
    await idsFor(till, topUpOverHttp);
    const answer = await floats.report(
      till.customerId,
      till.tillId,
      reportOf(till, client),
      keyHashes[client],
    );
    checked(answer.results);
  };

  const loadBefore = loadavg()[0] ?? 0;
  await pgbenchRound(pgbenchUrl, maxClients, WARM_UP_SECONDS, processes);
  await round(maxClients, bySql, WARM_UP_SECONDS, processes);
  await round(maxClients, overHttp, WARM_UP_SECONDS, processes);

  const results: ClientSides<'pgbench' | 'sql' | 'http'>[] = [];
  for (const clients of clientCounts) {
    // A round counts reports; a report is `batch` movements.
    const sides = {
      pgbench: { name: 'pgbench transaction', rounds: [] as Round[] },
      sql: { name: 'movement, reports by SQL', rounds: [] as Round[], per: batch },
      http: { name: 'movement, reports over HTTP', rounds: [] as Round[], per: batch },
    };
    for (let r = 0; r < rounds; r += 1) {
      sides.pgbench.rounds.push(await pgbenchRound(pgbenchUrl, clients, roundSeconds, processes));
      sides.sql.rounds.push(await round(clients, bySql, roundSeconds, processes));
      sides.http.rounds.push(await round(clients, overHttp, roundSeconds, processes));
    }
    results.push({ clients, sides });
  }

  console.log(
    `float reports at the ledger on PostgreSQL: ${batch} movements per report, ${rounds} ` +
      `alternating rounds of ${roundSeconds} s per side after a ${WARM_UP_SECONDS} s warm-up, ` +
      `one customer (one till, one float) per client, ${cpus().length} CPUs, load average ` +
      `${loadBefore.toFixed(1)} before the run; ${topUpsInLoop} top-ups for more ids in the loops`,
  );
  console.log(
    ratesTable(results, [
      { header: 'pgbench TPC-B transactions/s', side: 'pgbench' },
      { header: 'reports by SQL, movements/s', side: 'sql' },
      { header: 'reports over HTTP, movements/s', side: 'http' },
      { header: 'SQL / pgbench', ratio: ['sql', 'pgbench'] },
      { header: 'HTTP / pgbench', ratio: ['http', 'pgbench'] },
    ]),
  );
  console.log('');
  console.log(cpuTable(results, ['pgbench', 'sql', 'http']));
  for (const result of results) {
    const ratio = ratioOf(result, ['http', 'pgbench']);
    console.log(
      verdict(
        `${result.clients} client(s): float-report movements over HTTP / pgbench transactions`,
        ratio,
        `>= ${TARGET_OF_PGBENCH}`,
        ratio >= TARGET_OF_PGBENCH,
      ),
    );
  }
} finally {
  await pool?.close();
  await ledger?.stop();
  await db?.close();
  await postgres.stop();
}
