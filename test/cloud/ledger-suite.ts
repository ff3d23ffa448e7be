/**
 * The ledger suite: contract v1 end to end over HTTP, against one storage backend. The same
 * suite runs on a real PostgreSQL server (ledger-postgres.test.ts) and on PGlite in a data
 * folder (ledger-pglite.test.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { request } from 'node:http';
import { addCustomer, issueKey, revokeKey, topUp } from '../../cloud/admin.ts';
import { importCards } from '../../cloud/card-accounts.ts';
import { checkLedger } from '../../cloud/check.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { parseDecimal } from '../../common/decimal.ts';
import { applySeed, type Seed } from '../../cloud/seed.ts';
import { defineFloatTests } from './ledger-float-suite.ts';
import { defineFloatReportTests } from './ledger-float-report-suite.ts';
import { defineBonusTests } from './ledger-bonus-suite.ts';
import { defineCardCompensationTests } from './ledger-card-compensations-suite.ts';
import { defineCardRulesTests } from './ledger-card-rules-suite.ts';
import { LedgerClient, type Answer } from './ledger-client.ts';
import { watchedDatabase, type Unit } from './watched-database.ts';

export interface Backend {
  /** A postgres:// URL or a PGlite folder, empty. */
  database: string;
  cleanup(): Promise<void>;
  /**
   * What the ledger server is given instead of the database the suite opened (a wrapper that
   * watches its statements); the suite's own set-up and checks use the database itself.
   */
  observe?(db: Database): Database;
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
    /** The database itself, for set-up and checks; the server may be given a wrapper of it. */
    let db: Database;
    let server: LedgerServer;
    let base: LedgerClient;

    /** A new customer with its own key: tests that count credits never share a pool. */
    async function newShop(credits: number, creditCost = '1.00'): Promise<LedgerClient> {
      const customer = await addCustomer(db, {
        name: `Shop ${randomUUID().slice(0, 8)}`,
        credits,
        creditCost: parseDecimal(creditCost) ?? 0n,
      });
      const { apiKey } = await issueKey(db, { customerId: customer.customerId });
      return base.withKey(apiKey);
    }

    /** Gives a card an account at the shop without touching its pool (a card import). */
    async function importCard(shop: LedgerClient, credits: number, cardId = CARD): Promise<void> {
      const { customerId } = (await shop.customer()).body as { customerId: string };
      await importCards(db, customerId, [{ cardId, credits }]);
    }

    async function poolOf(shop: LedgerClient): Promise<number> {
      const answer = await shop.customer();
      assert.equal(answer.status, 200);
      return answer.body.credits as number;
    }

    /** A card's account at the shop (`GET /v1/cards/{cardId}`). */
    async function cardOf(shop: LedgerClient, cardId = CARD) {
      const answer = await shop.get(`/v1/cards/${cardId}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body;
    }

    const recharge = (credits: number, id = randomUUID()) => ({
      id,
      kind: 'recharge',
      cardId: CARD,
      credits,
    });

    before(async () => {
      backend = await openBackend();
      db = await openDatabase(backend.database);
      await applySeed(db, suiteSeed);
      server = await startLedgerServer({
        database: backend.observe?.(db) ?? db,
        log: { error: () => undefined },
      });
      base = new LedgerClient(server.url);
    });

    after(async () => {
      await server?.close();
      await db?.close();
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

    describe('failed authentications', () => {
      // A second server on the same database, with small limits, whose key lookups are
      // counted; clients at distinct loopback addresses (any 127.x address is local on Linux).
      const LIMITS = { perAddress: 5, perKeyPrefix: 8, windowMs: 60_000, reloadIntervalMs: 20 };
      let guarded: LedgerServer;
      let keyLookups = 0;
      before(async () => {
        const counting = watchedDatabase(server.db, {
          answered: (sql) => {
            if (sql.includes('WHERE key_hash')) keyLookups += 1;
          },
        });
        guarded = await startLedgerServer({
          database: counting,
          log: { error: () => undefined },
          failedAuthenticationLimits: LIMITS,
        });
      });
      after(() => guarded?.close());

      const customerFrom = (address: string, apiKey: string) =>
        callFrom(address, `${guarded.url}/v1/customer`, apiKey);
      const unknownKey = (prefix = 'unknown-') => `${prefix}${randomUUID()}`;

      test('when one address has used up its failed authentications, then its unknown keys are 429 with Retry-After and cost no key lookup, and a valid key from it is still 200', async () => {
        const attacker = '127.0.0.21';
        for (let i = 0; i < LIMITS.perAddress; i += 1) {
          const answer = await customerFrom(attacker, unknownKey());
          assert.equal(answer.status, 401, `failure ${i}: ${JSON.stringify(answer)}`);
        }
        const lookupsBefore = keyLookups;
        const refused = await Promise.all(
          Array.from({ length: 20 }, () => customerFrom(attacker, unknownKey())),
        );
        for (const answer of refused) {
          assert.equal(answer.status, 429, JSON.stringify(answer));
          assert.deepEqual(answer.body, { error: 'TooManyRequests' });
          const retryAfter = Number(answer.retryAfter);
          assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${answer.retryAfter}`);
        }
        assert.equal(keyLookups, lookupsBefore, 'no key was looked up for a limited address');

        const valid = await customerFrom(attacker, SUITE_KEYS.shopA);
        assert.equal(valid.status, 200, JSON.stringify(valid));
        const elsewhere = await customerFrom('127.0.0.22', unknownKey());
        assert.equal(elsewhere.status, 401, `another address: ${JSON.stringify(elsewhere)}`);
      });

      test('when a key is issued while its address is limited, then its first request is 200', async () => {
        const till = '127.0.0.23';
        for (let i = 0; i < LIMITS.perAddress; i += 1) await customerFrom(till, unknownKey());
        assert.equal((await customerFrom(till, unknownKey())).status, 429);
        const customer = await addCustomer(db, {
          name: `Shop ${randomUUID().slice(0, 8)}`,
          credits: 7,
          creditCost: 1n,
        });
        const { apiKey } = await issueKey(db, { customerId: customer.customerId });
        const answer = await customerFrom(till, apiKey);
        assert.equal(answer.status, 200, JSON.stringify(answer));
        assert.equal((answer.body as { credits: number }).credits, 7);
      });

      test('when unknown keys with one prefix fail from many addresses, then that prefix is 429 everywhere, a valid key with the same prefix is 200, and another prefix is 401', async () => {
        // The suite's valid keys start with "test-key": the attacker guesses in their family.
        for (let i = 0; i < LIMITS.perKeyPrefix; i += 1) {
          const answer = await customerFrom(`127.0.0.${40 + i}`, unknownKey('test-key-'));
          assert.equal(answer.status, 401, `failure ${i}: ${JSON.stringify(answer)}`);
        }
        const fresh = '127.0.0.60';
        const limited = await customerFrom(fresh, unknownKey('test-key-'));
        assert.equal(limited.status, 429, JSON.stringify(limited));
        const valid = await customerFrom(fresh, SUITE_KEYS.shopA);
        assert.equal(valid.status, 200, JSON.stringify(valid));
        const other = await customerFrom(fresh, unknownKey('another-'));
        assert.equal(other.status, 401, JSON.stringify(other));
      });

      test('when a known key is revoked while its address is limited, then it is 401 at once', async () => {
        const till = '127.0.0.24';
        const customer = await addCustomer(db, {
          name: `Shop ${randomUUID().slice(0, 8)}`,
          credits: 1,
          creditCost: 1n,
        });
        const { apiKey } = await issueKey(db, { customerId: customer.customerId });
        assert.equal((await customerFrom(till, apiKey)).status, 200);
        for (let i = 0; i < LIMITS.perAddress; i += 1) await customerFrom(till, unknownKey());
        await revokeKey(db, apiKey);
        const answer = await customerFrom(till, apiKey);
        assert.equal(answer.status, 401, JSON.stringify(answer));
        assert.deepEqual(answer.body, { error: 'Unauthorized: invalid api key' });
      });
    });

    describe('one round trip per call', () => {
      // A second server on the same database, watching what it sends: statements sent alone,
      // and transactions (BEGIN and COMMIT each a round trip of their own).
      let counted: LedgerServer;
      const sent: Unit[] = [];
      before(async () => {
        const counting = watchedDatabase(server.db, { unit: (unit) => sent.push(unit) });
        counted = await startLedgerServer({ database: counting, log: { error: () => undefined } });
      });
      after(() => counted?.close());

      /** A new shop with its key, through the counting server, its key used once. */
      async function countedShop(credits: number) {
        const customer = await addCustomer(db, {
          name: `Shop ${randomUUID().slice(0, 8)}`,
          credits,
          creditCost: 1n,
        });
        const { apiKey } = await issueKey(db, { customerId: customer.customerId });
        const shop = new LedgerClient(counted.url, apiKey);
        assert.equal((await shop.customer()).status, 200);
        return { shop, apiKey };
      }

      /** What the server sent for one HTTP call: each statement, BEGIN and COMMIT. */
      async function sentFor(
        work: () => Promise<Answer>,
      ): Promise<{ answer: Answer; sql: string[] }> {
        sent.length = 0;
        const answer = await work();
        const sql = sent.flatMap((unit) => {
          const statements = unit.statements.map((statement) => statement.sql);
          return unit.transaction ? ['BEGIN', ...statements, 'COMMIT'] : statements;
        });
        return { answer, sql };
      }

      test('when a shop whose key called before creates, posts and voids, then each call is one statement to the database', async () => {
        const { shop } = await countedShop(100);
        const first = randomUUID();
        const second = randomUUID();
        for (const [what, work, status] of [
          ['create', () => shop.create(recharge(3, first)), 201],
          ['post', () => shop.resolve(first, 'post'), 200],
          ['create', () => shop.create(recharge(4, second)), 201],
          ['void', () => shop.resolve(second, 'void'), 200],
          ['replayed post', () => shop.resolve(first, 'post'), 200],
          ['refused void', () => shop.resolve(first, 'void'), 409],
        ] as const) {
          const { answer, sql } = await sentFor(work);
          assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
          assert.equal(sql.length, 1, `${what} sent ${JSON.stringify(sql)}`);
          assert.match(sql[0] ?? '', /^SELECT \* FROM ledger_(create|resolve)_movement\(/);
        }
        assert.equal(await poolOf(shop), 100 - 3);
      });

      test('when a key that called before is revoked, then its next create, post and void are 401 and change nothing', async () => {
        const { shop, apiKey } = await countedShop(100);
        const pending = randomUUID();
        assert.equal((await shop.create(recharge(5, pending))).status, 201);
        await revokeKey(db, apiKey);
        for (const answer of [
          await shop.create(recharge(5)),
          await shop.resolve(pending, 'post'),
          await shop.resolve(pending, 'void'),
          await shop.post('/v1/movements', { id: 'not a uuid' }),
        ]) {
          assert.equal(answer.status, 401, JSON.stringify(answer.body));
          assert.deepEqual(answer.body, { error: 'Unauthorized: invalid api key' });
        }
        const { rows } = await db.query<{ state: string; credits: number | string }>(
          `SELECT m.state, c.credits FROM movements m JOIN customers c ON c.id = m.customer_id
           WHERE m.id = $1`,
          [pending],
        );
        assert.deepEqual(
          rows.map((row) => ({ state: row.state, credits: Number(row.credits) })),
          [{ state: 'pending', credits: 95 }],
        );
      });

      test('when a key that called before sends a malformed body, then it is 400 InvalidMovement, after its key was checked', async () => {
        const { shop } = await countedShop(10);
        const { answer, sql } = await sentFor(() =>
          shop.post('/v1/movements', {
            id: 'not a uuid',
            kind: 'recharge',
            cardId: CARD,
            credits: 1,
          }),
        );
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        assert.equal(answer.body.error, 'InvalidMovement');
        assert.ok(
          sql.some((statement) => statement.includes('FROM api_keys')),
          `the key was looked up: ${JSON.stringify(sql)}`,
        );
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
        const result = await applySeed(db, suiteSeed);
        assert.equal(result.keysAdded, 0);
        assert.ok(result.customers.every((customer) => !customer.created));
        assert.deepEqual((await base.withKey(SUITE_KEYS.shopB).customer()).body, before.body);
      });

      test('when a seeded shop names its time zone, then its days are counted in it; a zone the database does not know is InvalidSeed and nothing is made', async () => {
        const name = `Zoned shop ${randomUUID().slice(0, 8)}`;
        const seed = { customers: [{ name, credits: 0, creditCost: '0.50' }] };
        const made = await applySeed(db, {
          customers: [{ ...seed.customers[0]!, timeZone: 'Europe/Brussels' }],
        });
        const zone = await db.query<{ time_zone: string }>(
          'SELECT time_zone FROM customers WHERE id = $1',
          [made.customers[0]?.customerId],
        );
        assert.equal(zone.rows[0]?.time_zone, 'Europe/Brussels');
        const other = `Unzoned shop ${randomUUID().slice(0, 8)}`;
        await assert.rejects(
          applySeed(db, {
            customers: [{ name: other, credits: 0, creditCost: '0.50', timeZone: 'Mars/Olympus' }],
          }),
          (error: Error & { code?: string }) => {
            assert.equal(error.code, 'InvalidSeed');
            assert.match(
              error.message,
              /customers\.0\.timeZone: "Mars\/Olympus" is not a time zone/,
            );
            return true;
          },
        );
        const none = await db.query('SELECT 1 FROM customers WHERE name = $1', [other]);
        assert.equal(none.rows.length, 0);
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
        await topUp(db, customerId, 5, {
          actor: { kind: 'cli', user: 'test' },
          reason: 'a test top-up',
        });
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
        await importCard(shop, 25);
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
        await importCard(shop, 25);
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
        await importCard(shop, 25);
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
        await importCard(shop, 10);
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

    describe('tombstones: a void of an unknown id', () => {
      const expectAnswer = (
        answer: { status: number; body: unknown },
        status: number,
        body: unknown,
        what: string,
      ) =>
        assert.deepEqual(
          { status: answer.status, body: answer.body },
          { status, body },
          `${what}: got ${answer.status} ${JSON.stringify(answer.body)}`,
        );

      test('when an unknown id is voided and then created, then the create is 409 MovementAlreadyVoided, every time, and nothing is reserved', async () => {
        const shop = await newShop(100);
        const id = randomUUID();
        expectAnswer(
          await shop.resolve(id, 'void'),
          404,
          { error: 'MovementNotFound' },
          'the void',
        );
        for (const attempt of [1, 2]) {
          expectAnswer(
            await shop.create(recharge(10, id)),
            409,
            { error: 'MovementAlreadyVoided' },
            `create #${attempt}`,
          );
        }
        expectAnswer(
          await shop.resolve(id, 'void'),
          404,
          { error: 'MovementNotFound' },
          'the void again',
        );
        expectAnswer(await shop.movement(id), 404, { error: 'MovementNotFound' }, 'the get');
        assert.equal(await poolOf(shop), 100);
        assert.deepEqual((await shop.get('/v1/movements?state=pending')).body, { movements: [] });
      });

      test("when another shop voids an id and then the owner creates it, then the owner's create is refused as a conflict", async () => {
        const voider = await newShop(100);
        const owner = await newShop(100);
        const id = randomUUID();
        await voider.resolve(id, 'void');
        expectAnswer(
          await owner.create(recharge(10, id)),
          409,
          { error: 'MovementIdConflict' },
          'the create',
        );
        assert.equal(await poolOf(owner), 100);
      });

      test("when another shop voids an existing movement's id, then no tombstone is left and the owner can still post it", async () => {
        const owner = await newShop(100);
        const other = await newShop(100);
        const id = randomUUID();
        await owner.create(recharge(10, id));
        expectAnswer(await other.resolve(id, 'void'), 404, { error: 'MovementNotFound' }, 'void');
        assert.equal((await owner.resolve(id, 'post')).status, 200);
        assert.equal(await poolOf(owner), 90);
      });

      test('when creates and voids of the same new ids race, then each id ends either voided-before-created (no reservation) or created and voided (released)', async () => {
        const shop = await newShop(1000);
        const ids = Array.from({ length: 10 }, () => randomUUID());
        await Promise.all(
          ids.flatMap((id) => [shop.create(recharge(10, id)), shop.resolve(id, 'void')]),
        );
        for (const id of ids) {
          const answer = await shop.movement(id);
          assert.ok(
            answer.status === 404 ||
              answer.body.state === 'voided' ||
              answer.body.state === 'pending',
            `${id}: ${answer.status} ${JSON.stringify(answer.body)}`,
          );
          // A movement that got created after all must be voidable: the void that lost the race
          // answered 404 only if it came first, and then the create was refused.
          if (answer.status === 200 && answer.body.state === 'pending') {
            assert.equal((await shop.resolve(id, 'void')).status, 200);
          }
        }
        assert.equal(await poolOf(shop), 1000, 'every reservation was released');
        assert.deepEqual((await shop.get('/v1/movements?state=pending')).body, { movements: [] });
      });
    });

    describe('pending list for reconciliation', () => {
      test('when a shop lists its pending movements, then it sees only its own, and resolved or tombstoned ones never', async () => {
        const shop = await newShop(100);
        const other = await newShop(100);
        const kept = randomUUID();
        const posted = randomUUID();
        await shop.create(recharge(1, kept));
        await shop.create(recharge(1, posted));
        await shop.resolve(posted, 'post');
        await shop.resolve(randomUUID(), 'void');
        await other.create(recharge(1));
        const answer = await shop.get('/v1/movements?state=pending');
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.deepEqual(
          answer.body.movements.map((movement: { id: string; state: string }) => [
            movement.id,
            movement.state,
          ]),
          [[kept, 'pending']],
        );
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
        await importCard(shop, 5);
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

      test('when movements carry a POS reference, then each keeps it and the reference lists every one of the shop’s, newest first', async () => {
        const shop = await newShop(100);
        const ids = [randomUUID(), randomUUID(), randomUUID()];
        await shop.create({ ...recharge(1, ids[0]), reference: 'sale 7/2026' });
        await shop.create({ ...recharge(2, ids[1]), reference: 'sale 8/2026' });
        const created = await shop.create({ ...recharge(3, ids[2]), reference: 'sale 7/2026' });
        assert.equal(created.body.reference, 'sale 7/2026', JSON.stringify(created.body));
        // The same id again with the same request: replayed, reference and all.
        const again = await shop.create({ ...recharge(3, ids[2]), reference: 'sale 7/2026' });
        assert.deepEqual([again.status, again.body.reference], [200, 'sale 7/2026']);
        await shop.resolve(ids[2] ?? '', 'post');
        const found = await shop.get(
          `/v1/movements?reference=${encodeURIComponent('sale 7/2026')}`,
        );
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.deepEqual(
          found.body.movements.map((m: { id: string; reference: string; state: string }) => [
            m.id,
            m.reference,
            m.state,
          ]),
          [
            [ids[2], 'sale 7/2026', 'posted'],
            [ids[0], 'sale 7/2026', 'pending'],
          ],
        );
        assert.equal((await shop.movement(ids[1] ?? '')).body.reference, 'sale 8/2026');
        assert.equal((await shop.create(recharge(1))).body.reference, null);
        const other = await newShop(1);
        assert.deepEqual((await other.get('/v1/movements?reference=sale%207%2F2026')).body, {
          movements: [],
        });
      });

      test('when the list query is invalid, then it is 400 InvalidQuery naming the parameter', async () => {
        const shop = base.withKey(SUITE_KEYS.shopA);
        for (const [query, field] of [
          ['state=done', 'state'],
          ['limit=0', 'limit'],
          ['limit=1001', 'limit'],
          ['limit=abc', 'limit'],
          ['reference=', 'reference'],
          [`reference=${'x'.repeat(81)}`, 'reference'],
          ['reference=%20sale', 'reference'],
        ] as const) {
          const answer = await shop.get(`/v1/movements?${query}`);
          assert.equal(answer.status, 400, query);
          assert.equal(answer.body.error, 'InvalidQuery');
          assert.match(answer.body.detail, new RegExp(`^${field}:`));
        }
      });
    });

    describe('tills', () => {
      const TILL_A = '1a1a1a1a-0000-4000-8000-00000000000a';
      const TILL_B = '1a1a1a1a-0000-4000-8000-00000000000b';
      let cardSerial = 0x100;
      /** A card no other test moved. */
      const freshCard = () => `05${(cardSerial++).toString(16).toUpperCase().padStart(6, '0')}`;
      let generation = 0;
      /** A till's movement, planned from a card state no earlier one was planned from. */
      const atTill = (
        tillId: string,
        kind: 'recharge' | 'discharge',
        cardId: string,
        credits: number,
        id = randomUUID(),
      ) => {
        generation += 1;
        return { id, kind, cardId, credits, tillId, cardBefore: `classic:v1:0:${generation}:0` };
      };

      async function posted(shop: LedgerClient, movement: Record<string, unknown>) {
        const created = await shop.create(movement);
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const answer = await shop.resolve(movement.id as string, 'post', {
          tillId: movement.tillId as string,
        });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body;
      }

      test('when a till makes a movement, then it names the till and keeps cardBefore, and the pending list can be asked per till', async () => {
        const shop = await newShop(100);
        const card = freshCard();
        const mine = atTill(TILL_A, 'recharge', card, 5);
        const created = await shop.create(mine);
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal(created.body.tillId, TILL_A);
        assert.equal(created.body.cardBefore, mine.cardBefore);
        assert.equal(created.body.compensates, null);
        const other = await shop.create(atTill(TILL_B, 'recharge', freshCard(), 5));
        assert.equal(other.status, 201, JSON.stringify(other.body));

        const ofA = await shop.get(`/v1/movements?state=pending&till=${TILL_A}`);
        assert.equal(ofA.status, 200, JSON.stringify(ofA.body));
        assert.deepEqual(
          ofA.body.movements.map((movement: { id: string }) => movement.id),
          [mine.id],
        );
        const all = await shop.get('/v1/movements?state=pending');
        assert.equal(all.body.movements.length, 2);
        const bad = await shop.get('/v1/movements?till=a');
        assert.equal(bad.status, 400);
        assert.deepEqual(bad.body, { error: 'InvalidQuery', detail: 'till: must be a UUID' });
      });

      test('when a till names itself on a create, then the shop lists it among its tills, once', async () => {
        const shop = await newShop(100);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        const tillsOf = async () =>
          (
            await db.query<{ id: string }>(
              'SELECT id FROM tills WHERE customer_id = $1 ORDER BY id',
              [customerId],
            )
          ).rows.map((row) => row.id);
        assert.deepEqual(await tillsOf(), []);
        await posted(shop, atTill(TILL_A, 'recharge', freshCard(), 5));
        await posted(shop, atTill(TILL_A, 'recharge', freshCard(), 5));
        await posted(shop, atTill(TILL_B, 'recharge', freshCard(), 5));
        assert.deepEqual(await tillsOf(), [TILL_A, TILL_B]);
      });

      test('when a post says when its card write happened, then the movement keeps that occurredAt; without it, the time of the post; a void and a pending movement have none', async () => {
        const shop = await newShop(100);
        const told = atTill(TILL_A, 'recharge', freshCard(), 5);
        assert.equal((await shop.create(told)).status, 201);
        const occurredAt = '2026-03-29T00:59:59.500Z';
        const post = await shop.resolve(told.id, 'post', { tillId: TILL_A, occurredAt });
        assert.equal(post.status, 200, JSON.stringify(post.body));
        assert.equal(post.body.occurredAt, occurredAt);
        // A replay with another time changes nothing; an offset is stored as the same instant.
        const again = await shop.resolve(told.id, 'post', {
          tillId: TILL_A,
          occurredAt: '2026-03-29T02:00:00+02:00',
        });
        assert.equal(again.status, 200, JSON.stringify(again.body));
        assert.equal(again.body.occurredAt, occurredAt);
        assert.equal((await shop.get(`/v1/movements/${told.id}`)).body.occurredAt, occurredAt);

        const untold = atTill(TILL_A, 'recharge', freshCard(), 5);
        const pending = await shop.create(untold);
        assert.equal(pending.body.occurredAt, null);
        const posted = await shop.resolve(untold.id, 'post', { tillId: TILL_A });
        assert.equal(posted.body.occurredAt, posted.body.resolvedAt);

        const voided = atTill(TILL_A, 'recharge', freshCard(), 5);
        assert.equal((await shop.create(voided)).status, 201);
        const void_ = await shop.resolve(voided.id, 'void', { tillId: TILL_A, occurredAt });
        assert.equal(void_.status, 200, JSON.stringify(void_.body));
        assert.equal(void_.body.occurredAt, null);
      });

      test('when a post names a time that is not an ISO 8601 timestamp with its offset, then it is 400 InvalidMovement and the movement stays pending', async () => {
        const shop = await newShop(100);
        const movement = atTill(TILL_A, 'recharge', freshCard(), 5);
        assert.equal((await shop.create(movement)).status, 201);
        for (const occurredAt of [
          '2026-03-29T00:59:59',
          '2026-03-29',
          'yesterday',
          1774745999000,
          '1970-01-01T00:00:00Z',
          '2026-02-30T10:00:00Z',
        ]) {
          const answer = await shop.resolve(movement.id, 'post', { tillId: TILL_A, occurredAt });
          assert.equal(answer.status, 400, `${occurredAt}: ${JSON.stringify(answer.body)}`);
          assert.deepEqual(answer.body, {
            error: 'InvalidMovement',
            detail: 'occurredAt: must be an ISO 8601 timestamp with its offset, from 2000 to 2199',
          });
        }
        assert.equal((await shop.get(`/v1/movements/${movement.id}`)).body.state, 'pending');
      });

      test("when another till's movement of the card is pending, then a till's create for that card is 409 CardMovementPending naming it, the same till's is not, and after its resolution it goes through", async () => {
        const shop = await newShop(100);
        const card = freshCard();
        await posted(shop, atTill(TILL_A, 'recharge', card, 40));
        const payout = atTill(TILL_A, 'discharge', card, 40);
        assert.equal((await shop.create(payout)).status, 201);
        const pool = await poolOf(shop);

        const atB = await shop.create(atTill(TILL_B, 'recharge', card, 5));
        assert.equal(atB.status, 409, JSON.stringify(atB.body));
        assert.deepEqual(atB.body, {
          error: 'CardMovementPending',
          detail: `movement ${payout.id} of till ${TILL_A} is pending on card ${card}`,
        });
        // The till that made it may go on: it decides its own movements first.
        assert.equal((await shop.create(atTill(TILL_A, 'recharge', card, 5))).status, 201);
        // A worker that names no till (before tills) is not held back, but holds tills back.
        assert.equal((await shop.create({ ...recharge(1), cardId: card })).status, 201);
        assert.equal((await shop.create(atTill(TILL_A, 'recharge', card, 1))).status, 409);
        assert.equal(await poolOf(shop), pool - 6);

        const post = await shop.resolve(payout.id, 'post', { tillId: TILL_A });
        assert.equal(post.status, 200, JSON.stringify(post.body));
        assert.equal(post.body.resolvedByTill, TILL_A);
        // Still held: the other pending movements of the card are not B's.
        for (const pending of (await shop.get('/v1/movements?state=pending')).body.movements) {
          assert.equal((await shop.resolve(pending.id, 'void')).status, 200);
        }
        const later = await shop.create(atTill(TILL_B, 'recharge', card, 5));
        assert.equal(later.status, 201, JSON.stringify(later.body));
        assert.ok((await checkLedger(db)).ok);
      });

      test("when a till posts or voids another till's movement without evidence, then it is 409 MovementOfAnotherTill and nothing changes; with evidence it is resolved, and who and why are kept", async () => {
        const shop = await newShop(100);
        const card = freshCard();
        const movement = atTill(TILL_A, 'recharge', card, 10);
        assert.equal((await shop.create(movement)).status, 201);
        for (const action of ['post', 'void'] as const) {
          const refused = await shop.resolve(movement.id, action, { tillId: TILL_B });
          assert.equal(refused.status, 409, JSON.stringify(refused.body));
          assert.deepEqual(refused.body, {
            error: 'MovementOfAnotherTill',
            detail: `movement ${movement.id} was made by till ${TILL_A}`,
          });
        }
        assert.equal((await shop.movement(movement.id)).body.state, 'pending');
        assert.equal(await poolOf(shop), 90);

        const evidence = `card ${card} read at till ${TILL_B}: the write did not land`;
        const voided = await shop.resolve(movement.id, 'void', { tillId: TILL_B, evidence });
        assert.equal(voided.status, 200, JSON.stringify(voided.body));
        assert.equal(voided.body.state, 'voided');
        assert.equal(voided.body.resolvedByTill, TILL_B);
        assert.equal(voided.body.evidence, evidence);
        assert.equal(await poolOf(shop), 100);
        // The void is final: the owner's late post is refused as usual.
        const late = await shop.resolve(movement.id, 'post', { tillId: TILL_A });
        assert.deepEqual(late.body, { error: 'MovementAlreadyVoided' });
      });

      test('when a movement id is replayed from another till, then it is 409 MovementIdConflict', async () => {
        const shop = await newShop(100);
        const movement = atTill(TILL_A, 'recharge', freshCard(), 10);
        assert.equal((await shop.create(movement)).status, 201);
        assert.equal((await shop.create(movement)).status, 200);
        const other = await shop.create({ ...movement, tillId: TILL_B });
        assert.deepEqual(other.body, { error: 'MovementIdConflict' });
        const none = await shop.create({ ...movement, tillId: undefined });
        assert.deepEqual(none.body, { error: 'MovementIdConflict' });
      });

      test("when a create comes planned from the card state the card's latest posted movement was planned from, then 409 CardStateMovedOn and nothing changes; once that one is compensated, or a later one posted, the state is free", async () => {
        const shop = await newShop(100);
        const card = freshCard();
        const before = 'classic:v1:0:7:1';
        const first = { ...atTill(TILL_A, 'recharge', card, 10), cardBefore: before };
        await posted(shop, first);
        // A create from another till that reached the ledger late, planned from the same read.
        const late = { ...atTill(TILL_B, 'recharge', card, 10), cardBefore: before };
        const refused = await shop.create(late);
        assert.equal(refused.status, 409, JSON.stringify(refused.body));
        assert.deepEqual(refused.body, {
          error: 'CardStateMovedOn',
          detail: `card ${card}: movement ${first.id}, posted, was planned from the same card state`,
        });
        assert.equal((await shop.movement(late.id)).status, 404);
        assert.equal(await poolOf(shop), 90);
        // Planned from another state, it is taken; so is one without a card state.
        const next = { ...atTill(TILL_B, 'recharge', card, 5), cardBefore: 'classic:v1:10:8:0' };
        await posted(shop, next);
        // The latest posted one counts: the first's state may come back (a generation wrap).
        const again = { ...atTill(TILL_A, 'recharge', card, 1), cardBefore: before };
        await posted(shop, again);
        // A posted movement set right by a compensation did not move the card on.
        const fix = { ...atTill(TILL_A, 'discharge', card, 1), compensates: again.id };
        await posted(shop, { ...fix, cardBefore: undefined });
        const retried = { ...atTill(TILL_A, 'recharge', card, 1), cardBefore: before };
        assert.equal((await shop.create(retried)).status, 201);
        assert.ok((await checkLedger(db)).ok);
      });

      describe('an operator deciding without the card', () => {
        test("when an operator voids a payout without a till, then its card is held for every till, its own too, until a till confirms from the card, and the card's word is kept", async () => {
          const shop = await newShop(100);
          const card = freshCard();
          await posted(shop, atTill(TILL_A, 'recharge', card, 40));
          const payout = atTill(TILL_A, 'discharge', card, 40);
          assert.equal((await shop.create(payout)).status, 201);
          const voided = await shop.resolve(payout.id, 'void', { evidence: 'card reported lost' });
          assert.equal(voided.status, 200, JSON.stringify(voided.body));
          assert.equal(voided.body.awaitsCard, true);
          assert.equal(voided.body.cardEvidence, null);
          assert.equal((await cardOf(shop, card)).credits, 40);

          for (const till of [TILL_B, TILL_A]) {
            const held = await shop.create(atTill(till, 'recharge', card, 5));
            assert.equal(held.status, 409, JSON.stringify(held.body));
            assert.deepEqual(held.body, {
              error: 'CardMovementPending',
              detail: `movement ${payout.id} of till ${TILL_A}, voided by an operator, awaits card ${card}`,
            });
          }
          // Another till without the card's word changes nothing.
          const bare = await shop.resolve(payout.id, 'void', { tillId: TILL_B });
          assert.equal(bare.body.awaitsCard, true, JSON.stringify(bare.body));
          // The other word is refused as for any resolved movement.
          const evidence = `card ${card} read at till ${TILL_B}: it does not hold the write`;
          const other = await shop.resolve(payout.id, 'post', { tillId: TILL_B, evidence });
          assert.deepEqual(other.body, { error: 'MovementAlreadyVoided' });

          const confirmed = await shop.resolve(payout.id, 'void', { tillId: TILL_B, evidence });
          assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
          assert.equal(confirmed.body.awaitsCard, false);
          assert.equal(confirmed.body.cardEvidence, evidence);
          assert.equal(confirmed.body.evidence, 'card reported lost');
          assert.equal(confirmed.body.resolvedByTill, null);
          const free = await shop.create(atTill(TILL_B, 'recharge', card, 5));
          assert.equal(free.status, 201, JSON.stringify(free.body));
          assert.equal(await poolOf(shop), 55);
          assert.ok((await checkLedger(db)).ok);
        });

        test('when an operator decides without the card, then the card list names the card held and its ETag moves on, until a till confirms the word from the card or compensates it', async () => {
          const shop = await newShop(100);
          const [card, found] = [freshCard(), freshCard()];
          const list = async () => {
            const answer = await shop.get('/v1/card-list');
            assert.equal(answer.status, 200, JSON.stringify(answer.body));
            return { etag: answer.etag, held: answer.body.held as unknown[] };
          };
          await posted(shop, atTill(TILL_A, 'recharge', card, 40));
          const first = await list();
          assert.deepEqual(first.held, []);
          const payout = atTill(TILL_A, 'discharge', card, 40);
          assert.equal((await shop.create(payout)).status, 201);
          // Pending, it holds the card for other tills' creates, not in the list.
          assert.deepEqual(await list(), first);
          assert.equal((await shop.resolve(payout.id, 'void', { evidence: 'lost' })).status, 200);
          const held = await list();
          assert.notEqual(held.etag, first.etag);
          assert.deepEqual(held.held, [{ cardId: card, movementId: payout.id, state: 'voided' }]);
          // Another till without the card's word changes nothing, the list neither.
          assert.equal((await shop.resolve(payout.id, 'void', { tillId: TILL_B })).status, 200);
          assert.deepEqual(await list(), held);
          const evidence = `card ${card} read at till ${TILL_B}: it does not hold the write`;
          assert.equal(
            (await shop.resolve(payout.id, 'void', { tillId: TILL_B, evidence })).status,
            200,
          );
          const confirmed = await list();
          assert.notEqual(confirmed.etag, held.etag);
          assert.deepEqual(confirmed.held, []);

          // A recharge voided without its card, which the card turns out to hold: compensated.
          const recharge = atTill(TILL_A, 'recharge', found, 10);
          assert.equal((await shop.create(recharge)).status, 201);
          assert.equal((await shop.resolve(recharge.id, 'void', { evidence: 'lost' })).status, 200);
          const voided = await list();
          assert.deepEqual(voided.held, [
            { cardId: found, movementId: recharge.id, state: 'voided' },
          ]);
          const fix = { ...atTill(TILL_B, 'recharge', found, 10), compensates: recharge.id };
          const compensated = await shop.create({ ...fix, cardBefore: undefined });
          assert.equal(compensated.status, 201, JSON.stringify(compensated.body));
          const freed = await list();
          assert.notEqual(freed.etag, voided.etag);
          assert.deepEqual(freed.held, []);
          assert.ok((await checkLedger(db)).ok);
        });

        test('when the till that made it says the same word again, then the card is free: its journal knows the write', async () => {
          const shop = await newShop(100);
          const card = freshCard();
          const recharge = atTill(TILL_A, 'recharge', card, 10);
          assert.equal((await shop.create(recharge)).status, 201);
          assert.equal(
            (await shop.resolve(recharge.id, 'post', { evidence: 'the customer has the credits' }))
              .body.awaitsCard,
            true,
          );
          const again = await shop.resolve(recharge.id, 'post', { tillId: TILL_A });
          assert.equal(again.status, 200, JSON.stringify(again.body));
          assert.equal(again.body.awaitsCard, false);
          assert.equal(again.body.cardEvidence, null);
          assert.equal((await shop.create(atTill(TILL_B, 'recharge', card, 1))).status, 201);
        });

        test('when the movement carries no card state, or is decided by a till, then nothing waits for the card', async () => {
          const shop = await newShop(100);
          const card = freshCard();
          const stateless = { ...atTill(TILL_A, 'recharge', card, 10), cardBefore: undefined };
          assert.equal((await shop.create(stateless)).status, 201);
          const voided = await shop.resolve(stateless.id, 'void', { evidence: 'card lost' });
          assert.equal(voided.body.awaitsCard, false, JSON.stringify(voided.body));
          const decidedByB = atTill(TILL_A, 'recharge', card, 10);
          assert.equal((await shop.create(decidedByB)).status, 201);
          const byB = await shop.resolve(decidedByB.id, 'void', {
            tillId: TILL_B,
            evidence: `card ${card} read at till ${TILL_B}`,
          });
          assert.equal(byB.body.awaitsCard, false, JSON.stringify(byB.body));
          assert.equal((await shop.create(atTill(TILL_B, 'recharge', card, 1))).status, 201);
        });

        test('when a till compensates it, then the card is free, and a second compensation (another till that saw the card) is 409 MovementCompensated and changes nothing', async () => {
          const shop = await newShop(100);
          const card = freshCard();
          await posted(shop, atTill(TILL_A, 'recharge', card, 40));
          const payout = atTill(TILL_A, 'discharge', card, 40);
          assert.equal((await shop.create(payout)).status, 201);
          await shop.resolve(payout.id, 'void', { evidence: 'card reported lost' });
          const fix = { ...atTill(TILL_B, 'discharge', card, 40), compensates: payout.id };
          const created = await shop.create(fix);
          assert.equal(created.status, 201, JSON.stringify(created.body));
          assert.equal((await shop.movement(payout.id)).body.awaitsCard, false);
          const twice = { ...atTill(TILL_A, 'discharge', card, 40), compensates: payout.id };
          const second = await shop.create(twice);
          assert.equal(second.status, 409, JSON.stringify(second.body));
          assert.deepEqual(second.body, {
            error: 'MovementCompensated',
            detail: `movement ${payout.id} is compensated by ${fix.id} already`,
          });
          assert.equal((await shop.movement(twice.id)).status, 404);
          // The first one's retry is still a replay.
          assert.equal((await shop.create(fix)).status, 200);
          assert.equal((await shop.resolve(fix.id, 'post', { tillId: TILL_B })).status, 200);
          assert.equal((await cardOf(shop, card)).credits, 0);
          assert.equal(await poolOf(shop), 100);
          assert.ok((await checkLedger(db)).ok);
        });

        test('when its compensation is refused, then the card is flagged and free: the conflict is for the operator', async () => {
          const shop = await newShop(10);
          const card = freshCard();
          const recharge = atTill(TILL_A, 'recharge', card, 10);
          assert.equal((await shop.create(recharge)).status, 201);
          await shop.resolve(recharge.id, 'void', { evidence: 'card reported lost' });
          await posted(shop, atTill(TILL_A, 'recharge', freshCard(), 10));
          const fix = { ...atTill(TILL_B, 'recharge', card, 10), compensates: recharge.id };
          assert.deepEqual((await shop.create(fix)).body, { error: 'NoCredits' });
          assert.equal((await shop.movement(recharge.id)).body.awaitsCard, false);
          const flags = (await cardOf(shop, card)).flags.map((flag: { kind: string }) => flag.kind);
          assert.deepEqual(flags, ['compensation-refused']);
        });
      });

      test('when a post or void body is malformed, then it is 400 InvalidMovement naming the field and nothing changes', async () => {
        const shop = await newShop(100);
        const movement = atTill(TILL_A, 'recharge', freshCard(), 10);
        assert.equal((await shop.create(movement)).status, 201);
        const cases: [unknown, string][] = [
          [{ tillId: 'x' }, 'tillId: must be a UUID'],
          [{ evidence: '' }, 'evidence: must be text of 1 to 500 characters'],
          [{ evidence: 'x'.repeat(501) }, 'evidence: must be text of 1 to 500 characters'],
          [{ reason: 'x' }, 'reason: unknown field'],
          [[], 'body: must be a JSON object'],
        ];
        for (const [body, detail] of cases) {
          const answer = await shop.post(`/v1/movements/${movement.id}/void`, body);
          assert.equal(answer.status, 400, JSON.stringify(answer.body));
          assert.deepEqual(answer.body, { error: 'InvalidMovement', detail });
        }
        assert.equal((await shop.movement(movement.id)).body.state, 'pending');
      });

      describe('compensations', () => {
        test('when a movement compensates a voided recharge whose card write landed, then it reserves like a recharge, names the voided one and is exempt from the card check', async () => {
          const shop = await newShop(100);
          const card = freshCard();
          // Without a card state, the operator's word does not hold the card (tested above).
          const lost = { ...atTill(TILL_A, 'recharge', card, 30), cardBefore: undefined };
          assert.equal((await shop.create(lost)).status, 201);
          assert.equal((await shop.resolve(lost.id, 'void', { evidence: 'operator' })).status, 200);
          const fix = {
            id: randomUUID(),
            kind: 'recharge',
            cardId: card,
            credits: 30,
            tillId: TILL_A,
            compensates: lost.id,
          };
          // A pending movement of another till does not hold it back: nothing writes the card.
          assert.equal((await shop.create(atTill(TILL_B, 'recharge', card, 1))).status, 201);
          const created = await shop.create(fix);
          assert.equal(created.status, 201, JSON.stringify(created.body));
          assert.equal(created.body.compensates, lost.id);
          assert.equal((await shop.resolve(fix.id, 'post', { tillId: TILL_A })).status, 200);
          assert.equal(await poolOf(shop), 69);
          assert.equal((await cardOf(shop, card)).credits, 30);
          assert.equal((await shop.create(fix)).status, 200);
          assert.ok((await checkLedger(db)).ok);
        });

        test("when compensates names a pending, unknown or other card's movement, then it is 422 InvalidCompensation and nothing changes", async () => {
          const shop = await newShop(100);
          const card = freshCard();
          const pending = atTill(TILL_A, 'recharge', card, 5);
          assert.equal((await shop.create(pending)).status, 201);
          const done = atTill(TILL_A, 'recharge', freshCard(), 5);
          await posted(shop, done);
          for (const compensates of [pending.id, randomUUID(), done.id]) {
            const answer = await shop.create({
              id: randomUUID(),
              kind: 'discharge',
              cardId: card,
              credits: 5,
              compensates,
            });
            assert.equal(answer.status, 422, JSON.stringify(answer.body));
            assert.equal(answer.body.error, 'InvalidCompensation');
          }
          assert.equal(await poolOf(shop), 90);
        });

        test('when a compensation is refused (no credits, or beyond the card account), then the card is flagged compensation-refused and nothing is stored', async () => {
          const shop = await newShop(10);
          const card = freshCard();
          const lost = atTill(TILL_A, 'recharge', card, 10);
          assert.equal((await shop.create(lost)).status, 201);
          assert.equal(
            (await shop.resolve(lost.id, 'void', { evidence: 'card lost' })).status,
            200,
          );
          // Spent elsewhere meanwhile: the pool is empty.
          await posted(shop, atTill(TILL_A, 'recharge', freshCard(), 10));
          const recharge = {
            id: randomUUID(),
            kind: 'recharge',
            cardId: card,
            credits: 10,
            compensates: lost.id,
          };
          const noCredits = await shop.create(recharge);
          assert.deepEqual(noCredits.body, { error: 'NoCredits' });
          const discharge = {
            id: randomUUID(),
            kind: 'discharge',
            cardId: card,
            credits: 10,
            compensates: lost.id,
          };
          const beyond = await shop.create(discharge);
          assert.deepEqual(beyond.body, { error: 'CardAccountExceeded' });
          const flags = (await cardOf(shop, card)).flags.map(
            (flag: { kind: string; movementId: string }) => [flag.kind, flag.movementId],
          );
          assert.deepEqual(flags, [
            ['compensation-refused', recharge.id],
            ['compensation-refused', discharge.id],
          ]);
          assert.equal((await shop.movement(recharge.id)).status, 404);
          assert.ok((await checkLedger(db)).ok);
        });
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
        ['an unknown kind', { id, kind: 'refill', cardId: CARD, credits: 1 }, 'kind'],
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
        [
          'a reference over 80 characters',
          { id, kind: 'recharge', cardId: CARD, credits: 1, reference: 'r'.repeat(81) },
          'reference',
        ],
        [
          'a reference with a space at its end',
          { id, kind: 'recharge', cardId: CARD, credits: 1, reference: 'sale ' },
          'reference',
        ],
        ['an array', [], 'body'],
        [
          'a till id that is not a UUID',
          { id, kind: 'recharge', cardId: CARD, credits: 1, tillId: 'till-1' },
          'tillId',
        ],
        [
          'a cardBefore of 201 characters',
          { id, kind: 'recharge', cardId: CARD, credits: 1, cardBefore: 'x'.repeat(201) },
          'cardBefore',
        ],
        [
          'a cardBefore with a space',
          { id, kind: 'recharge', cardId: CARD, credits: 1, cardBefore: 'a b' },
          'cardBefore',
        ],
        [
          'a compensation of itself',
          { id, kind: 'recharge', cardId: CARD, credits: 1, compensates: id },
          'compensates',
        ],
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

    describe('card accounts', () => {
      const discharge = (credits: number, cardId = CARD, id = randomUUID()) => ({
        id,
        kind: 'discharge',
        cardId,
        credits,
      });

      async function loadCard(shop: LedgerClient, credits: number, cardId = CARD): Promise<void> {
        const id = randomUUID();
        assert.equal((await shop.create({ ...recharge(credits, id), cardId })).status, 201);
        assert.equal((await shop.resolve(id, 'post')).status, 200);
      }

      test('when a shop discharges 2147483647 credits from a card it never loaded and posts it, then it is 422 CardAccountExceeded, nothing is stored, the pool is unchanged and the card is suspect', async () => {
        const shop = await newShop(1000);
        const id = randomUUID();
        const answer = await shop.create(discharge(2147483647, CARD, id));
        assert.equal(answer.status, 422, JSON.stringify(answer.body));
        assert.deepEqual(answer.body, { error: 'CardAccountExceeded' });
        const posted = await shop.resolve(id, 'post');
        assert.equal(posted.status, 404, JSON.stringify(posted.body));
        assert.deepEqual(posted.body, { error: 'MovementNotFound' });
        assert.equal(await poolOf(shop), 1000);

        const card = await cardOf(shop);
        assert.equal(card.cardId, CARD);
        assert.equal(card.credits, 0);
        assert.equal(card.suspect, true);
        assert.deepEqual(card.movements, []);
        assert.equal(card.flags.length, 1);
        assert.deepEqual(
          { ...card.flags[0], createdAt: undefined },
          {
            kind: 'discharge-exceeds-account',
            movementId: id,
            requestedCredits: 2147483647,
            accountCredits: 0,
            record: null,
            createdAt: undefined,
          },
        );
        // The same refused request again is refused again, and flags the card only once.
        assert.equal((await shop.create(discharge(2147483647, CARD, id))).status, 422);
        assert.equal((await cardOf(shop)).flags.length, 1);
        assert.ok((await checkLedger(db)).ok);
      });

      test('when a recharge says the card holds no more than its account and pending recharges, then it is not flagged', async () => {
        const shop = await newShop(200);
        await loadCard(shop, 30);
        // Spent offline: less than the account is normal.
        const spent = await shop.create({ ...recharge(5), cardCredits: 12 });
        assert.equal(spent.status, 201, JSON.stringify(spent.body));
        // 30 + the pending 5, which may be on the card already.
        const full = await shop.create({ ...recharge(5), cardCredits: 35 });
        assert.equal(full.status, 201, JSON.stringify(full.body));
        assert.equal((await cardOf(shop)).suspect, false);
      });

      test('when a recharge says the card holds more than the shop put on it, then it goes through and the card is flagged card-above-account', async () => {
        const shop = await newShop(200);
        await loadCard(shop, 30);
        const id = randomUUID();
        const answer = await shop.create({ ...recharge(5, id), cardCredits: 500 });
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        const card = await cardOf(shop);
        assert.equal(card.suspect, true);
        assert.deepEqual(
          { ...card.flags[0], createdAt: undefined },
          {
            kind: 'card-above-account',
            movementId: id,
            requestedCredits: 500,
            accountCredits: 30,
            record: null,
            createdAt: undefined,
          },
        );
        // A replay of the same create is the same movement, and no second flag.
        const again = await shop.create({ ...recharge(5, id), cardCredits: 500 });
        assert.equal(again.status, 200, JSON.stringify(again.body));
        assert.equal((await cardOf(shop)).flags.length, 1);
      });

      test('when such a recharge asks to be refused, then it is 422 CardAccountExceeded, nothing is reserved and the card is flagged', async () => {
        const shop = await newShop(200);
        await loadCard(shop, 30);
        const before = await poolOf(shop);
        const id = randomUUID();
        const answer = await shop.create({
          ...recharge(5, id),
          cardCredits: 31,
          refuseAboveAccount: true,
        });
        assert.equal(answer.status, 422, JSON.stringify(answer.body));
        assert.deepEqual(answer.body, { error: 'CardAccountExceeded' });
        assert.equal(await poolOf(shop), before);
        assert.equal((await shop.movement(id)).status, 404);
        const card = await cardOf(shop);
        assert.equal(card.suspect, true);
        assert.equal(card.flags[0].kind, 'card-above-account');
        const within = await shop.create({
          ...recharge(5),
          cardCredits: 30,
          refuseAboveAccount: true,
        });
        assert.equal(within.status, 201, JSON.stringify(within.body));
        assert.ok((await checkLedger(db)).ok);
      });

      test('when cardCredits or refuseAboveAccount are malformed, then 400 InvalidMovement names the field', async () => {
        const shop = await newShop(200);
        for (const [body, detail] of [
          [
            { ...recharge(1), cardCredits: -1 },
            'cardCredits: must be an integer from 0 to 2147483647',
          ],
          [
            { ...recharge(1), cardCredits: 1.5 },
            'cardCredits: must be an integer from 0 to 2147483647',
          ],
          [
            { ...recharge(1), cardCredits: '3' },
            'cardCredits: must be an integer from 0 to 2147483647',
          ],
          [{ ...discharge(1), cardCredits: 1 }, 'cardCredits: only a recharge may give it'],
          [
            { ...recharge(1), refuseAboveAccount: true },
            'refuseAboveAccount: only with cardCredits',
          ],
          [
            { ...recharge(1), cardCredits: 0, refuseAboveAccount: 'yes' },
            'refuseAboveAccount: must be true or false',
          ],
        ] as const) {
          const answer = await shop.create(body);
          assert.equal(answer.status, 400, JSON.stringify(answer.body));
          assert.deepEqual(answer.body, { error: 'InvalidMovement', detail }, JSON.stringify(body));
        }
        assert.equal(await poolOf(shop), 200);
      });

      describe("a card's newest movement record (cardRecord)", () => {
        /** A DESFire card's newest record as a till reads it. */
        const recordOf = (movementId: string, valueAfter: number, counter = 4) => ({
          counter,
          movementId,
          valueAfter,
        });
        const flagsOf = async (shop: LedgerClient, cardId = CARD) =>
          ((await cardOf(shop, cardId)).flags as { kind: string; movementId: string }[]).map(
            (flag) => [flag.kind, flag.movementId],
          );

        test('when the record explains the card (at or below its value after, naming a posted, pending or unknown movement), then nothing is flagged and the discharge goes through', async () => {
          const shop = await newShop(200);
          const last = randomUUID();
          assert.equal((await shop.create(recharge(40, last))).status, 201);
          assert.equal((await shop.resolve(last, 'post')).status, 200);
          // Spent at a machine since: below the record is normal.
          for (const movementId of [last, randomUUID()]) {
            const answer = await shop.create({
              ...recharge(5),
              cardCredits: 33,
              cardRecord: recordOf(movementId, 40),
            });
            assert.equal(answer.status, 201, JSON.stringify(answer.body));
          }
          const payout = await shop.create({
            ...discharge(40),
            cardRecord: recordOf(last, 40),
          });
          assert.equal(payout.status, 201, JSON.stringify(payout.body));
          assert.equal((await cardOf(shop)).suspect, false);
        });

        test('when a card holds more than its newest record says, then a recharge goes through flagged card-above-record, and its discharge is 422 CardRecordMismatch, flagged, even within its account', async () => {
          const shop = await newShop(500);
          const last = randomUUID();
          assert.equal((await shop.create(recharge(100, last))).status, 201);
          assert.equal((await shop.resolve(last, 'post')).status, 200);
          const record = recordOf(last, 30, 7);
          const id = randomUUID();
          const topUp = await shop.create({
            ...recharge(5, id),
            cardCredits: 35,
            cardRecord: record,
          });
          assert.equal(topUp.status, 201, JSON.stringify(topUp.body));
          const card = await cardOf(shop);
          assert.equal(card.suspect, true);
          assert.deepEqual(
            { ...card.flags[0], createdAt: undefined },
            {
              kind: 'card-above-record',
              movementId: id,
              requestedCredits: 35,
              accountCredits: null,
              record: { counter: 7, movementId: last, valueAfter: 30 },
              createdAt: undefined,
            },
          );
          const before = await poolOf(shop);
          const payoutId = randomUUID();
          const payout = await shop.create({
            ...discharge(35, CARD, payoutId),
            cardRecord: record,
          });
          assert.equal(payout.status, 422, JSON.stringify(payout.body));
          assert.deepEqual(payout.body, { error: 'CardRecordMismatch' });
          assert.equal((await shop.movement(payoutId)).status, 404);
          assert.equal(await poolOf(shop), before);
          // Refused again on a retry, with no second flag.
          assert.equal(
            (await shop.create({ ...discharge(35, CARD, payoutId), cardRecord: record })).status,
            422,
          );
          assert.deepEqual(await flagsOf(shop), [
            ['card-above-record', id],
            ['card-above-record', payoutId],
          ]);
          assert.ok((await checkLedger(db)).ok);
        });

        test('when the newest record names a movement the ledger voided, then the card is flagged record-of-voided-movement and not paid out, even within its account; once a compensation explains it, it is', async () => {
          const shop = await newShop(500);
          const loaded = randomUUID();
          assert.equal((await shop.create(recharge(200, loaded))).status, 201);
          assert.equal((await shop.resolve(loaded, 'post')).status, 200);
          // The till decided this write did not land, and voided it; its record is on the card.
          const voided = randomUUID();
          assert.equal((await shop.create(recharge(5, voided))).status, 201);
          assert.equal((await shop.resolve(voided, 'void')).status, 200);
          const record = recordOf(voided, 105);
          const topUpId = randomUUID();
          const topUp = await shop.create({
            ...recharge(1, topUpId),
            cardCredits: 105,
            cardRecord: record,
          });
          assert.equal(topUp.status, 201, JSON.stringify(topUp.body));
          const payoutId = randomUUID();
          const payout = await shop.create({
            ...discharge(105, CARD, payoutId),
            cardRecord: record,
          });
          assert.deepEqual(payout.body, { error: 'CardRecordMismatch' });
          assert.deepEqual(await flagsOf(shop), [
            ['record-of-voided-movement', topUpId],
            ['record-of-voided-movement', payoutId],
          ]);
          // The books set right (a compensating recharge of the voided one): explained.
          const fix = { ...recharge(5), compensates: voided };
          assert.equal((await shop.create(fix)).status, 201);
          assert.equal((await shop.resolve(fix.id, 'post')).status, 200);
          assert.equal((await shop.resolve(topUpId, 'void')).status, 200);
          const settled = await shop.create({ ...discharge(105), cardRecord: record });
          assert.equal(settled.status, 201, JSON.stringify(settled.body));
          assert.equal((await flagsOf(shop)).length, 2, 'no new flag');
          assert.ok((await checkLedger(db)).ok);
        });

        test("when the voided movement waits for its card (an operator's word without it), or the record is another card's or shop's, or the movement is a compensation, then nothing is flagged", async () => {
          const shop = await newShop(500);
          const other = await newShop(500);
          const cardId = CARD_7;
          const lost = {
            ...recharge(10),
            cardId,
            tillId: randomUUID(),
            cardBefore: 'desfire:v1:0:0',
          };
          assert.equal((await shop.create(lost)).status, 201);
          assert.equal(
            (await shop.resolve(lost.id, 'void', { evidence: 'card lost' })).status,
            200,
          );
          const elsewhere = randomUUID();
          assert.equal((await other.create({ ...recharge(10, elsewhere), cardId })).status, 201);
          assert.equal((await other.resolve(elsewhere, 'void')).status, 200);
          for (const movementId of [lost.id, elsewhere]) {
            // A create that names no till: the held card does not stop it (only tills wait).
            const answer = await shop.create({
              ...recharge(1),
              cardId,
              cardCredits: 0,
              cardRecord: recordOf(movementId, 10),
            });
            assert.equal(answer.status, 201, JSON.stringify(answer.body));
          }
          const otherCard = randomUUID();
          assert.equal((await shop.create(recharge(3, otherCard))).status, 201);
          assert.equal((await shop.resolve(otherCard, 'void')).status, 200);
          const named = await shop.create({
            ...recharge(1),
            cardId,
            cardCredits: 0,
            cardRecord: recordOf(otherCard, 0),
          });
          assert.equal(named.status, 201, JSON.stringify(named.body));
          const fix = {
            ...recharge(10),
            cardId,
            compensates: lost.id,
            cardCredits: 99,
            cardRecord: recordOf(lost.id, 0),
          };
          assert.equal((await shop.create(fix)).status, 201);
          assert.deepEqual(await flagsOf(shop, cardId), []);
        });

        test('when cardRecord is malformed, then 400 InvalidMovement names the field and nothing is reserved', async () => {
          const shop = await newShop(200);
          const shape = 'cardRecord: must be { counter, movementId, valueAfter }';
          const good = recordOf(randomUUID(), 1);
          for (const [cardRecord, detail] of [
            ['x', shape],
            [null, shape],
            [[1, 2, 3], shape],
            [{ counter: 1, movementId: good.movementId }, shape],
            [{ ...good, extra: 1 }, shape],
            [
              { ...good, counter: -1 },
              'cardRecord.counter: must be an integer from 0 to 4294967295',
            ],
            [
              { ...good, counter: 4294967296 },
              'cardRecord.counter: must be an integer from 0 to 4294967295',
            ],
            [{ ...good, movementId: 'm-1' }, 'cardRecord.movementId: must be a UUID'],
            [
              { ...good, valueAfter: 2147483648 },
              'cardRecord.valueAfter: must be an integer from -2147483648 to 2147483647',
            ],
            [
              { ...good, valueAfter: 1.5 },
              'cardRecord.valueAfter: must be an integer from -2147483648 to 2147483647',
            ],
          ] as const) {
            const answer = await shop.create({ ...recharge(1), cardRecord });
            assert.equal(answer.status, 400, JSON.stringify(answer.body));
            assert.deepEqual(
              answer.body,
              { error: 'InvalidMovement', detail },
              JSON.stringify(cardRecord),
            );
          }
          assert.equal(await poolOf(shop), 200);
        });
      });

      test('when a card loaded at shop A is discharged at shop B, then shop B pays out nothing and shop A still can', async () => {
        const shopA = await newShop(100);
        const shopB = await newShop(100);
        await loadCard(shopA, 30, CARD_7);
        const atB = await shopB.create(discharge(1, CARD_7));
        assert.equal(atB.status, 422, JSON.stringify(atB.body));
        assert.deepEqual(atB.body, { error: 'CardAccountExceeded' });
        assert.equal(await poolOf(shopB), 100);
        assert.equal((await cardOf(shopB, CARD_7)).suspect, true);
        assert.equal((await cardOf(shopA, CARD_7)).suspect, false);

        const atA = await shopA.create(discharge(30, CARD_7));
        assert.equal(atA.status, 201, JSON.stringify(atA.body));
        assert.equal((await shopA.resolve(atA.body.id, 'post')).body.customerCredits, 100);
      });

      test('when recharges and discharges are posted, voided or left pending, then the account is posted recharges minus posted and pending discharges', async () => {
        const shop = await newShop(1000);
        await loadCard(shop, 50);
        const pendingRecharge = randomUUID();
        await shop.create(recharge(40, pendingRecharge));
        const voidedRecharge = randomUUID();
        await shop.create(recharge(7, voidedRecharge));
        await shop.resolve(voidedRecharge, 'void');
        assert.equal((await cardOf(shop)).credits, 50, 'only a posted recharge counts');

        const pendingDischarge = await shop.create(discharge(30));
        assert.equal(pendingDischarge.status, 201);
        assert.equal((await cardOf(shop)).credits, 20, 'a pending discharge already counts');
        const tooMuch = await shop.create(discharge(21));
        assert.equal(tooMuch.status, 422, JSON.stringify(tooMuch.body));
        assert.equal((await shop.create(discharge(20))).status, 201);
        assert.equal((await cardOf(shop)).credits, 0);

        await shop.resolve(pendingDischarge.body.id, 'void');
        assert.equal((await cardOf(shop)).credits, 30, 'a voided discharge gives its credits back');
        await shop.resolve(pendingRecharge, 'post');
        assert.equal((await cardOf(shop)).credits, 70);

        const card = await cardOf(shop);
        assert.equal(card.movements.length, 5, 'the refused discharge is not stored');
        assert.equal(card.movements[0].kind, 'discharge', 'newest first');
        assert.equal(card.flags.length, 1);
        assert.equal(card.flags[0].requestedCredits, 21);
        assert.equal(card.flags[0].accountCredits, 20);
        assert.ok((await checkLedger(db)).ok);
      });

      test('when a discharge that emptied the account is sent again with its id, then it is replayed (200), not refused', async () => {
        const shop = await newShop(100);
        await loadCard(shop, 10);
        const body = discharge(10);
        const first = await shop.create(body);
        assert.equal(first.status, 201);
        const again = await shop.create(body);
        assert.equal(again.status, 200, JSON.stringify(again.body));
        assert.deepEqual(again.body, first.body);
        assert.equal((await cardOf(shop)).suspect, false);
      });

      test('when 20 discharges of 5 race on a card account of 50, then exactly 10 are taken and 10 refused', async () => {
        const shop = await newShop(100);
        await loadCard(shop, 50);
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => shop.create(discharge(5))),
        );
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(10).fill(422)]);
        const card = await cardOf(shop);
        assert.equal(card.credits, 0);
        assert.equal(card.flags.length, 10);
        assert.ok((await checkLedger(db)).ok);
      });

      test('when cards are imported, then they discharge up to their imported credits, the import takes nothing from the pool, and a second run changes nothing', async () => {
        const shop = await newShop(100);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        const lines = [
          { cardId: CARD, credits: 40 },
          { cardId: CARD_7, credits: 0 },
        ];
        assert.deepEqual(await importCards(db, customerId, lines), {
          imported: 2,
          unchanged: 0,
        });
        assert.deepEqual(await importCards(db, customerId, lines), {
          imported: 0,
          unchanged: 2,
        });
        assert.equal(await poolOf(shop), 100);
        const card = await cardOf(shop);
        assert.equal(card.credits, 40);
        assert.equal(card.importedCredits, 40);

        assert.equal((await shop.create(discharge(41))).status, 422);
        const paid = await shop.create(discharge(40));
        assert.equal(paid.status, 201);
        assert.equal((await shop.resolve(paid.body.id, 'post')).body.customerCredits, 140);
        assert.equal((await shop.create(discharge(1, CARD_7))).status, 422);
        // Imported once: running the file again after the card was used changes nothing.
        assert.deepEqual(await importCards(db, customerId, lines), {
          imported: 0,
          unchanged: 2,
        });
        assert.equal((await cardOf(shop)).credits, 0);
        assert.ok((await checkLedger(db)).ok);
      });

      test('when an import names a card imported with other credits or one with movements, then it is CardImportConflict and nothing is imported', async () => {
        const shop = await newShop(100);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        await importCards(db, customerId, [{ cardId: CARD, credits: 10 }]);
        await loadCard(shop, 5, CARD_7);
        const fresh = '0A0B0C0D';
        await assert.rejects(
          importCards(db, customerId, [
            { cardId: fresh, credits: 3 },
            { cardId: CARD, credits: 11 },
          ]),
          (error: Error & { code?: string }) =>
            error.code === 'CardImportConflict' && error.message.includes(CARD),
        );
        await assert.rejects(
          importCards(db, customerId, [{ cardId: CARD_7, credits: 5 }]),
          (error: Error & { code?: string }) =>
            error.code === 'CardImportConflict' && error.message.includes('movements'),
        );
        assert.equal((await cardOf(shop, fresh)).credits, 0);
        assert.equal((await cardOf(shop, fresh)).importedCredits, null);
        assert.equal((await cardOf(shop)).credits, 10);
        assert.equal((await cardOf(shop, CARD_7)).credits, 5);
      });

      test('when a card id in the path is malformed, then it is 400 InvalidCardId; without a key, 401', async () => {
        const shop = base.withKey(SUITE_KEYS.shopA);
        for (const cardId of ['04a1b2c3', '04A1B2C3D4', 'nope']) {
          const answer = await shop.get(`/v1/cards/${cardId}`);
          assert.equal(answer.status, 400, cardId);
          assert.deepEqual(answer.body, {
            error: 'InvalidCardId',
            detail: 'cardId: must be 8 or 14 uppercase hexadecimal characters',
          });
        }
        assert.equal((await base.get(`/v1/cards/${CARD}`)).status, 401);
      });

      test('when a card account would go negative or is changed behind the ledger, then the database refuses it or the check reports it', async () => {
        const shop = await newShop(10);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        await importCard(shop, 3, CARD_7);
        await assert.rejects(
          db.query(
            'UPDATE card_accounts SET credits = -1 WHERE customer_id = $1 AND card_id = $2',
            [customerId, CARD_7],
          ),
          /card_accounts_credits_non_negative/,
        );
        const sql = `UPDATE card_accounts SET credits = credits + $3 WHERE customer_id = $1 AND card_id = $2`;
        await db.query(sql, [customerId, CARD_7, 1]);
        try {
          const report = await checkLedger(db);
          assert.equal(report.ok, false);
          assert.ok(
            report.problems.some((problem) =>
              problem.includes(`card ${CARD_7} of customer ${customerId}`),
            ),
            report.problems.join('\n'),
          );
        } finally {
          await db.query(sql, [customerId, CARD_7, -1]);
        }
        assert.ok((await checkLedger(db)).ok);
      });
    });

    describe('till heartbeats', () => {
      const heartbeat = (overrides: Record<string, unknown> = {}) => ({
        version: '2.1.0',
        reader: { state: 'ready', name: 'ACS ACR122U PICC Interface 00 00', problem: null },
        pendingMovements: 0,
        waitingMovements: 0,
        ...overrides,
      });

      test('when a till sends its heartbeat, then the ledger keeps what it said, adds the till when new, and answers the till as it knows it (its name for the tray)', async () => {
        const shop = await newShop(0);
        const tillId = randomUUID();
        const first = await shop.post(`/v1/tills/${tillId}/heartbeat`, heartbeat());
        assert.equal(first.status, 200, JSON.stringify(first.body));
        assert.deepEqual(
          { ...first.body, firstSeenAt: 'x', lastSeenAt: 'y' },
          {
            tillId,
            name: null,
            firstSeenAt: 'x',
            lastSeenAt: 'y',
            version: '2.1.0',
            reader: { state: 'ready', name: 'ACS ACR122U PICC Interface 00 00', problem: null },
            pendingMovements: 0,
            waitingMovements: 0,
            float: null,
          },
        );
        const { customerId } = (await shop.customer()).body as { customerId: string };
        await db.query('UPDATE tills SET name = $3 WHERE customer_id = $1 AND id = $2', [
          customerId,
          tillId,
          'front counter',
        ]);
        const float = {
          credits: 400,
          unreportedMovements: 2,
          unreportedCredits: 30,
          offlineSince: null,
        };
        const second = await shop.post(
          `/v1/tills/${tillId.toUpperCase()}/heartbeat`,
          heartbeat({
            reader: { state: 'unavailable', name: null, problem: 'service-stopped' },
            pendingMovements: 3,
            waitingMovements: 1,
            float,
          }),
        );
        assert.equal(second.status, 200, JSON.stringify(second.body));
        assert.equal(second.body.name, 'front counter');
        assert.equal(second.body.firstSeenAt, first.body.firstSeenAt);
        assert.ok(second.body.lastSeenAt >= first.body.lastSeenAt);
        assert.deepEqual(second.body.reader, {
          state: 'unavailable',
          name: null,
          problem: 'service-stopped',
        });
        assert.deepEqual([second.body.pendingMovements, second.body.waitingMovements], [3, 1]);
        assert.deepEqual(second.body.float, float);
      });

      test('when a heartbeat is malformed, then it is 400 InvalidHeartbeat naming the field and nothing is kept', async () => {
        const shop = await newShop(0);
        const tillId = randomUUID();
        for (const [body, detail] of [
          [{ ...heartbeat(), version: '' }, 'version: must be 1 to 40 visible ASCII characters'],
          [
            { ...heartbeat(), reader: { state: 'gone', name: null, problem: null } },
            'reader.state: must be one of ready, no-reader, unavailable, stopped',
          ],
          [
            { ...heartbeat(), pendingMovements: -1 },
            'pendingMovements: must be an integer from 0 to 1000000',
          ],
          [
            { ...heartbeat(), waitingMovements: 1.5 },
            'waitingMovements: must be an integer from 0 to 1000000',
          ],
          [
            { ...heartbeat(), float: { credits: 1 } },
            'float.unreportedMovements: must be an integer from 0 to 1000000',
          ],
          [
            {
              ...heartbeat(),
              float: {
                ...{
                  credits: 1,
                  unreportedMovements: 0,
                  unreportedCredits: 0,
                  offlineSince: 'yesterday',
                },
              },
            },
            'float.offlineSince: must be an ISO 8601 timestamp, or null',
          ],
          [{ ...heartbeat(), colour: 'red' }, '(body).colour: unknown field'],
          [[], '(body): must be an object'],
        ] as const) {
          const answer = await shop.post(`/v1/tills/${tillId}/heartbeat`, body);
          assert.equal(answer.status, 400, JSON.stringify(body));
          assert.deepEqual(answer.body, { error: 'InvalidHeartbeat', detail });
        }
        const badId = await shop.post('/v1/tills/not-a-till/heartbeat', heartbeat());
        assert.deepEqual(
          [badId.status, badId.body],
          [400, { error: 'InvalidHeartbeat', detail: 'tillId: must be a UUID' }],
        );
        const { rows } = await db.query('SELECT 1 FROM tills WHERE id = $1', [tillId]);
        assert.equal(rows.length, 0);
      });

      test('when a heartbeat comes with no key, a revoked key or an unassigned one, then it is refused as any call and nothing is kept', async () => {
        const tillId = randomUUID();
        assert.equal((await base.post(`/v1/tills/${tillId}/heartbeat`, heartbeat())).status, 401);
        const revoked = await base
          .withKey(SUITE_KEYS.revoked)
          .post(`/v1/tills/${tillId}/heartbeat`, heartbeat());
        assert.deepEqual(
          [revoked.status, revoked.body],
          [401, { error: 'Unauthorized: invalid api key' }],
        );
        const loose = await base
          .withKey(SUITE_KEYS.unassigned)
          .post(`/v1/tills/${tillId}/heartbeat`, heartbeat());
        assert.deepEqual([loose.status, loose.body], [403, { error: 'KeyNotAssigned' }]);
        // A key revoked after it was used (the ledger knows its shop without a lookup).
        const customer = await addCustomer(db, {
          name: `Shop ${randomUUID().slice(0, 8)}`,
          credits: 0,
          creditCost: 10000n,
        });
        const { apiKey } = await issueKey(db, { customerId: customer.customerId });
        const shop = base.withKey(apiKey);
        assert.equal((await shop.post(`/v1/tills/${tillId}/heartbeat`, heartbeat())).status, 200);
        await revokeKey(db, apiKey);
        const late = await shop.post(
          `/v1/tills/${tillId}/heartbeat`,
          heartbeat({ pendingMovements: 9 }),
        );
        assert.deepEqual(
          [late.status, late.body],
          [401, { error: 'Unauthorized: invalid api key' }],
        );
        const { rows } = await db.query<{ pending_movements: number }>(
          'SELECT pending_movements FROM tills WHERE id = $1',
          [tillId],
        );
        assert.deepEqual(
          rows.map((row) => row.pending_movements),
          [0],
        );
      });
    });

    describe("an operator's word in the audit log", () => {
      test('when a key holder posts or voids with evidence and no till, then the decision and its audit row (the key, the evidence) commit together, and a replay writes none', async () => {
        const shop = await newShop(100);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        const id = randomUUID();
        assert.equal(
          (await shop.create({ id, kind: 'recharge', cardId: CARD, credits: 5 })).status,
          201,
        );
        const voided = await shop.resolve(id, 'void', { evidence: 'card reported lost' });
        assert.equal(voided.status, 200, JSON.stringify(voided.body));
        assert.equal(
          (await shop.resolve(id, 'void', { evidence: 'card reported lost' })).status,
          200,
        );
        const { rows } = await db.query<{
          actor: string;
          action: string;
          subject: string;
          reason: string;
        }>(
          'SELECT actor, action, subject, reason FROM audit_log WHERE customer_id = $1 ORDER BY seq',
          [customerId],
        );
        assert.equal(rows.length, 1, JSON.stringify(rows));
        assert.match(rows[0]?.actor ?? '', /^key:[0-9a-f]{8}$/);
        assert.deepEqual(
          [rows[0]?.action, rows[0]?.subject, rows[0]?.reason],
          ['movement.void', id, 'card reported lost'],
        );
      });

      test('when a key holder voids an unknown id with evidence, then the tombstone stays (a later create is refused) and no audit row is written', async () => {
        const shop = await newShop(100);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        const id = randomUUID();
        const voided = await shop.resolve(id, 'void', { evidence: 'never made' });
        assert.deepEqual([voided.status, voided.body], [404, { error: 'MovementNotFound' }]);
        const late = await shop.create({ id, kind: 'recharge', cardId: CARD, credits: 5 });
        assert.deepEqual([late.status, late.body], [409, { error: 'MovementAlreadyVoided' }]);
        const { rows } = await db.query('SELECT 1 FROM audit_log WHERE customer_id = $1', [
          customerId,
        ]);
        assert.equal(rows.length, 0);
      });
    });

    describe('day reports', () => {
      test("when a POS asks for a day's report, then it gets the day's posted movements by when they happened in the shop's day, as JSON or CSV", async () => {
        const shop = await newShop(100, '0.50');
        const { customerId } = (await shop.customer()).body as { customerId: string };
        const tillId = randomUUID();
        for (const [credits, occurredAt] of [
          [10, '2026-05-04T23:59:59.999Z'],
          [20, '2026-05-05T00:00:00.000Z'],
          [4, '2026-05-05T23:59:59.999Z'],
        ] as const) {
          const id = randomUUID();
          assert.equal(
            (await shop.create({ id, kind: 'recharge', cardId: CARD, credits, tillId })).status,
            201,
          );
          assert.equal((await shop.resolve(id, 'post', { tillId, occurredAt })).status, 200);
        }
        const report = await shop.get('/v1/reports/day?date=2026-05-05');
        assert.equal(report.status, 200, JSON.stringify(report.body));
        assert.deepEqual(report.body.shop, {
          id: customerId,
          name: report.body.shop.name,
          timeZone: 'UTC',
        });
        assert.deepEqual(report.body.totals.recharges, {
          count: 2,
          credits: 24,
          euros: '12.00',
          bonusCredits: 0,
        });
        assert.equal(report.body.totals.netCashExpected, '12.00');
        assert.deepEqual(
          report.body.tills.map((till: { tillId: string }) => till.tillId),
          [tillId],
        );

        const csv = await shop.get('/v1/reports/day?date=2026-05-05&format=csv');
        assert.equal(csv.status, 200);
        assert.match(csv.contentType ?? '', /^text\/csv/);
        assert.match(String(csv.body), /\r\n2026-05-05,UTC,all tills,,2,24,12\.00,/);
        const byAccept = await shop.get('/v1/reports/day?date=2026-05-05', {
          headers: { accept: 'text/csv' },
        });
        assert.equal(byAccept.body, csv.body);

        assert.equal(report.body.floatRechargesNotReported, null);
        const float = {
          credits: 50,
          unreportedMovements: 2,
          unreportedCredits: 6,
          offlineSince: null,
        };
        const beat = await shop.post(`/v1/tills/${tillId}/heartbeat`, {
          version: '2.1.0',
          reader: { state: 'ready', name: null, problem: null },
          pendingMovements: 0,
          waitingMovements: 0,
          float,
        });
        assert.equal(beat.status, 200, JSON.stringify(beat.body));
        const today = await shop.get('/v1/reports/day');
        assert.equal(today.status, 200);
        assert.equal(today.body.date, new Date().toISOString().slice(0, 10));
        assert.deepEqual(today.body.floatRechargesNotReported, {
          movements: 2,
          credits: 6,
          tills: [{ tillId, tillName: null, movements: 2, credits: 6, asOf: beat.body.lastSeenAt }],
        });
      });

      test('when the date or format is not one, then it is 400 InvalidQuery naming it', async () => {
        const shop = await newShop(0);
        for (const [query, detail] of [
          ['date=2026-02-30', 'date: must be a date like 2026-03-29 (years 2000 to 2199)'],
          ['date=yesterday', 'date: must be a date like 2026-03-29 (years 2000 to 2199)'],
          ['format=pdf', 'format: must be json or csv'],
          ['shop=other', 'shop: unknown parameter'],
        ]) {
          const answer = await shop.get(`/v1/reports/day?${query}`);
          assert.deepEqual(
            [answer.status, answer.body],
            [400, { error: 'InvalidQuery', detail }],
            query,
          );
        }
        assert.equal((await base.get('/v1/reports/day')).status, 401);
      });
    });
    defineFloatTests(() => ({ db, newShop }));
    defineFloatReportTests(() => ({ db, newShop }));
    defineCardRulesTests(() => ({ db, newShop }));
    defineCardCompensationTests(() => ({ db, newShop }));
    defineBonusTests(() => ({ db, newShop }));

    describe('storage guarantees', () => {
      test('when a balance would go negative, then the database itself refuses it (CHECK)', async () => {
        await assert.rejects(
          db.query("UPDATE customers SET credits = -1 WHERE name = 'Shop A'"),
          /customers_credits_non_negative/,
        );
      });

      test('when a ledger entry is updated, deleted or truncated, then the database refuses it', async () => {
        for (const sql of [
          'UPDATE ledger_entries SET delta = delta + 1',
          'DELETE FROM ledger_entries',
          'TRUNCATE ledger_entries',
        ]) {
          await assert.rejects(db.query(sql), /append-only/, sql);
        }
      });

      test('when every balance change so far is checked, then balance = sum of entries for every customer', async () => {
        const report = await checkLedger(db);
        assert.deepEqual(report.problems, []);
        assert.ok(report.ok);
        assert.ok(report.customers >= 2);
      });

      test("when a balance is changed behind the ledger's back, then the check reports that customer", async () => {
        const shop = await newShop(10);
        const { customerId } = (await shop.customer()).body as { customerId: string };
        await db.query('UPDATE customers SET credits = credits + 1 WHERE id = $1', [customerId]);
        try {
          const report = await checkLedger(db);
          assert.equal(report.ok, false);
          assert.ok(
            report.problems.some((problem) => problem.includes(customerId)),
            report.problems.join('\n'),
          );
        } finally {
          await db.query('UPDATE customers SET credits = credits - 1 WHERE id = $1', [customerId]);
        }
        assert.ok((await checkLedger(db)).ok);
      });
    });
  });
}

/** A GET with an API key from a chosen local address: status, JSON body and Retry-After. */
function callFrom(
  localAddress: string,
  url: string,
  apiKey: string,
): Promise<{ status: number; body: unknown; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { localAddress, headers: { 'x-api-key': apiKey }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          const retryAfter = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, body, retryAfter });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
