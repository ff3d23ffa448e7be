/**
 * The till floats of contract v1 (docs/cloud-api.md, "Till floats") end to end over HTTP: part
 * of the ledger suite (ledger-suite.ts), so they run on PostgreSQL, on PGlite, and with every
 * statement recorded (ledger-one-customer.test.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { revokeKey } from '../../cloud/admin.ts';
import { checkLedger } from '../../cloud/check.ts';
import type { Database } from '../../cloud/db/database.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { Answer, LedgerClient } from './ledger-client.ts';

export interface FloatSuiteContext {
  db: Database;
  /** A new shop with its own pool and key, and the key. */
  newShop(credits: number, creditCost?: string): Promise<LedgerClient>;
}

let serial = 0x300;
/** A card no other test moved. */
const freshCard = () => `06${(serial++).toString(16).toUpperCase().padStart(6, '0')}`;

const ok = (answer: Answer, status = 200) =>
  assert.equal(answer.status, status, `${answer.status} ${JSON.stringify(answer.body)}`);

export function defineFloatTests(context: () => FloatSuiteContext): void {
  /** A shop whose tills get floats, and its customer id. */
  async function floatShop(
    pool: number,
    settings: Partial<FloatSettings> = {},
  ): Promise<{ shop: LedgerClient; customerId: string }> {
    const shop = await context().newShop(pool, '0.50');
    const { customerId } = (await shop.customer()).body as { customerId: string };
    await setFloatSettings(context().db, customerId, { size: 300, lowWater: 100, ...settings });
    return { shop, customerId };
  }

  async function open(shop: LedgerClient, tillId = randomUUID(), ids = 10) {
    const answer = await shop.post('/v1/floats', { tillId, requestId: randomUUID(), ids });
    ok(answer, 201);
    return {
      float: answer.body,
      tillId,
      id: (seq: number) => floatMovementId(answer.body.idPrefix, seq),
    };
  }

  const written = (id: string, cardId: string, credits: number) => ({
    id,
    cardId,
    credits,
    card: 'written' as const,
    creditCost: '0.50',
    occurredAt: new Date().toISOString(),
    cardBefore: 'classic:v1:0:1:0',
  });

  async function report(shop: LedgerClient, tillId: string, movements: unknown[]) {
    const answer = await shop.post('/v1/float-reports', { tillId, movements });
    ok(answer);
    return answer.body.results as {
      id: string;
      outcome: string;
      state?: string;
      flags: string[];
    }[];
  }

  async function bookHolds(): Promise<void> {
    const check = await checkLedger(context().db);
    assert.deepEqual(check.problems, []);
  }

  describe('till floats', () => {
    test('when a shop gives no float, then its customer says so and a till asking for one is FloatsOff', async () => {
      const shop = await context().newShop(100);
      const customer = await shop.customer();
      ok(customer);
      assert.equal(customer.body.floatCredits, 0);
      assert.deepEqual(customer.body.float, {
        size: 0,
        lowWater: 0,
        offlineCap: null,
        offlineLimitSeconds: 86_400,
        cardTypes: ['classic', 'desfire'],
      });
      const refused = await shop.post('/v1/floats', {
        tillId: randomUUID(),
        requestId: randomUUID(),
      });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'FloatsOff');
    });

    test('when a till opens its float, then the pool gives it the float size, once per open request, and a second float is FloatOpen', async () => {
      const { shop } = await floatShop(1000);
      const tillId = randomUUID();
      const requestId = randomUUID();
      const first = await shop.post('/v1/floats', { tillId, requestId, ids: 20 });
      ok(first, 201);
      assert.equal(first.body.credits, 300);
      assert.equal(first.body.granted, 300);
      assert.equal(first.body.idsIssued, 20);
      assert.match(first.body.idPrefix, /^[0-9a-f]{12}$/);
      assert.equal(first.body.state, 'open');
      const again = await shop.post('/v1/floats', { tillId, requestId, ids: 20 });
      ok(again, 200);
      assert.equal(again.body.id, first.body.id);
      const customer = (await shop.customer()).body;
      assert.equal(customer.credits, 700);
      assert.equal(customer.floatCredits, 300);

      const second = await shop.post('/v1/floats', { tillId, requestId: randomUUID() });
      assert.equal(second.status, 409, JSON.stringify(second.body));
      assert.equal(second.body.error, 'FloatOpen');
      assert.match(second.body.detail, new RegExp(first.body.id));
      const stolen = await shop.post('/v1/floats', { tillId: randomUUID(), requestId });
      assert.equal(stolen.status, 409, JSON.stringify(stolen.body));
      assert.equal(stolen.body.error, 'FloatRequestConflict');
      await bookHolds();
    });

    test('when the pool holds less than the float size, then the float gets what the pool holds', async () => {
      const { shop } = await floatShop(120);
      const { float } = await open(shop);
      assert.equal(float.credits, 120);
      assert.equal((await shop.customer()).body.credits, 0);
    });

    test('when a till tops its float up, then it gets at most what keeps the float within its size and the pool, once per top-up id', async () => {
      const { shop } = await floatShop(1000);
      const { float, tillId, id } = await open(shop);
      await report(shop, tillId, [written(id(1), freshCard(), 120)]);
      const topUp = { id: randomUUID(), credits: 500, ids: 5, tillId };
      const granted = await shop.post(`/v1/floats/${float.id}/topups`, topUp);
      ok(granted);
      assert.equal(granted.body.topUp.granted, 120);
      assert.equal(granted.body.float.credits, 300);
      assert.equal(granted.body.float.idsIssued, 15);
      // The answer lost and the top-up sent again: the same grant, nothing taken twice.
      const replay = await shop.post(`/v1/floats/${float.id}/topups`, topUp);
      ok(replay);
      assert.equal(replay.body.topUp.granted, 120);
      assert.equal(replay.body.float.idsIssued, 15);
      assert.equal((await shop.customer()).body.credits, 580);
      const reused = await shop.post(`/v1/floats/${float.id}/topups`, { ...topUp, credits: 1 });
      assert.equal(reused.status, 409, JSON.stringify(reused.body));
      assert.equal(reused.body.error, 'TopUpConflict');
      const other = await shop.post(`/v1/floats/${float.id}/topups`, {
        id: randomUUID(),
        credits: 1,
        tillId: randomUUID(),
      });
      assert.equal(other.status, 409, JSON.stringify(other.body));
      assert.equal(other.body.error, 'FloatOfAnotherTill');
      await bookHolds();
    });

    test('when top-ups race each other and a report, then the float never passes its size and the book holds', async () => {
      const { shop } = await floatShop(5000);
      const { float, tillId, id } = await open(shop, randomUUID(), 50);
      const card = freshCard();
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, () =>
          shop.post(`/v1/floats/${float.id}/topups`, { id: randomUUID(), credits: 100, tillId }),
        ),
        shop.post('/v1/float-reports', {
          tillId,
          movements: [1, 2, 3].map((seq) => written(id(seq), card, 40)),
        }),
      ]);
      for (const answer of answers) ok(answer);
      const now = (await shop.get(`/v1/floats/${float.id}`)).body;
      assert.ok(now.credits <= 300, JSON.stringify(now));
      const grants = answers
        .slice(0, 6)
        .reduce((sum, answer) => sum + answer.body.topUp.granted, 0);
      assert.equal(now.credits, 300 + grants - 120);
      await bookHolds();
    });

    test('when a till reports a batch, then each movement is answered on its own and counted once, whatever is sent again', async () => {
      const { shop } = await floatShop(1000);
      const { float, tillId, id } = await open(shop);
      const [a, b] = [freshCard(), freshCard()];
      const results = await report(shop, tillId, [
        written(id(1), a, 50),
        { id: id(2), cardId: b, credits: 20, card: 'undecided', creditCost: '0.50' },
        { id: id(3), cardId: b, credits: 30, card: 'not-written', creditCost: '0.50' },
        written(floatMovementId(float.idPrefix, 11), a, 5),
        written(randomUUID(), a, 5),
        written(id(4), a, 10),
      ]);
      assert.deepEqual(
        results.map((result) => [result.outcome, result.state ?? null, result.flags]),
        [
          ['recorded', 'posted', []],
          ['recorded', 'pending', []],
          ['recorded', 'voided', []],
          ['refused', null, ['forged-id']],
          ['refused', null, ['forged-id']],
          ['recorded', 'posted', []],
        ],
      );
      const again = await report(shop, tillId, [
        written(id(1), a, 50),
        written(id(4), a, 11),
        written(id(3), b, 30),
        { id: id(2), cardId: b, credits: 20, card: 'written', creditCost: '0.50' },
      ]);
      assert.deepEqual(
        again.map((result) => [result.outcome, result.state ?? null, result.flags]),
        [
          ['known', 'posted', []],
          ['refused', 'posted', ['conflict']],
          ['refused', 'voided', ['conflict']],
          ['recorded', 'posted', []],
        ],
      );
      const cardA = (await shop.get(`/v1/cards/${a}`)).body;
      assert.equal(cardA.credits, 60);
      assert.equal(cardA.suspect, true, 'the forged ids flag the card');
      assert.ok(
        cardA.flags.some((flag: { kind: string }) => flag.kind === 'forged-float-movement'),
      );
      assert.equal((await shop.get(`/v1/cards/${b}`)).body.credits, 20);
      const view = (await shop.get(`/v1/floats/${float.id}`)).body;
      assert.equal(view.credits, 300 - 80);
      assert.deepEqual(view.reported, { count: 3, credits: 80 });
      assert.equal(view.notWritten, 1);
      assert.equal(view.unaccountedIds, 10 - 4);
      const posted = (await shop.movement(id(1))).body;
      assert.equal(posted.floatId, float.id);
      assert.equal(posted.reportedAs, 'till');
      assert.equal(posted.tillId, tillId);
      assert.equal(posted.amount, '25.00');
      await bookHolds();
    });

    test("when another till finds a float recharge on a card, then it counts once, and its own till's later report changes nothing", async () => {
      const { shop } = await floatShop(1000);
      const { tillId, id } = await open(shop);
      const card = freshCard();
      const finder = randomUUID();
      const found = await report(shop, finder, [
        { id: id(1), cardId: card, credits: 40, card: 'written', found: true },
      ]);
      assert.deepEqual(
        found.map((result) => [result.outcome, result.flags]),
        [['recorded', ['cost-estimated']]],
      );
      const mine = await report(shop, tillId, [written(id(1), card, 40)]);
      assert.equal(mine[0]?.outcome, 'known');
      assert.equal((await shop.get(`/v1/cards/${card}`)).body.credits, 40);
      const movement = (await shop.movement(id(1))).body;
      assert.equal(movement.reportedAs, 'found');
      assert.equal(movement.resolvedByTill, finder);
      assert.match(movement.evidence, /found on card/);
      const notFound = await report(shop, finder, [written(id(2), card, 40)]);
      assert.deepEqual(
        notFound.map((result) => [result.outcome, result.flags]),
        [['refused', ['other-till']]],
      );
      await bookHolds();
    });

    test("when a till finds another shop's float recharge on a card carried there, then it is refused other-shop, and the card is not flagged", async () => {
      const { shop } = await floatShop(1000);
      const { id } = await open(shop);
      const { shop: other } = await floatShop(1000);
      const card = freshCard();
      const results = await report(other, randomUUID(), [
        { id: id(1), cardId: card, credits: 10, card: 'written', found: true },
      ]);
      assert.deepEqual(
        results.map((result) => [result.outcome, result.flags]),
        [['refused', ['other-shop']]],
      );
      assert.equal((await other.get(`/v1/cards/${card}`)).body.suspect, false);
    });

    test('when a card shows a float recharge while lower ids of its float are unreported, then a payout or reservation of it is FloatReportPending until they are', async () => {
      const { shop } = await floatShop(1000);
      const { tillId, id } = await open(shop);
      const card = freshCard();
      await report(shop, randomUUID(), [
        { id: id(3), cardId: card, credits: 30, card: 'written', found: true },
      ]);
      const payout = {
        id: randomUUID(),
        kind: 'discharge',
        cardId: card,
        credits: 30,
        tillId: randomUUID(),
      };
      const refused = await shop.create(payout);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'FloatReportPending');
      assert.match(refused.body.detail, new RegExp(tillId));
      const recharge = await shop.create({
        id: randomUUID(),
        kind: 'recharge',
        cardId: card,
        credits: 5,
        cardCredits: 30,
        tillId: randomUUID(),
      });
      assert.equal(recharge.body.error, 'FloatReportPending');
      assert.equal((await shop.get(`/v1/cards/${card}`)).body.suspect, false, 'not a fraud flag');

      await report(shop, tillId, [
        written(id(1), freshCard(), 10),
        { id: id(2), cardId: card, credits: 30, card: 'not-written', creditCost: '0.50' },
      ]);
      ok(await shop.create(payout), 201);
      await bookHolds();
    });

    test("when an undecided float recharge waits for its card, then another till's write to the card is CardMovementPending, and its void gives the float its credits back", async () => {
      const { shop } = await floatShop(1000);
      const { float, tillId, id } = await open(shop);
      const card = freshCard();
      await report(shop, tillId, [
        { id: id(1), cardId: card, credits: 25, card: 'undecided', creditCost: '0.50' },
      ]);
      const other = await shop.create({
        id: randomUUID(),
        kind: 'recharge',
        cardId: card,
        credits: 5,
        tillId: randomUUID(),
      });
      assert.equal(other.body.error, 'CardMovementPending', JSON.stringify(other.body));
      ok(await shop.resolve(id(1), 'void', { tillId }));
      assert.equal((await shop.get(`/v1/floats/${float.id}`)).body.credits, 300);
      await bookHolds();
    });

    test('when a till closes its float, then its final report lands, the rest goes back to the pool, and a report after that is still counted, flagged', async () => {
      const { shop } = await floatShop(1000);
      const { float, tillId, id } = await open(shop);
      const card = freshCard();
      const closing = await shop.post(`/v1/floats/${float.id}/close`, {
        tillId,
        movements: [written(id(1), card, 100)],
      });
      ok(closing);
      assert.equal(closing.body.closed, true);
      assert.equal(closing.body.results[0].outcome, 'recorded');
      assert.equal(closing.body.float.state, 'closed');
      assert.equal(closing.body.float.closedBy, 'till');
      assert.equal(closing.body.float.returned, 200);
      assert.equal((await shop.customer()).body.credits, 900);
      const again = await shop.post(`/v1/floats/${float.id}/close`, { tillId });
      ok(again);
      assert.equal(again.body.closed, false);

      const late = await report(shop, tillId, [written(id(2), card, 10)]);
      assert.deepEqual(
        late.map((result) => [result.outcome, result.flags]),
        [['recorded', ['float-closed', 'beyond-float']]],
      );
      assert.equal((await shop.get(`/v1/cards/${card}`)).body.credits, 110);
      const topUp = await shop.post(`/v1/floats/${float.id}/topups`, {
        id: randomUUID(),
        credits: 5,
      });
      assert.equal(topUp.body.error, 'FloatClosed');
      const next = await shop.post('/v1/floats', { tillId, requestId: randomUUID() });
      ok(next, 201);
      await bookHolds();
    });

    test('when an operator closes a dead till’s float, then the write-off is bounded by the float, and a later report takes back from it', async () => {
      const { shop, customerId } = await floatShop(1000);
      const { float, tillId, id } = await open(shop);
      const floats = new Floats(context().db);
      const card = freshCard();
      await report(shop, randomUUID(), [
        { id: id(2), cardId: card, credits: 40, card: 'written', found: true },
      ]);
      await assert.rejects(
        floats.closeByOperator(customerId, float.id, {
          movements: [written(id(1), card, 60)],
          writeOff: 250,
          reason: 'till stolen',
        }),
        (error: Error & { code?: string }) => error.code === 'WriteOffBeyondFloat',
      );
      // Nothing of the refused call stayed: not its final report either.
      assert.equal((await shop.get(`/v1/floats/${float.id}`)).body.reported.count, 0);
      const closed = await floats.closeByOperator(customerId, float.id, {
        movements: [written(id(1), card, 60)],
        writeOff: 150,
        reason: 'till stolen; its last tray showed 50 credits left',
      });
      assert.equal(closed.float.closedBy, 'operator');
      assert.equal(closed.float.writtenOff, 150);
      assert.equal(closed.float.returned, 50);
      assert.equal(
        closed.float.writeOffReason,
        'till stolen; its last tray showed 50 credits left',
      );

      const late = await report(shop, tillId, [written(id(3), card, 30)]);
      assert.deepEqual(late[0]?.flags, ['float-closed']);
      assert.equal((await shop.get(`/v1/floats/${float.id}`)).body.writtenOff, 120);
      await bookHolds();
    });

    test('when its key is revoked, then a till still reports what it sold (flagged) and closes its float, but opens and tops up nothing', async () => {
      const shop0 = await context().newShop(1000, '0.50');
      const { customerId } = (await shop0.customer()).body as { customerId: string };
      await setFloatSettings(context().db, customerId, { size: 300 });
      const { float, tillId, id } = await open(shop0);
      await revokeKey(context().db, shop0.apiKey as string);
      const results = await report(shop0, tillId, [written(id(1), freshCard(), 10)]);
      assert.deepEqual(
        results.map((result) => [result.outcome, result.flags]),
        [['recorded', ['key-revoked']]],
      );
      const topUp = await shop0.post(`/v1/floats/${float.id}/topups`, {
        id: randomUUID(),
        credits: 5,
      });
      assert.equal(topUp.status, 401);
      const closed = await shop0.post(`/v1/floats/${float.id}/close`, { tillId });
      ok(closed);
      assert.equal(closed.body.float.returned, 290);
      await bookHolds();
    });

    test('when tills and floats are asked for, then the shop sees each till with its open float', async () => {
      const { shop } = await floatShop(1000);
      const { float, tillId } = await open(shop);
      const idle = randomUUID();
      await report(shop, idle, [
        {
          id: floatMovementId(float.idPrefix, 1),
          cardId: freshCard(),
          credits: 1,
          card: 'written',
          found: true,
        },
      ]);
      const tills = (await shop.get('/v1/tills')).body.tills as {
        tillId: string;
        float: { id: string } | null;
      }[];
      assert.deepEqual(
        tills.map((till) => [till.tillId, till.float?.id ?? null]),
        [
          [tillId, float.id],
          [idle, null],
        ],
      );
      const mine = await shop.get(`/v1/tills/${tillId}/float`);
      ok(mine);
      assert.equal(mine.body.id, float.id);
      const none = await shop.get(`/v1/tills/${idle}/float`);
      assert.equal(none.status, 404);
      assert.equal(none.body.error, 'FloatNotFound');
      const unknown = await shop.get(`/v1/tills/${randomUUID()}`);
      assert.equal(unknown.status, 404);
    });

    test('when a report or float call is malformed, then it is refused whole, naming the movement and field', async () => {
      const { shop } = await floatShop(1000);
      const { tillId, id } = await open(shop);
      const cases: [unknown, string][] = [
        [{ tillId, movements: [] }, 'movements: must be an array of 1 to 500 movements'],
        [
          { tillId, movements: [{ ...written(id(1), '06AB', 5) }] },
          'movements[0].cardId: must be 8 or 14 uppercase hexadecimal characters',
        ],
        [
          { tillId, movements: [written(id(1), freshCard(), 5), written(id(1), freshCard(), 5)] },
          `movements[1].id: ${id(1)} is in the report twice`,
        ],
        [
          {
            tillId,
            movements: [{ ...written(id(1), freshCard(), 5), card: 'undecided', found: true }],
          },
          'movements[0].found: a movement found on a card is "written"',
        ],
        [
          { tillId, movements: [{ ...written(id(1), freshCard(), 5), price: 1 }] },
          'movements[0].price: unknown field',
        ],
        [
          {
            tillId,
            movements: Array.from({ length: 501 }, (_, i) => written(id(i + 1), freshCard(), 1)),
          },
          'movements: must be an array of 1 to 500 movements',
        ],
      ];
      for (const [body, detail] of cases) {
        const answer = await shop.post('/v1/float-reports', body);
        assert.deepEqual([answer.status, answer.body], [400, { error: 'InvalidReport', detail }]);
      }
      const created = await shop.create({
        id: id(9),
        kind: 'recharge',
        cardId: freshCard(),
        credits: 5,
      });
      assert.equal(created.status, 400);
      assert.match(created.body.detail, /float movement id is reported/);
      const opened = await shop.post('/v1/floats', { tillId: 'x', requestId: randomUUID() });
      assert.deepEqual(opened.body, { error: 'InvalidRequest', detail: 'tillId: must be a UUID' });
    });

    test('when floats moved every way, then every float equals its entries and every shop’s book sums to zero, and a float changed behind its back is reported', async () => {
      const { shop, customerId } = await floatShop(1000);
      const { float } = await open(shop);
      const check = await checkLedger(context().db);
      assert.deepEqual(check.problems, []);
      const book = check.books.find((entry) => entry.customerId === customerId);
      assert.equal(book?.accounts.floats, 300n);
      assert.equal(book?.accounts.pool, 700n);
      assert.equal(book?.sum, 0n);
      await context().db.query('UPDATE floats SET credits = credits + 1 WHERE id = $1', [float.id]);
      try {
        const broken = await checkLedger(context().db);
        assert.equal(broken.ok, false);
        assert.ok(
          broken.problems.some((problem) => problem.includes(float.id)) &&
            broken.problems.some((problem) => problem.includes('the book sums to 1')),
          broken.problems.join('\n'),
        );
      } finally {
        await context().db.query('UPDATE floats SET credits = credits - 1 WHERE id = $1', [
          float.id,
        ]);
      }
      await assert.rejects(
        context().db.query('UPDATE float_entries SET delta = delta + 1'),
        /append-only/,
      );
    });
  });
}
