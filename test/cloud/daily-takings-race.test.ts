import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { addCustomer } from '../../cloud/admin.ts';
import { checkLedger } from '../../cloud/check.ts';
import { Ledger, resolveMovementIn } from '../../cloud/ledger.ts';
import { setTimeZone } from '../../cloud/shops/shops.ts';
import { lockWaiters, postgresLedgerForSuite } from '../support/postgres.ts';

// The daily takings are counted in each post's transaction, in the shop's time zone; a change
// of zone counts them all anew. Posts and changes of zone racing over several PostgreSQL
// connections must leave them equal to the movements (check), whatever the order.

const postgres = postgresLedgerForSuite({ poolSize: 8 });
const BY = { actor: { kind: 'cli' as const, user: 'test' } };
const TILL = '44444444-4444-4444-8444-444444444444';

test('when 60 posts near local midnight race with the shop changing its time zone back and forth, then every post is counted once in a day of the zone in force, and check passes', async () => {
  const ledger = new Ledger(postgres.db);
  const shop = (
    await addCustomer(postgres.db, { name: 'Racing shop', credits: 100_000, creditCost: 5000n })
  ).customerId;
  const by = { actor: { kind: 'cli' as const, user: 'test' } };
  const zones = ['Europe/Brussels', 'America/New_York', 'Asia/Tokyo', 'UTC'];
  const ids: string[] = [];
  for (let i = 0; i < 60; i += 1) {
    const id = randomUUID();
    ids.push(id);
    await ledger.createMovement(shop, {
      id,
      kind: 'recharge',
      cardId: `04${(0xc00000 + i).toString(16).toUpperCase()}`,
      credits: 1 + i,
      tillId: '33333333-3333-4333-8333-333333333333',
    });
  }
  // Times either side of midnight in each zone: a post lands in another day in each.
  const at = (i: number) => new Date(Date.UTC(2026, 2, 29, i % 24, 59, 30)).toISOString();
  await Promise.all([
    ...ids.map((id, i) =>
      ledger.postMovement(shop, id, {
        tillId: '33333333-3333-4333-8333-333333333333',
        occurredAt: at(i),
      }),
    ),
    (async () => {
      for (let round = 0; round < 8; round += 1) {
        await setTimeZone(postgres.db, shop, zones[round % zones.length] as string, by);
      }
    })(),
  ]);
  const report = await checkLedger(postgres.db);
  assert.deepEqual(report.problems, []);
  const { rows } = await postgres.db.query<{ movements: string; credits: string }>(
    'SELECT sum(movements) AS movements, sum(credits) AS credits FROM daily_takings WHERE customer_id = $1',
    [shop],
  );
  assert.deepEqual([Number(rows[0]?.movements), Number(rows[0]?.credits)], [60, (60 * 61) / 2]);
});

