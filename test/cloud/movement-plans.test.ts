import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { hashApiKey } from '../../cloud/api-keys.ts';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import type { MovementRequest } from '../../common/ledger-contract.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';

// A connection keeps the plans of the ledger's PL/pgSQL statements, but PostgreSQL (before 18)
// plans the statements of a LANGUAGE sql function that it cannot inline anew on every call.
// On the path of every movement (its create and its post) that planning cost more than the
// statements themselves: ledger_card_held_by_rules alone about 240 µs per create, against
// about 10 µs to run it (pg_stat_statements; bench/ledger-throughput.ts, docs/benchmarks.md).
// So no statement a create or a post runs, however deep, may be planned on every call:
// pg_stat_statements counts each statement's plans beside its calls (nested statements
// included).

let postgres: PostgresServer;
let db: Database;

before(async () => {
  postgres = await startPostgres({
    settings: {
      shared_preload_libraries: 'pg_stat_statements',
      'pg_stat_statements.track': 'all',
      'pg_stat_statements.track_planning': 'on',
    },
  });
  // One connection: what is planned once stays planned for the next call.
  db = await openDatabase(postgres.url, { poolSize: 1 });
  await db.query('CREATE EXTENSION pg_stat_statements');
});
after(async () => {
  await db?.close();
  await postgres?.stop();
});

interface Planned {
  query: string;
  calls: number;
  plans: number;
}

test('when a till recharges and pays out cards one after the other, then no statement of the ledger is planned anew on every call', async () => {
  const shop = (await addCustomer(db, { name: 'Plans', credits: 1_000_000, creditCost: 5000n }))
    .customerId;
  const { apiKey } = await issueKey(db, { customerId: shop });
  const keyHash = hashApiKey(apiKey);
  const ledger = new Ledger(db);
  const till = randomUUID();
  let card = 0;
  /** A movement as the worker makes it: created, then posted by its till. */
  const made = async (request: MovementRequest) => {
    await ledger.createMovement(shop, request, keyHash);
    const post = { tillId: till, occurredAt: new Date().toISOString() };
    await ledger.postMovement(shop, request.id, post, keyHash);
  };
  /** A till's sale and payout of one card. */
  const sale = async () => {
    card += 1;
    const cardId = `04AB${String(card).padStart(10, '0')}`;
    await made({
      id: randomUUID(),
      kind: 'recharge',
      cardId,
      amount: '5.00',
      cardCredits: 0,
      tillId: till,
      cardBefore: `classic:v1:${card}:a`,
      reference: `sale-${card}`,
    });
    await made({
      id: randomUUID(),
      kind: 'discharge',
      cardId,
      credits: 10,
      cardCredits: 10,
      tillId: till,
      cardBefore: `classic:v1:${card}:b`,
    });
  };

  // Past the first five calls, in which PostgreSQL plans a statement with parameters for
  // their values before it may settle on a generic plan.
  for (let i = 0; i < 6; i += 1) await sale();
  await db.query('SELECT pg_stat_statements_reset()');
  const sales = 10;
  for (let i = 0; i < sales; i += 1) await sale();

  const { rows } = await db.query<{ query: string; calls: string; plans: string }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls, plans
     FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND NOT toplevel`,
  );
  const statements: Planned[] = rows.map((r) => ({
    query: r.query,
    calls: Number(r.calls),
    plans: Number(r.plans),
  }));
  assert.ok(
    statements.some((s) => s.calls >= sales && /INSERT INTO movements/.test(s.query)),
    `pg_stat_statements saw the creates' statements: ${JSON.stringify(statements)}`,
  );
  const plannedEachCall = statements.filter((s) => s.calls >= sales && s.plans >= s.calls);
  assert.deepEqual(plannedEachCall, [], 'statements planned on every call');
});

test('when a till creates pending movements, then the count of movements created posted starts none of its statements', async () => {
  // Every INSERT into movements fires the daily takings' statement trigger
  // (ledger_count_posted_rows), which counts the movements the statement created posted: a
  // float report's, never a create's pending one. Starting its lock and its upsert for nothing
  // cost about 8 % of a movement's server CPU (bench/ledger-throughput.ts).
  const shop = (await addCustomer(db, { name: 'Pending', credits: 1000, creditCost: 5000n }))
    .customerId;
  const ledger = new Ledger(db);
  await db.query('SELECT pg_stat_statements_reset()');
  const creates = 5;
  for (let i = 0; i < creates; i += 1) {
    await ledger.createMovement(shop, {
      id: randomUUID(),
      kind: 'recharge',
      cardId: `04CD${String(i).padStart(10, '0')}`,
      credits: 1,
    });
  }

  const { rows } = await db.query<{ query: string; calls: string }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND NOT toplevel`,
  );
  const calls = rows.map((r) => ({ query: r.query, calls: Number(r.calls) }));
  assert.ok(
    calls.some((s) => s.calls === creates && /INSERT INTO movements/.test(s.query)),
    `pg_stat_statements saw the creates' statements: ${JSON.stringify(calls)}`,
  );
  const counting = calls.filter(
    (s) =>
      /INSERT INTO daily_takings/.test(s.query) || /pg_advisory_xact_lock_shared\(11/.test(s.query),
  );
  assert.deepEqual(counting, [], 'the daily takings counted creates of pending movements');
});
