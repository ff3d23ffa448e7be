import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { addCustomer } from '../../cloud/admin.ts';
import { checkLedger } from '../../cloud/check.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { sqlState } from '../../cloud/db/database.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import { waitUntil } from '../support/card-rig.ts';
import { lockWaiters, postgresLedgerForSuite } from '../support/postgres.ts';

// The ledger's routines lock a shop's row (and a float's) to order the writers of its pool. A
// lock taken FOR UPDATE also blocks every insert that merely references the row (a foreign-key
// check takes FOR KEY SHARE): a float report, which locks its float and then inserts a
// movement of the shop, waited for a top-up holding the shop's row, while the top-up waited
// for the float: PostgreSQL ended one as a deadlock, and after three in a row the till got
// 500 InternalError (seen in CI, "when top-ups race each other and a report"). The routines
// lock FOR NO KEY UPDATE: writers still take turns, inserts that reference the row do not wait.
// And every routine takes its row locks in one order (docs/cloud-api.md, "Concurrency").

const postgres = postgresLedgerForSuite({ poolSize: 4 });

/** Settles `work` or, if it waits for a lock first, says so (conditions, not times). */
async function settlesWithoutWaiting<T>(work: Promise<T>): Promise<'settled' | 'waited'> {
  let done = false;
  const settled = work.then(
    () => (done = true),
    () => (done = true),
  );
  for (;;) {
    if (done) return 'settled';
    if ((await lockWaiters(postgres.db)) > 0) return 'waited';
    await Promise.race([settled, new Promise((resolve) => setImmediate(resolve))]);
  }
}

test('when a top-up holds its shop and float, then another till reporting its float movements does not wait for it, and the book holds', async () => {
  const shop = (
    await addCustomer(postgres.db, { name: 'Two tills', credits: 5000, creditCost: 5000n })
  ).customerId;
  await setFloatSettings(postgres.db, shop, { size: 300, lowWater: 100 });
  const floats = new Floats(postgres.db);
  const [a, b] = [randomUUID(), randomUUID()];
  const floatA = (await floats.open(shop, { tillId: a, requestId: randomUUID(), ids: 10 })).float;
  const floatB = (await floats.open(shop, { tillId: b, requestId: randomUUID(), ids: 10 })).float;

  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const isHolding = new Promise<void>((resolve) => (holding = resolve));
  const topUp = postgres.db.transaction(async (tx) => {
    await tx.query('SELECT ledger_top_up_float($1, $2, $3, $4, $5, $6) AS answer', [
      shop,
      floatA.id,
      randomUUID(),
      100,
      10,
      a,
    ]);
    holding();
    await held;
  });
  await isHolding;
  const report = floats.report(shop, b, [
    {
      id: floatMovementId(floatB.idPrefix, 1),
      cardId: '06AB0001',
      credits: 40,
      card: 'written',
      creditCost: '0.50',
      occurredAt: new Date().toISOString(),
      cardBefore: 'classic:v1:0:1:0',
    },
  ]);
  const outcome = await settlesWithoutWaiting(report);
  release();
  await topUp;
  const answer = await report;
  assert.equal(
    outcome,
    'settled',
    `the report waited for the top-up; it answered ${JSON.stringify(answer)}`,
  );
  assert.deepEqual(
    answer.results.map((result) => [result.outcome, result.state]),
    [['recorded', 'posted']],
    JSON.stringify(answer),
  );
  assert.deepEqual((await checkLedger(postgres.db)).problems, []);
});

test("when a post or void of a movement holds it, then a compensation of it waits for that movement before it takes the shop's row, so the two never wait for each other", async () => {
  // ledger_resolve_movement locks the movement, then changes the shop's row (its pool, its
  // card list); a compensation's create locked the shop's row first, then the movement: two
  // tills deciding one held card at once could each hold what the other waited for.
  const shop = (
    await addCustomer(postgres.db, { name: 'Held card', credits: 500, creditCost: 5000n })
  ).customerId;
  const ledger = new Ledger(postgres.db);
  const till = randomUUID();
  const cardId = '06AB0101';
  const recharge = randomUUID();
  await ledger.createMovement(shop, {
    id: recharge,
    kind: 'recharge',
    cardId,
    credits: 30,
    tillId: till,
  });
  await ledger.voidMovement(shop, recharge, { evidence: 'card reported lost' }, undefined, {
    kind: 'cli',
    user: 'test',
  });

  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const isHolding = new Promise<void>((resolve) => (holding = resolve));
  let shopRow = 'free';
  // The post or void's first step: the movement's row.
  const resolving = postgres.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM movements WHERE customer_id = $1 AND id = $2 FOR NO KEY UPDATE', [
      shop,
      recharge,
    ]);
    holding();
    await held;
    // Its next step: the shop's row. NOWAIT: held by the waiting compensation, it is the cycle.
    try {
      await tx.query('SELECT 1 FROM customers WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [shop]);
    } catch (error) {
      shopRow = `held by the waiting create (${sqlState(error)})`;
    }
  });
  await isHolding;
  const compensation = ledger.createMovement(shop, {
    id: randomUUID(),
    kind: 'recharge',
    cardId,
    credits: 30,
    tillId: randomUUID(),
    compensates: recharge,
  });
  compensation.catch(() => undefined);
  await waitUntil(
    async () => (await lockWaiters(postgres.db)) > 0,
    30_000,
    'the compensation waits',
  );
  release();
  await resolving;
  const made = await compensation;
  assert.equal(
    shopRow,
    'free',
    "the compensation took the shop's row while it waited for the movement",
  );
  assert.equal(made.movement.state, 'pending', JSON.stringify(made));
  assert.deepEqual((await checkLedger(postgres.db)).problems, []);
});
