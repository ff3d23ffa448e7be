/**
 * Float reports made set-wise (cloud/db/routines/ledger-report-float-run.ts): a run of new
 * movements is recorded in a few statements, every other movement one by one in its place.
 * These are the cases where the two could part: several movements of one card in a batch,
 * new and known ones mixed, a refused or flagged one in the middle, overlapping batches racing,
 * and random batches answered and counted against the movement-by-movement routine. Part of
 * the ledger suite (ledger-suite.ts), so they run on PostgreSQL and on PGlite.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import type { FloatMovementReport } from '../../common/ledger-contract.ts';
import type { Answer, LedgerClient } from './ledger-client.ts';
import type { FloatSuiteContext } from './ledger-float-suite.ts';

let serial = 0x900;
/** A card no other test moved. */
const freshCard = () => `07${(serial++).toString(16).toUpperCase().padStart(6, '0')}`;

const ok = (answer: Answer, status = 200) =>
  assert.equal(answer.status, status, `${answer.status} ${JSON.stringify(answer.body)}`);

interface Result {
  id: string;
  outcome: string;
  state?: string;
  flags: string[];
  detail?: string;
}

const written = (id: string, cardId: string, credits: number): FloatMovementReport => ({
  id,
  cardId,
  credits,
  card: 'written',
  creditCost: '0.50',
  occurredAt: new Date().toISOString(),
  cardBefore: 'classic:v1:0:1:0',
});

/** A seeded random source (mulberry32): the same seed, the same batches. */
function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

