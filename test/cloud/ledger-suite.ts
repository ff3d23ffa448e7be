/**
 * The ledger suite: contract v1 end to end over HTTP, against one storage backend. The same
 * suite runs on a real PostgreSQL server (ledger-postgres.test.ts) and on PGlite in a data
 * folder (ledger-pglite.test.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { addCustomer, issueKey, topUp } from '../../cloud/admin.ts';
import { checkLedger } from '../../cloud/check.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { parseDecimal } from '../../cloud/decimal.ts';
import { applySeed, type Seed } from '../../cloud/seed.ts';
import { LedgerClient } from './ledger-client.ts';

export interface Backend {
  /** A postgres:// URL or a PGlite folder, empty. */
  database: string;
  cleanup(): Promise<void>;
}

export const SUITE_KEYS = {
  shopA: 'test-key-shop-a-0123456789',
  shopB: 'test-key-shop-b-0123456789',
  unassigned: 'test-key-unassigned-0123456789',
  revoked: 'test-key-revoked-0123456789',
} as const;

const SHOP_A = '6f1c1c8e-0f5b-4c7e-9a52-1d4b2f7a0001';

export const suiteSeed: Seed = {
  customers: [
    { id: SHOP_A, name: 'Shop A', credits: 1500, creditCost: '0.50', keys: [SUITE_KEYS.shopA] },
    { name: 'Shop B', credits: 100, creditCost: '0.125', keys: [SUITE_KEYS.shopB] },
  ],
  unassignedKeys: [SUITE_KEYS.unassigned],
  revokedKeys: [SUITE_KEYS.revoked],
};

const CARD = '04A1B2C3';
const CARD_7 = '04A1B2C3D4E5F6';

