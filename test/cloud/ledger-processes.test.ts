/**
 * Several `card-wallet-cloud serve` processes on one real PostgreSQL server: no lost update,
 * exactly as many reservations as the pool allows, idempotency and post/void across processes,
 * admin commands next to running servers.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { importCards } from '../../cloud/card-accounts.ts';
import { checkLedger } from '../../cloud/check.ts';
import type { Database } from '../../cloud/db/database.ts';
import { migrations } from '../../cloud/db/migrations/index.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { startLedgerProcess, type LedgerProcess, type Seed } from '../support/ledger-process.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';
import { LedgerClient, type Answer } from './ledger-client.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const KEYS = {
  pool: 'proc-key-pool-0123456789',
  mixed: 'proc-key-mixed-0123456789',
  idem: 'proc-key-idempotent-0123456789',
  admin: 'proc-key-admin-0123456789',
};
const POOL_ID = '3d0b6c52-2a7e-4d8e-9d43-000000000001';
const MIXED_ID = '3d0b6c52-2a7e-4d8e-9d43-000000000002';
const ADMIN_ID = '3d0b6c52-2a7e-4d8e-9d43-000000000004';

const seed: Seed = {
  customers: [
    { id: POOL_ID, name: 'Pool shop', credits: 1000, creditCost: '0.50', keys: [KEYS.pool] },
    { id: MIXED_ID, name: 'Mixed shop', credits: 5000, creditCost: '0.10', keys: [KEYS.mixed] },
    { name: 'Idempotent shop', credits: 100, creditCost: '1.00', keys: [KEYS.idem] },
    { id: ADMIN_ID, name: 'Admin shop', credits: 10, creditCost: '1.00', keys: [KEYS.admin] },
  ],
};

function cli(args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'cloud/cli.ts', ...args], { cwd: repoRoot });
}

describe('several ledger processes on one PostgreSQL', () => {
  let postgres: PostgresServer;
  let processes: LedgerProcess[] = [];
  let db: Database;

  before(async () => {
    postgres = await startPostgres();
    // Started together: migrations and the seed must be applied exactly once.
    processes = await Promise.all(
      [0, 1, 2].map(() => startLedgerProcess({ database: postgres.url, seed, poolSize: 8 })),
    );
    db = await openDatabase(postgres.url, { poolSize: 2 });
  });

  after(async () => {
    await db?.close();
    await Promise.all(processes.map((ledger) => ledger.stop()));
    await postgres?.stop();
  });

  const clients = (key: string) => processes.map((ledger) => new LedgerClient(ledger.url, key));

  test('when three processes start together with one seed, then the schema and the seed exist once', async () => {
    const { rows } = await db.query<{ customers: string; versions: string }>(
      `SELECT (SELECT count(*) FROM customers) AS customers,
              (SELECT count(*) FROM schema_migrations) AS versions`,
    );
    assert.equal(Number(rows[0]?.customers), 4);
    assert.equal(Number(rows[0]?.versions), migrations.length, 'every migration once');
  });

  test('when 200 recharges of 7 credits race through three processes on a pool of 1000, then exactly 142 succeed and the pool never goes negative', async () => {
    const shops = clients(KEYS.pool);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (shops[i % shops.length] as LedgerClient).create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: '04A1B2C3',
          credits: 7,
        }),
      ),
    );
    const statuses = countBy(answers, (answer) => `${answer.status} ${answer.body.error ?? ''}`);
    assert.deepEqual(statuses, { '201 ': 142, '422 NoCredits': 58 });
    assert.equal((await shops[0]?.customer())?.body.credits, 1000 - 142 * 7);

    const { rows } = await db.query<{ lowest: string; reserved: string }>(
      `SELECT min(balance_after) AS lowest, count(*) FILTER (WHERE operation = 'reserve') AS reserved
       FROM ledger_entries WHERE customer_id = $1`,
      [POOL_ID],
    );
    assert.ok(Number(rows[0]?.lowest) >= 0);
    assert.equal(Number(rows[0]?.reserved), 142);
    const report = await checkLedger(db);
    assert.deepEqual(report.problems, []);
  });

  test('when two processes serve one customer at once (recharges, voids, discharges), then no update is lost', async () => {
    const [first, second] = clients(KEYS.mixed) as [LedgerClient, LedgerClient];
    const recharges = Array.from({ length: 80 }, (_, i) => ({
      id: randomUUID(),
      credits: 3 + (i % 5),
    }));
    const discharges = Array.from({ length: 80 }, (_, i) => ({
      id: randomUUID(),
      credits: 2 + (i % 7),
    }));
    // The discharged card was sold before: imported, so its account covers every discharge.
    const dischargedCard = '04A1B2C3D4E5F6';
    await importCards(db, MIXED_ID, [
      { cardId: dischargedCard, credits: discharges.reduce((sum, d) => sum + d.credits, 0) },
    ]);
    await Promise.all([
      ...recharges.map(async ({ id, credits }, i) => {
        const created = await first.create({ id, kind: 'recharge', cardId: '04A1B2C3', credits });
        assert.equal(created.status, 201);
        // Resolved through the other process: half posted, half voided.
        const resolved = await second.resolve(id, i % 2 === 0 ? 'post' : 'void');
        assert.equal(resolved.status, 200);
      }),
      ...discharges.map(async ({ id, credits }) => {
        const created = await second.create({
          id,
          kind: 'discharge',
          cardId: dischargedCard,
          credits,
        });
        assert.equal(created.status, 201);
        assert.equal((await first.resolve(id, 'post')).status, 200);
      }),
    ]);
    const spent = recharges.filter((_, i) => i % 2 === 0).reduce((sum, r) => sum + r.credits, 0);
    const returned = discharges.reduce((sum, d) => sum + d.credits, 0);
    assert.equal((await first.customer()).body.credits, 5000 - spent + returned);
    assert.equal((await second.customer()).body.credits, 5000 - spent + returned);
    assert.ok((await checkLedger(db)).ok);
  });

  test('when the same recharge arrives at three processes at once, then one movement is made and every answer is the same', async () => {
    const shops = clients(KEYS.idem);
    const body = { id: randomUUID(), kind: 'recharge', cardId: '04A1B2C3', credits: 10 };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (shops[i % 3] as LedgerClient).create(body)),
    );
    assert.deepEqual(
      countBy(answers, (answer) => String(answer.status)),
      { '200': 29, '201': 1 },
    );
    for (const answer of answers) assert.deepEqual(answer.body, answers[0]?.body);
    assert.equal((await shops[0]?.customer())?.body.credits, 90);

    const conflicting = await shops[1]?.create({ ...body, credits: 11 });
    assert.equal(conflicting?.status, 409);
  });

  test('when post and void of one movement race through three processes, then exactly one kind wins', async () => {
    const shops = clients(KEYS.idem);
    const id = randomUUID();
    await shops[0]?.create({ id, kind: 'recharge', cardId: '04A1B2C3', credits: 5 });
    const before = (await shops[0]?.customer())?.body.credits as number;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (shops[i % 3] as LedgerClient).resolve(id, i % 2 === 0 ? 'post' : 'void'),
      ),
    );
    const state = (await shops[0]?.movement(id))?.body.state as string;
    answers.forEach((answer, i) => {
      const wanted = i % 2 === 0 ? 'posted' : 'voided';
      assert.equal(answer.status, wanted === state ? 200 : 409);
    });
    const { rows } = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM ledger_entries WHERE movement_id = $1 AND operation = 'release'",
      [id],
    );
    assert.equal(Number(rows[0]?.n), state === 'voided' ? 1 : 0);
    assert.equal((await shops[0]?.customer())?.body.credits, before + (state === 'voided' ? 5 : 0));
  });

  test('when the admin CLI tops up, sets the cost and revokes a key while servers run, then the servers see it at once', async () => {
    const [shop] = clients(KEYS.admin) as [LedgerClient];
    const topup = await cli([
      'customer',
      'topup',
      '--customer',
      ADMIN_ID,
      '--credits',
      '15',
      '--reason',
      'invoice paid',
      '--database',
      postgres.url,
    ]);
    assert.equal(JSON.parse(topup.stdout).credits, 25);
    await cli([
      'customer',
      'set-cost',
      '--customer',
      ADMIN_ID,
      '--credit-cost',
      '0.2',
      '--database',
      postgres.url,
    ]);
    assert.deepEqual((await shop.customer()).body, {
      customerId: ADMIN_ID,
      name: 'Admin shop',
      credits: 25,
      creditCost: '0.20',
      floatCredits: 0,
      float: {
        size: 0,
        lowWater: 0,
        offlineCap: null,
        offlineLimitSeconds: 86_400,
        cardTypes: ['classic', 'desfire'],
      },
      cards: { undoWindowSeconds: 600, bonusTiers: [], bonusSpend: 'bonus-first' },
    });
    const checked = await cli(['check', '--database', postgres.url]);
    assert.match(checked.stdout, /^ok: /);

    await cli([
      'key',
      'revoke',
      '--key',
      KEYS.admin,
      '--reason',
      'till stolen',
      '--database',
      postgres.url,
    ]);
    const answer = await shop.customer();
    assert.equal(answer.status, 401);
    assert.deepEqual(answer.body, { error: 'Unauthorized: invalid api key' });
  });

  test('when a server gets SIGTERM, then it closes gracefully with exit 0 and the others keep serving', async () => {
    const stopping = processes.pop() as LedgerProcess;
    assert.equal(await stopping.stop(), 0);
    const answer = await new LedgerClient(processes[0]?.url ?? '', KEYS.pool).customer();
    assert.equal(answer.status, 200);
  });
});

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export type { Answer };