test('when a post is in flight (counted in the old zone, not yet committed) as the zone changes, then the change waits for it and counts it in the new zone', async () => {
  const ledger = new Ledger(postgres.db);
  const shop = (
    await addCustomer(postgres.db, { name: 'Interleaved shop', credits: 1_000, creditCost: 5000n })
  ).customerId;
  const by = { actor: { kind: 'cli' as const, user: 'test' } };
  await setTimeZone(postgres.db, shop, 'Europe/Brussels', by);
  const id = randomUUID();
  const till = '44444444-4444-4444-8444-444444444444';
  await ledger.createMovement(shop, {
    id,
    kind: 'recharge',
    cardId: '04D00001',
    credits: 5,
    tillId: till,
  });

  let posted!: () => void;
  const postDone = new Promise<void>((resolve) => (posted = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // 23:30 UTC on 28 March: the 28th in New York, the 29th in Brussels.
  const post = postgres.db.transaction(async (tx) => {
    await resolveMovementIn(tx, shop, id, 'posted', {
      tillId: till,
      occurredAt: '2026-03-28T23:30:00Z',
    });
    posted();
    await released;
  });
  await postDone;
  let changed = false;
  const change = setTimeZone(postgres.db, shop, 'America/New_York', by).then(
    () => (changed = true),
  );
  // Until the change either finishes or waits for a lock: a condition, not a time.
  while (!changed && (await lockWaiters(postgres.db)) < 1) await new Promise(setImmediate);
  release();
  await post;
  await change;
  assert.deepEqual((await checkLedger(postgres.db)).problems, []);
  const { rows } = await postgres.db.query<{ day: string }>(
    'SELECT day::text AS day FROM daily_takings WHERE customer_id = $1',
    [shop],
  );
  assert.deepEqual(
    rows.map((row) => row.day),
    ['2026-03-28'],
  );
});

test('when the zone changes first (made, not yet committed) and a post comes meanwhile, then the post waits for it and is counted in the new zone, not the one it read before', async () => {
  const ledger = new Ledger(postgres.db);
  const shop = (
    await addCustomer(postgres.db, { name: 'Late post shop', credits: 1_000, creditCost: 5000n })
  ).customerId;
  await setTimeZone(postgres.db, shop, 'Europe/Brussels', BY);
  const id = randomUUID();
  await ledger.createMovement(shop, {
    id,
    kind: 'recharge',
    cardId: '04D00002',
    credits: 5,
    tillId: TILL,
  });
  // The change is held before it commits: its audit row waits for the shop's chain, which
  // this transaction holds until the post waits too.
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = postgres.db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(10, hashtext($1::text))', [shop]);
    held();
    await released;
  });
  await holding;
  const change = setTimeZone(postgres.db, shop, 'America/New_York', BY);
  while ((await lockWaiters(postgres.db)) < 1) await new Promise(setImmediate);
  // 23:30 UTC on 28 March: the 29th in Brussels, the 28th in New York.
  const post = ledger.postMovement(shop, id, { tillId: TILL, occurredAt: '2026-03-28T23:30:00Z' });
  while ((await lockWaiters(postgres.db)) < 2) await new Promise(setImmediate);
  release();
  await Promise.all([hold, change, post]);
  assert.deepEqual((await checkLedger(postgres.db)).problems, []);
  const { rows } = await postgres.db.query<{ day: string }>(
    'SELECT day::text AS day FROM daily_takings WHERE customer_id = $1',
    [shop],
  );
  assert.deepEqual(
    rows.map((row) => row.day),
    ['2026-03-28'],
  );
});

test('when a transaction holds the shop (a float closing) and then posts while the zone changes, then both are done (the two wait for each other in a circle, PostgreSQL ends one and it is made again), the post counted in the new zone', async () => {
  const ledger = new Ledger(postgres.db);
  const shop = (
    await addCustomer(postgres.db, { name: 'Closing shop', credits: 1_000, creditCost: 5000n })
  ).customerId;
  await setTimeZone(postgres.db, shop, 'Europe/Brussels', BY);
  const id = randomUUID();
  await ledger.createMovement(shop, {
    id,
    kind: 'recharge',
    cardId: '04D00003',
    credits: 5,
    tillId: TILL,
  });
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // As ledger_close_float does: the shop's row first, then its report posts movements.
  const closing = postgres.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM customers WHERE id = $1 FOR UPDATE', [shop]);
    held();
    await released;
    await resolveMovementIn(tx, shop, id, 'posted', {
      tillId: TILL,
      occurredAt: '2026-03-28T23:30:00Z',
    });
  });
  await holding;
  const change = setTimeZone(postgres.db, shop, 'America/New_York', BY);
  while ((await lockWaiters(postgres.db)) < 1) await new Promise(setImmediate);
  release();
  await Promise.all([closing, change]);
  assert.deepEqual((await checkLedger(postgres.db)).problems, []);
  const { rows } = await postgres.db.query<{ day: string }>(
    'SELECT day::text AS day FROM daily_takings WHERE customer_id = $1',
    [shop],
  );
  assert.deepEqual(
    rows.map((row) => row.day),
    ['2026-03-28'],
  );
});