export function defineLedgerSuite(name: string, openBackend: () => Promise<Backend>): void {
  describe(name, () => {
    let backend: Backend;
    let server: LedgerServer;
    let base: LedgerClient;

    /** A new customer with its own key: tests that count credits never share a pool. */
    async function newShop(credits: number, creditCost = '1.00'): Promise<LedgerClient> {
      const customer = await addCustomer(server.db, {
        name: `Shop ${randomUUID().slice(0, 8)}`,
        credits,
        creditCost: parseDecimal(creditCost) ?? 0n,
      });
      const { apiKey } = await issueKey(server.db, { customerId: customer.customerId });
      return base.withKey(apiKey);
    }

    async function poolOf(shop: LedgerClient): Promise<number> {
      const answer = await shop.customer();
      assert.equal(answer.status, 200);
      return answer.body.credits as number;
    }

    const recharge = (credits: number, id = randomUUID()) => ({
      id,
      kind: 'recharge',
      cardId: CARD,
      credits,
    });

    before(async () => {
      backend = await openBackend();
      server = await startLedgerServer({
        database: backend.database,
        seed: suiteSeed,
        log: { error: () => undefined },
      });
      base = new LedgerClient(server.url);
    });

    after(async () => {
      await server?.close();
      await backend?.cleanup();
    });

    describe('health and authentication', () => {
      test('when /health is called without a key, then it answers 200 ok', async () => {
        const answer = await base.get('/health');
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, { status: 'ok' });
      });

      test('when the key is missing, then every /v1 call is 401 missing api key', async () => {
        for (const answer of [
          await base.get('/v1/customer'),
          await base.post('/v1/movements', recharge(1)),
          await base.get('/v1/movements?state=pending'),
        ]) {
          assert.equal(answer.status, 401);
          assert.deepEqual(answer.body, { error: 'Unauthorized: missing api key' });
        }
      });

      test('when the key is unknown or revoked, then the call is 401 invalid api key', async () => {
        for (const key of ['test-key-never-issued-0123456', SUITE_KEYS.revoked]) {
          const answer = await base.withKey(key).get('/v1/customer');
          assert.equal(answer.status, 401);
          assert.deepEqual(answer.body, { error: 'Unauthorized: invalid api key' });
        }
      });

      test('when the key is valid but assigned to no customer, then every /v1 call is 403 KeyNotAssigned', async () => {
        const unassigned = base.withKey(SUITE_KEYS.unassigned);
        for (const answer of [
          await unassigned.customer(),
          await unassigned.create(recharge(1)),
          await unassigned.resolve(randomUUID(), 'post'),
          await unassigned.get('/v1/movements'),
        ]) {
          assert.equal(answer.status, 403);
          assert.deepEqual(answer.body, { error: 'KeyNotAssigned' });
        }
      });

      test('when an unknown path is called, then it is 404 NotFound', async () => {
        const answer = await base.withKey(SUITE_KEYS.shopA).get('/v1/nothing-here');
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.body, { error: 'NotFound' });
      });
    });

    describe('customer', () => {
      test('when a seeded customer asks, then it gets its id, name, integer credits and canonical cost', async () => {
        const a = await base.withKey(SUITE_KEYS.shopA).customer();
        assert.equal(a.status, 200);
        assert.deepEqual(a.body, {
          customerId: SHOP_A,
          name: 'Shop A',
          credits: 1500,
          creditCost: '0.50',
        });
        const b = await base.withKey(SUITE_KEYS.shopB).customer();
        assert.equal(b.body.creditCost, '0.125');
        assert.equal(b.body.credits, 100);
      });

      test('when a cost has no decimals, then it is printed with two ("1.00")', async () => {
        const shop = await newShop(5, '1');
        assert.equal((await shop.customer()).body.creditCost, '1.00');
      });

      test('when the seed is applied again, then nothing changes', async () => {
        const before = await base.withKey(SUITE_KEYS.shopB).customer();
        const result = await applySeed(server.db, suiteSeed);
        assert.equal(result.keysAdded, 0);
        assert.ok(result.customers.every((customer) => !customer.created));
        assert.deepEqual((await base.withKey(SUITE_KEYS.shopB).customer()).body, before.body);
      });
    });

    describe('recharge', () => {
      test('when a recharge by credits is created, then it is pending, 201, and reserves the credits', async () => {
        const shop = await newShop(1000, '0.50');
        const id = randomUUID();
        const answer = await shop.create(recharge(30, id));
        assert.equal(answer.status, 201);
        assert.equal(answer.body.id, id);
        assert.equal(answer.body.kind, 'recharge');
        assert.equal(answer.body.cardId, CARD);
        assert.equal(answer.body.state, 'pending');
        assert.equal(answer.body.credits, 30);
        assert.equal(answer.body.amount, '15.00');
        assert.equal(answer.body.creditCost, '0.50');
        assert.equal(answer.body.customerCredits, 970);
        assert.equal(answer.body.resolvedAt, null);
        assert.ok(!Number.isNaN(Date.parse(answer.body.createdAt)));
        assert.equal(await poolOf(shop), 970);
      });

      test('when a recharge gives an amount, then credits = floor(amount / cost) and amount = credits x cost', async () => {
        const shop = await newShop(1000, '0.30');
        const answer = await shop.create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: CARD_7,
          amount: '1.00',
        });
        assert.equal(answer.status, 201);
        assert.equal(answer.body.credits, 3);
        assert.equal(answer.body.amount, '0.90');
        assert.equal(answer.body.cardId, CARD_7);
        assert.equal(answer.body.customerCredits, 997);

        const eighth = await newShop(1000, '0.125');
        const exact = await eighth.create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: CARD,
          amount: '10.01',
        });
        assert.equal(exact.body.credits, 80);
        assert.equal(exact.body.amount, '10.00');

        const third = await newShop(1000, '0.3333');
        const odd = await third.create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: CARD,
          amount: '100',
        });
        assert.equal(odd.body.credits, 300); // 100 / 0.3333 = 300.03
        assert.equal(odd.body.amount, '99.99');
        assert.equal(odd.body.creditCost, '0.3333');
      });

      test('when an amount is worth less than one credit, then it is 422 AmountBelowOneCredit and nothing changes', async () => {
        const shop = await newShop(50, '0.50');
        const id = randomUUID();
        const answer = await shop.create({ id, kind: 'recharge', cardId: CARD, amount: '0.49' });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.body, { error: 'AmountBelowOneCredit' });
        assert.equal(await poolOf(shop), 50);
        assert.equal((await shop.movement(id)).status, 404);
      });

      test('when the pool cannot cover a recharge, then it is 422 NoCredits, nothing is stored, and a retry after a top-up succeeds', async () => {
        const shop = await newShop(10);
        const id = randomUUID();
        const refused = await shop.create(recharge(11, id));
        assert.equal(refused.status, 422);
        assert.deepEqual(refused.body, { error: 'NoCredits' });
        assert.equal(await poolOf(shop), 10);
        assert.equal((await shop.movement(id)).status, 404);

        const { customerId } = (await shop.customer()).body as { customerId: string };
        await topUp(server.db, customerId, 5);
        const retried = await shop.create(recharge(11, id));
        assert.equal(retried.status, 201);
        assert.equal(retried.body.customerCredits, 4);
      });

      test('when a recharge takes the whole pool, then the pool is 0 and the next one is NoCredits', async () => {
        const shop = await newShop(7);
        assert.equal((await shop.create(recharge(7))).body.customerCredits, 0);
        assert.equal((await shop.create(recharge(1))).status, 422);
      });

      test('when a recharge is posted, then it is final and the pool stays reserved', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create(recharge(40, id));
        const posted = await shop.resolve(id, 'post');
        assert.equal(posted.status, 200);
        assert.equal(posted.body.state, 'posted');
        assert.ok(!Number.isNaN(Date.parse(posted.body.resolvedAt)));
        assert.equal(posted.body.customerCredits, 60);
        assert.equal(await poolOf(shop), 60);
      });

      test('when a recharge is voided, then its reservation goes back to the pool, once', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create(recharge(40, id));
        const voided = await shop.resolve(id, 'void');
        assert.equal(voided.status, 200);
        assert.equal(voided.body.state, 'voided');
        assert.equal(voided.body.customerCredits, 100);
        const again = await shop.resolve(id, 'void');
        assert.equal(again.status, 200);
        assert.equal(again.body.state, 'voided');
        assert.equal(again.body.resolvedAt, voided.body.resolvedAt);
        assert.equal(await poolOf(shop), 100);
      });
    });

    describe('discharge', () => {
      test('when a discharge is created, then it is pending and the pool does not change', async () => {
        const shop = await newShop(100, '0.50');
        const answer = await shop.create({
          id: randomUUID(),
          kind: 'discharge',
          cardId: CARD,
          credits: 25,
        });
        assert.equal(answer.status, 201);
        assert.equal(answer.body.state, 'pending');
        assert.equal(answer.body.amount, '12.50');
        assert.equal(answer.body.customerCredits, 100);
        assert.equal(await poolOf(shop), 100);
      });

      test('when a discharge is posted, then its credits return to the pool, once', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create({ id, kind: 'discharge', cardId: CARD, credits: 25 });
        const posted = await shop.resolve(id, 'post');
        assert.equal(posted.status, 200);
        assert.equal(posted.body.state, 'posted');
        assert.equal(posted.body.customerCredits, 125);
        const again = await shop.resolve(id, 'post');
        assert.equal(again.status, 200);
        assert.equal(again.body.customerCredits, 125);
        assert.equal(await poolOf(shop), 125);
      });

      test('when a discharge is voided, then the pool does not change', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create({ id, kind: 'discharge', cardId: CARD, credits: 25 });
        const voided = await shop.resolve(id, 'void');
        assert.equal(voided.body.state, 'voided');
        assert.equal(voided.body.customerCredits, 100);
      });
    });

    describe('post and void happen at most once', () => {
      test('when a voided movement is posted, then it is 409 MovementAlreadyVoided', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create(recharge(10, id));
        await shop.resolve(id, 'void');
        const answer = await shop.resolve(id, 'post');
        assert.equal(answer.status, 409);
        assert.deepEqual(answer.body, { error: 'MovementAlreadyVoided' });
        assert.equal(await poolOf(shop), 100);
      });

      test('when a posted movement is voided, then it is 409 MovementAlreadyPosted', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create({ id, kind: 'discharge', cardId: CARD, credits: 10 });
        await shop.resolve(id, 'post');
        const answer = await shop.resolve(id, 'void');
        assert.equal(answer.status, 409);
        assert.deepEqual(answer.body, { error: 'MovementAlreadyPosted' });
        assert.equal(await poolOf(shop), 110);
      });

      test('when post and void race on one movement, then exactly one of them wins', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create(recharge(10, id));
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => shop.resolve(id, i % 2 === 0 ? 'post' : 'void')),
        );
        const final = (await shop.movement(id)).body.state as string;
        for (const [i, answer] of answers.entries()) {
          const action = i % 2 === 0 ? 'posted' : 'voided';
          assert.equal(answer.status, action === final ? 200 : 409);
        }
        assert.equal(await poolOf(shop), final === 'posted' ? 90 : 100);
      });

      test("when the movement id is unknown or another customer's, then post, void and get are 404 MovementNotFound", async () => {
        const owner = await newShop(100);
        const other = await newShop(100);
        const id = randomUUID();
        await owner.create(recharge(10, id));
        for (const answer of [
          await other.resolve(id, 'post'),
          await other.resolve(id, 'void'),
          await other.movement(id),
          await owner.resolve(randomUUID(), 'post'),
          await owner.movement(randomUUID()),
        ]) {
          assert.equal(answer.status, 404);
          assert.deepEqual(answer.body, { error: 'MovementNotFound' });
        }
        assert.equal((await owner.movement(id)).body.state, 'pending');
      });
    });

    describe('idempotency', () => {
      test('when the same id and body are sent again, then the first answer is replayed with 200, as of now', async () => {
        const shop = await newShop(100);
        const body = recharge(10);
        const first = await shop.create(body);
        const replay = await shop.create(body);
        assert.equal(first.status, 201);
        assert.equal(replay.status, 200);
        assert.deepEqual(replay.body, first.body);
        assert.equal(await poolOf(shop), 90);

        await shop.resolve(body.id, 'post');
        const later = await shop.create(body);
        assert.equal(later.status, 200);
        assert.equal(later.body.state, 'posted');
        assert.equal(await poolOf(shop), 90);
      });

      test('when an amount is replayed written differently ("12.5" and "12.50"), then it is the same request', async () => {
        const shop = await newShop(1000, '0.50');
        const id = randomUUID();
        const first = await shop.create({ id, kind: 'recharge', cardId: CARD, amount: '12.5' });
        const replay = await shop.create({ id, kind: 'recharge', cardId: CARD, amount: '12.50' });
        assert.equal(replay.status, 200);
        assert.deepEqual(replay.body, first.body);
      });

      test('when the id is reused with another body, then it is 409 MovementIdConflict and nothing changes', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        await shop.create(recharge(10, id));
        for (const body of [
          recharge(11, id),
          { ...recharge(10, id), cardId: CARD_7 },
          { ...recharge(10, id), kind: 'discharge' },
          { id, kind: 'recharge', cardId: CARD, amount: '10.00' },
        ]) {
          const answer = await shop.create(body);
          assert.equal(answer.status, 409, JSON.stringify(body));
          assert.deepEqual(answer.body, { error: 'MovementIdConflict' });
        }
        assert.equal(await poolOf(shop), 90);
      });

      test('when another customer reuses an id, then it is 409 MovementIdConflict', async () => {
        const first = await newShop(100);
        const second = await newShop(100);
        const body = recharge(10);
        await first.create(body);
        const answer = await second.create(body);
        assert.equal(answer.status, 409);
        assert.deepEqual(answer.body, { error: 'MovementIdConflict' });
        assert.equal(await poolOf(second), 100);
      });

      test('when the same recharge is sent 20 times at once, then one movement is made and all get the same answer', async () => {
        const shop = await newShop(100);
        const body = recharge(10);
        const answers = await Promise.all(Array.from({ length: 20 }, () => shop.create(body)));
        assert.equal(answers.filter((answer) => answer.status === 201).length, 1);
        assert.equal(answers.filter((answer) => answer.status === 200).length, 19);
        for (const answer of answers) assert.deepEqual(answer.body, answers[0]?.body);
        assert.equal(await poolOf(shop), 90);
      });

      test('when the same discharge is sent 20 times at once, then one movement is made', async () => {
        const shop = await newShop(100);
        const body = { id: randomUUID(), kind: 'discharge', cardId: CARD, credits: 5 };
        const answers = await Promise.all(Array.from({ length: 20 }, () => shop.create(body)));
        assert.equal(answers.filter((answer) => answer.status === 201).length, 1);
        for (const answer of answers) assert.equal(answer.body.id, body.id);
      });
    });

    describe('concurrency', () => {
      test('when 60 recharges compete for a pool that covers 25, then exactly 25 succeed and the pool ends at 0', async () => {
        const shop = await newShop(250);
        const answers = await Promise.all(
          Array.from({ length: 60 }, () => shop.create(recharge(10))),
        );
        assert.equal(answers.filter((answer) => answer.status === 201).length, 25);
        const refused = answers.filter((answer) => answer.status === 422);
        assert.equal(refused.length, 35);
        for (const answer of refused) assert.deepEqual(answer.body, { error: 'NoCredits' });
        assert.equal(await poolOf(shop), 0);
        const seen = answers.map((answer) => answer.body.customerCredits as number | undefined);
        assert.ok(seen.every((credits) => credits === undefined || credits >= 0));
      });
    });

    describe('listing', () => {
      test('when pending movements are listed, then only pending ones come, newest first', async () => {
        const shop = await newShop(100);
        const ids: string[] = [];
        for (let i = 0; i < 4; i += 1) {
          const id = randomUUID();
          ids.push(id);
          await shop.create(recharge(1, id));
        }
        await shop.resolve(ids[1] ?? '', 'post');
        const pending = await shop.get('/v1/movements?state=pending');
        assert.equal(pending.status, 200);
        assert.deepEqual(
          pending.body.movements.map((movement: { id: string }) => movement.id),
          [ids[3], ids[2], ids[0]],
        );
        const all = await shop.get('/v1/movements');
        assert.equal(all.body.movements.length, 4);
        const limited = await shop.get('/v1/movements?limit=2');
        assert.deepEqual(
          limited.body.movements.map((movement: { id: string }) => movement.id),
          [ids[3], ids[2]],
        );
        const other = await newShop(1);
        assert.deepEqual((await other.get('/v1/movements')).body, { movements: [] });
      });

      test('when the list query is invalid, then it is 400 InvalidQuery naming the parameter', async () => {
        const shop = base.withKey(SUITE_KEYS.shopA);
        for (const [query, field] of [
          ['state=done', 'state'],
          ['limit=0', 'limit'],
          ['limit=1001', 'limit'],
          ['limit=abc', 'limit'],
        ] as const) {
          const answer = await shop.get(`/v1/movements?${query}`);
          assert.equal(answer.status, 400, query);
          assert.equal(answer.body.error, 'InvalidQuery');
          assert.match(answer.body.detail, new RegExp(`^${field}:`));
        }
      });
    });

    describe('invalid requests', () => {
      const id = '0b7a6f0e-5a6e-4c39-9a48-6f5c1e1d0a99';
      const cases: [string, unknown, string][] = [
        ['no id', { kind: 'recharge', cardId: CARD, credits: 1 }, 'id'],
        [
          'an id that is not a UUID',
          { id: '42', kind: 'recharge', cardId: CARD, credits: 1 },
          'id',
        ],
        ['an unknown kind', { id, kind: 'refund', cardId: CARD, credits: 1 }, 'kind'],
        ['a lowercase card id', { id, kind: 'recharge', cardId: '04a1b2c3', credits: 1 }, 'cardId'],
        [
          'a 10-digit card id',
          { id, kind: 'recharge', cardId: '04A1B2C3D4', credits: 1 },
          'cardId',
        ],
        ['zero credits', { id, kind: 'recharge', cardId: CARD, credits: 0 }, 'credits'],
        ['fractional credits', { id, kind: 'recharge', cardId: CARD, credits: 1.5 }, 'credits'],
        ['credits as a string', { id, kind: 'recharge', cardId: CARD, credits: '5' }, 'credits'],
        [
          'too many credits',
          { id, kind: 'recharge', cardId: CARD, credits: 2147483648 },
          'credits',
        ],
        [
          'both credits and amount',
          { id, kind: 'recharge', cardId: CARD, credits: 1, amount: '1' },
          'credits, amount',
        ],
        ['neither credits nor amount', { id, kind: 'recharge', cardId: CARD }, 'credits, amount'],
        [
          'an amount on a discharge',
          { id, kind: 'discharge', cardId: CARD, amount: '1.00' },
          'amount',
        ],
        [
          'an amount with 3 decimals',
          { id, kind: 'recharge', cardId: CARD, amount: '1.234' },
          'amount',
        ],
        ['an amount as a number', { id, kind: 'recharge', cardId: CARD, amount: 12.5 }, 'amount'],
        ['a zero amount', { id, kind: 'recharge', cardId: CARD, amount: '0.00' }, 'amount'],
        ['a negative amount', { id, kind: 'recharge', cardId: CARD, amount: '-1' }, 'amount'],
        ['an unknown field', { id, kind: 'recharge', cardId: CARD, credits: 1, note: 'x' }, 'note'],
        ['an array', [], 'body'],
      ];
      for (const [what, body, field] of cases) {
        test(`when the body has ${what}, then it is 400 InvalidMovement naming ${field}`, async () => {
          const answer = await base
            .withKey(SUITE_KEYS.shopA)
            .create(body as Record<string, unknown>);
          assert.equal(answer.status, 400);
          assert.equal(answer.body.error, 'InvalidMovement');
          assert.ok(answer.body.detail.startsWith(`${field}:`), answer.body.detail);
        });
      }

      test('when the body is not valid JSON, then it is 400 InvalidMovement without a stack', async () => {
        const answer = await base.withKey(SUITE_KEYS.shopA).post('/v1/movements', undefined, {
          rawBody: '{"id":',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, { error: 'InvalidMovement', detail: 'body: not valid JSON' });
      });

      test('when a POST body is not JSON, then it is 415 UnsupportedMediaType', async () => {
        const answer = await base.withKey(SUITE_KEYS.shopA).post('/v1/movements', undefined, {
          rawBody: 'id=1',
          headers: { 'content-type': 'text/plain' },
        });
        assert.equal(answer.status, 415);
        assert.deepEqual(answer.body, { error: 'UnsupportedMediaType' });
      });

      test('when the body is over 16 kB, then it is 413 PayloadTooLarge', async () => {
        const answer = await base
          .withKey(SUITE_KEYS.shopA)
          .create({ ...recharge(1), padding: 'x'.repeat(17 * 1024) });
        assert.equal(answer.status, 413);
        assert.deepEqual(answer.body, { error: 'PayloadTooLarge' });
      });

      test('when a path id is not a UUID, then it is 400 InvalidMovement naming id', async () => {
        const shop = base.withKey(SUITE_KEYS.shopA);
        for (const answer of [await shop.movement('nope'), await shop.resolve('nope', 'post')]) {
          assert.equal(answer.status, 400);
          assert.deepEqual(answer.body, { error: 'InvalidMovement', detail: 'id: must be a UUID' });
        }
      });
    });

    describe('storage guarantees', () => {
      test('when a balance would go negative, then the database itself refuses it (CHECK)', async () => {
        await assert.rejects(
          server.db.query("UPDATE customers SET credits = -1 WHERE name = 'Shop A'"),
          /customers_credits_non_negative/,
        );
      });

      test('when a ledger entry is updated, deleted or truncated, then the database refuses it', async () => {
        for (const sql of [
          'UPDATE ledger_entries SET delta = delta + 1',
          'DELETE FROM ledger_entries',
          'TRUNCATE ledger_entries',
        ]) {
          await assert.rejects(server.db.query(sql), /append-only/, sql);
        }
      });

      test('when every balance change so far is checked, then balance = sum of entries for every customer', async () => {
        const report = await checkLedger(server.db);
        assert.deepEqual(report.problems, []);
        assert.ok(report.ok);
        assert.ok(report.customers >= 2);
      });

      test("when a balance is changed behind the ledger's back, then the check reports that customer", async () => {
        const shop = await newShop(10);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        await server.db.query('UPDATE customers SET credits = credits + 1 WHERE id = $1', [
          customerId,
        ]);
        try {
          const report = await checkLedger(server.db);
          assert.equal(report.ok, false);
          assert.ok(
            report.problems.some((problem) => problem.includes(customerId)),
            report.problems.join('\n'),
          );
        } finally {
          await server.db.query('UPDATE customers SET credits = credits - 1 WHERE id = $1', [
            customerId,
          ]);
        }
        assert.ok((await checkLedger(server.db)).ok);
      });
    });
  });
}