export function defineFloatReportTests(context: () => FloatSuiteContext): void {
  async function floatShop(size = 300) {
    const shop = await context().newShop(100_000, '0.50');
    const { customerId } = (await shop.customer()).body as { customerId: string };
    await setFloatSettings(context().db, customerId, { size, lowWater: 0 });
    const tillId = randomUUID();
    const opened = await shop.post('/v1/floats', { tillId, requestId: randomUUID(), ids: 60 });
    ok(opened, 201);
    const float = opened.body as { id: string; idPrefix: string };
    return {
      shop,
      customerId,
      tillId,
      float,
      id: (seq: number) => floatMovementId(float.idPrefix, seq),
    };
  }

  async function report(shop: LedgerClient, tillId: string, movements: unknown[]) {
    const answer = await shop.post('/v1/float-reports', { tillId, movements });
    ok(answer);
    return answer.body.results as Result[];
  }

  const outcomes = (results: Result[]) =>
    results.map((result) => [result.outcome, result.state ?? null, result.flags]);

  const credits = async (shop: LedgerClient, card: string) =>
    (await shop.get(`/v1/cards/${card}`)).body.credits as number;

  async function bookHolds(): Promise<void> {
    assert.deepEqual((await checkLedger(context().db)).problems, []);
  }

  describe('float reports, set-wise', () => {
    test('when a batch holds several movements of one card, then each counts once, in order, and the card account is their sum', async () => {
      const { shop, tillId, float, id } = await floatShop();
      const [card, other] = [freshCard(), freshCard()];
      const results = await report(shop, tillId, [
        written(id(1), card, 20),
        written(id(2), other, 5),
        written(id(3), card, 30),
        { ...written(id(4), card, 7), card: 'undecided' },
        written(id(5), card, 1),
      ]);
      assert.deepEqual(outcomes(results), [
        ['recorded', 'posted', []],
        ['recorded', 'posted', []],
        ['recorded', 'posted', []],
        ['recorded', 'pending', []],
        ['recorded', 'posted', []],
      ]);
      assert.equal(await credits(shop, card), 51);
      assert.equal(await credits(shop, other), 5);
      const view = (await shop.get(`/v1/floats/${float.id}`)).body;
      assert.equal(view.credits, 300 - 63);
      assert.deepEqual(view.reported, { count: 4, credits: 56 });
      assert.deepEqual(view.undecided, { count: 1, credits: 7 });
      await bookHolds();
    });

    test('when a batch mixes new and already reported movements, then the reported ones are known and change nothing, and the new ones count once', async () => {
      const { shop, tillId, float, id } = await floatShop();
      const card = freshCard();
      await report(shop, tillId, [written(id(1), card, 10), written(id(3), card, 30)]);
      const results = await report(shop, tillId, [
        written(id(1), card, 10),
        written(id(2), card, 20),
        written(id(3), card, 30),
        written(id(4), card, 40),
      ]);
      assert.deepEqual(outcomes(results), [
        ['known', 'posted', []],
        ['recorded', 'posted', []],
        ['known', 'posted', []],
        ['recorded', 'posted', []],
      ]);
      assert.equal(await credits(shop, card), 100);
      assert.equal((await shop.get(`/v1/floats/${float.id}`)).body.credits, 200);
      await bookHolds();
    });

    test('when a movement in the middle of a batch is refused or decided, then those after it see the float as it left it', async () => {
      const { shop, tillId, float, id } = await floatShop();
      const [card, held] = [freshCard(), freshCard()];
      await report(shop, tillId, [{ ...written(id(1), held, 40), card: 'undecided' }]);
      const results = await report(shop, tillId, [
        written(id(2), card, 100),
        written(floatMovementId(float.idPrefix, 59_000), card, 5),
        { ...written(id(1), held, 40), card: 'not-written' },
        written(id(3), card, 200),
        written(id(4), card, 50),
        written(id(5), card, 1),
      ]);
      // 300 - 40 held; 100 taken; the forged one refused; the 40 given back; 200 takes the
      // float to 0 (not beyond it, as it would without the 40); 50 and 1 go beyond.
      assert.deepEqual(outcomes(results), [
        ['recorded', 'posted', []],
        ['refused', null, ['forged-id']],
        ['recorded', 'voided', []],
        ['recorded', 'posted', []],
        ['recorded', 'posted', ['beyond-float']],
        ['recorded', 'posted', ['beyond-float']],
      ]);
      const view = (await shop.get(`/v1/floats/${float.id}`)).body;
      assert.equal(view.credits, 0);
      assert.equal(view.overdrawn, 51);
      assert.equal(await credits(shop, card), 351);
      await bookHolds();
    });

    test('when overlapping batches race (a retry sent before the first answer, and a finder), then every movement counts once', async () => {
      const { shop, tillId, float, id } = await floatShop(1000);
      const cards = Array.from({ length: 9 }, freshCard);
      const batch = (from: number, to: number) =>
        Array.from({ length: to - from + 1 }, (_, i) =>
          written(id(from + i), cards[from + i - 1] as string, from + i),
        );
      const [first, retry, found] = await Promise.all([
        report(shop, tillId, batch(1, 6)),
        report(shop, tillId, batch(4, 9)),
        report(shop, randomUUID(), [
          { id: id(5), cardId: cards[4], credits: 5, card: 'written', found: true },
        ]),
      ]);
      const recorded = [...first, ...retry, ...found].filter((r) => r.outcome === 'recorded');
      assert.deepEqual(
        recorded.map((r) => r.id).sort(),
        Array.from({ length: 9 }, (_, i) => id(i + 1)).sort(),
        JSON.stringify({ first, retry, found }),
      );
      for (const result of [...first, ...retry, ...found]) {
        assert.ok(['recorded', 'known'].includes(result.outcome), JSON.stringify(result));
      }
      for (const [i, card] of cards.entries()) assert.equal(await credits(shop, card), i + 1);
      const view = (await shop.get(`/v1/floats/${float.id}`)).body;
      assert.equal(view.credits, 1000 - 45);
      assert.equal(view.reported.count + view.found.count, 9);
      await bookHolds();
    });

    test('when random batches are reported, then the set-wise report answers and counts exactly as one movement at a time', async () => {
      const { db } = context();
      const floats = new Floats(db);
      const [set, single] = [await floatShop(400), await floatShop(400)];
      const cards = Array.from({ length: 4 }, freshCard);
      const finder = randomUUID();
      const next = random(25);
      const one = <T>(list: readonly T[]): T => list[next(list.length)] as T;
      let seq = 0;
      const reported: FloatMovementReport[] = [];
      for (let round = 0; round < 12; round += 1) {
        const items: FloatMovementReport[] = [];
        for (let n = 1 + next(14); n > 0; n -= 1) {
          const pick = next(10);
          const again = reported[next(Math.max(1, reported.length))];
          if (pick < 2 && again) {
            // Sent again: the same facts, or decided now, or other facts (a conflict).
            const card = one(['written', 'not-written', 'undecided'] as const);
            items.push({ ...again, card, credits: again.credits + (next(4) === 0 ? 1 : 0) });
          } else if (pick === 2) {
            items.push(
              written(`00000000-0000-8000-8000-000000${900_000 + next(99)}`, one(cards), 3),
            );
          } else {
            seq += 1 + (next(6) === 0 ? 1 : 0);
            const item: FloatMovementReport = {
              ...written(`SEQ-${seq}`, one(cards), 1 + next(next(3) === 0 ? 300 : 40)),
              card: one([
                'written',
                'written',
                'written',
                'written',
                'not-written',
                'undecided',
              ] as const),
            };
            if (next(5) === 0) item.bonusCredits = Math.min(item.credits, 2);
            if (next(6) === 0) {
              item.found = true;
              delete item.creditCost;
            }
            items.push(item);
            reported.push(item);
          }
        }
        if (next(8) === 0) items.push({ ...(items[0] as FloatMovementReport) });
        // Now and then a till reports what it found on cards (and another till's as other-till).
        const byFinder = next(7) === 0;
        const reporter = (shop: typeof set) => (byFinder ? finder : shop.tillId);
        const as = (shop: typeof set) =>
          items.map((item) => ({
            ...item,
            id: item.id.startsWith('SEQ-') ? shop.id(Number(item.id.slice(4))) : item.id,
          }));
        const setwise = await db.query<{ answer: { results: unknown[] } }>(
          'SELECT ledger_report_float_movements($1, $2, $3::jsonb) AS answer',
          [set.customerId, reporter(set), JSON.stringify(as(set))],
        );
        const oneByOne = await db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO tills (customer_id, id, last_report_at) VALUES ($1, $2, now())
             ON CONFLICT (customer_id, id) DO UPDATE SET last_report_at = now()`,
            [single.customerId, reporter(single)],
          );
          const results: unknown[] = [];
          for (const item of as(single)) {
            const { rows } = await tx.query<{ answer: unknown }>(
              'SELECT ledger_report_float_movement($1, $2, $3::jsonb, false) AS answer',
              [single.customerId, reporter(single), JSON.stringify(item)],
            );
            results.push(rows[0]?.answer);
          }
          return results;
        });
        if (round === 7) {
          // Closed by an operator: later reports take back from the write-off, then go beyond.
          const held = (await floats.get(set.customerId, set.float.id)).credits;
          for (const shop of [set, single]) {
            await floats.closeByOperator(shop.customerId, shop.float.id, {
              movements: [],
              writeOff: Math.min(25, held),
              reason: 'gone',
            });
          }
        }
        const same = (shop: typeof set, value: unknown) =>
          JSON.stringify(value)
            .replaceAll(shop.float.idPrefix.slice(0, 8) + '-' + shop.float.idPrefix.slice(8), 'P')
            .replaceAll(shop.float.id, 'F')
            .replaceAll(shop.tillId, 'T');
        assert.equal(
          same(set, setwise.rows[0]?.answer.results),
          same(single, oneByOne),
          `round ${round}`,
        );
        assert.deepEqual(await stateOf(set), await stateOf(single), `round ${round}`);
      }
      await bookHolds();

      async function stateOf(shop: typeof set) {
        const rows = async (sql: string) =>
          JSON.parse(
            JSON.stringify((await db.query(sql, [shop.customerId])).rows)
              .replaceAll(shop.float.id, 'F')
              .replaceAll(shop.tillId, 'T')
              .replaceAll(shop.customerId, 'C'),
          ) as unknown;
        return {
          float: await rows(`SELECT state, credits, granted, returned, written_off, overdrawn
                             FROM floats WHERE customer_id = $1`),
          entries:
            await rows(`SELECT operation, delta, balance_after, right(movement_id::text, 6) AS seq
                               FROM float_entries WHERE customer_id = $1 ORDER BY id`),
          movements: await rows(`SELECT float_seq, card_id, state, credits, credit_cost, amount,
                                        paid_amount, bonus_credits, report_flags, reported_as,
                                        till_id, resolved_by_till, evidence, card_before,
                                        occurred_at IS NULL AS unoccurred, resolved_at IS NULL AS open
                                 FROM movements WHERE customer_id = $1 ORDER BY float_seq`),
          accounts: await rows(`SELECT card_id, credits, bonus_credits, paid_amount
                                FROM card_accounts WHERE customer_id = $1 ORDER BY card_id`),
          flags:
            await rows(`SELECT card_id, kind, right(movement_id::text, 6) AS seq, requested_credits, account_credits
                             FROM card_flags WHERE customer_id = $1 ORDER BY id`),
          takings:
            await rows(`SELECT day, kind, compensation, movements, credits, euros, bonus_credits
                               FROM daily_takings WHERE customer_id = $1 ORDER BY day, till_id, kind`),
          pool: await rows(`SELECT credits FROM customers WHERE id = $1`),
        };
      }
    });
  });
}
