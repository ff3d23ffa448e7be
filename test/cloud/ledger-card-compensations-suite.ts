/**
 * Compensations of a card's own movements (docs/cloud-api.md, "Compensations of a card's own
 * movements"): an operator posted or voided a refund, correction, pickup or block-clear without
 * the card, a till read the card and it disagrees, and a movement of the same kind sets the
 * books right, redoing what was voided or undoing what was posted. Part of the ledger suite
 * (ledger-suite.ts): PostgreSQL, PGlite, and every statement recorded.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { LedgerClient } from './ledger-client.ts';
import {
  accountOf,
  bookHolds,
  freshCard,
  ok,
  recharged,
  refused,
  type CardRulesSuiteContext,
} from './ledger-card-rules-suite.ts';

const DAY = '2026-03-01';
const at = (minutes: number) => new Date(Date.parse(`${DAY}T10:00:00.000Z`) + minutes * 60_000);

export function defineCardCompensationTests(context: () => CardRulesSuiteContext): void {
  const db = () => context().db;
  const evidence = 'operator: the customer says the card was not touched';

  /** A shop whose till A recharged a card 40 credits (20.00) at 10:00. */
  async function recharge() {
    const shop = await context().newShop(1000, '0.50');
    const card = freshCard();
    const [tillA, tillB] = [randomUUID(), randomUUID()];
    const made = await recharged(shop, card, { credits: 40 }, tillA, at(0));
    return { shop, card, tillA, tillB, recharge: made };
  }

  /** A till's card movement of `kind` (a card write: cardBefore), left pending. */
  async function pending(
    shop: LedgerClient,
    kind: string,
    card: string,
    till: string,
    more: Record<string, unknown>,
  ) {
    const movement = {
      id: randomUUID(),
      kind,
      cardId: card,
      tillId: till,
      cardBefore: `test:${kind}:${randomUUID()}`,
      ...more,
    };
    ok(await shop.create(movement), 201);
    return movement;
  }

  /** The same, then posted or voided by an operator without its card. */
  async function decided(
    shop: LedgerClient,
    decision: 'post' | 'void',
    kind: string,
    card: string,
    till: string,
    more: Record<string, unknown>,
  ) {
    const movement = await pending(shop, kind, card, till, more);
    ok(await shop.resolve(movement.id, decision, { evidence }));
    return movement;
  }

  /** A cashier's undo of the recharge by till A, left pending (its card write uncertain). */
  const pendingRefund = (shop: LedgerClient, card: string, recharge: string, till: string) =>
    pending(shop, 'refund', card, till, {
      refunds: recharge,
      cardCredits: 40,
      tillTime: at(2).toISOString(),
    });

  /** Till `till`'s compensation of `of` (a new id), as sent. */
  const compensationOf = (
    of: { id: string; kind: string; cardId: string },
    till: string,
    more: Record<string, unknown> = {},
  ) => ({
    id: randomUUID(),
    kind: of.kind,
    cardId: of.cardId,
    tillId: till,
    compensates: of.id,
    ...more,
  });

  /** Till B's compensation of `of`, created and posted; the created movement. */
  async function compensated(
    shop: LedgerClient,
    of: { id: string; kind: string; cardId: string },
    till: string,
  ) {
    const sent = compensationOf(of, till);
    const made = await shop.create(sent);
    ok(made, 201);
    const posted = await shop.resolve(sent.id, 'post', { tillId: till });
    ok(posted);
    days.add(String(posted.body.occurredAt).slice(0, 10));
    return made.body;
  }

  /** The local days (the shop's zone is UTC) movements of these tests were posted on. */
  const days = new Set<string>([DAY]);
  /** The refunds line of the day reports of those days, summed. */
  const refundsOfDays = async (shop: LedgerClient) => {
    const sum = { count: 0, credits: 0, eurosRefunded: '0.00' };
    for (const day of days) {
      const report = await shop.get(`/v1/reports/day?date=${day}`);
      ok(report);
      const { refunds, eurosRefunded } = report.body.totals;
      sum.count += refunds.count;
      sum.credits += refunds.credits;
      sum.eurosRefunded = (Number(sum.eurosRefunded) + Number(eurosRefunded)).toFixed(2);
    }
    return sum;
  };

  describe("compensations of a card's own movements", () => {
    test('when an operator voids a refund its card holds, then the till that reads the card redoes it: the account gives the credits up, the pool gets them, the day counts one refund, the card is free', async () => {
      const { shop, card, tillA, tillB, recharge: r } = await recharge();
      const pool = (await shop.customer()).body.credits;
      const refund = await pendingRefund(shop, card, r.id, tillA);
      const voided = await shop.resolve(refund.id, 'void', { evidence });
      ok(voided);
      assert.equal(voided.body.awaitsCard, true);
      assert.equal((await accountOf(shop, card)).credits, 40, 'the void gave the account back');
      // Held: no till writes the card until one has read it.
      refused(
        await shop.create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: card,
          credits: 1,
          tillId: tillB,
        }),
        409,
        'CardMovementPending',
      );
      const compensation = compensationOf(refund, tillB, { credits: 40 });
      const made = await shop.create(compensation);
      ok(made, 201);
      assert.deepEqual(
        [
          made.body.kind,
          made.body.credits,
          made.body.amount,
          made.body.compensates,
          made.body.refunds,
        ],
        ['refund', 40, '20.00', refund.id, r.id],
      );
      ok(await shop.create(compensation), 200);
      refused(await shop.create({ ...compensation, id: randomUUID() }), 409, 'MovementCompensated');
      assert.equal((await shop.get(`/v1/movements/${refund.id}`)).body.awaitsCard, false);
      ok(
        await shop.resolve(compensation.id, 'post', {
          tillId: tillB,
          occurredAt: at(5).toISOString(),
        }),
      );
      assert.equal((await accountOf(shop, card)).credits, 0);
      assert.equal((await shop.customer()).body.credits, pool + 40);
      assert.deepEqual(await refundsOfDays(shop), {
        count: 1,
        credits: 40,
        eurosRefunded: '20.00',
      });
      ok(
        await shop.create({
          id: randomUUID(),
          kind: 'recharge',
          cardId: card,
          credits: 1,
          tillId: tillB,
        }),
        201,
      );
      await bookHolds(db());
    });

    test('when an operator posts a refund its card does not hold, then the compensation undoes it: the credits go back on the account from the pool and the day counts no refund', async () => {
      const { shop, card, tillA, tillB, recharge: r } = await recharge();
      const pool = (await shop.customer()).body.credits;
      const refund = await pendingRefund(shop, card, r.id, tillA);
      const posted = await shop.resolve(refund.id, 'post', { evidence });
      ok(posted);
      days.add(String(posted.body.occurredAt).slice(0, 10));
      assert.equal((await shop.customer()).body.credits, pool + 40);
      assert.deepEqual(await refundsOfDays(shop), {
        count: 1,
        credits: 40,
        eurosRefunded: '20.00',
      });
      const undone = await compensated(shop, refund, tillB);
      assert.deepEqual([undone.credits, undone.refunds], [40, null]);
      const account = await accountOf(shop, card);
      assert.deepEqual([account.credits, account.paidAmount], [40, '20.00']);
      assert.equal((await shop.customer()).body.credits, pool);
      assert.deepEqual(await refundsOfDays(shop), { count: 0, credits: 0, eurosRefunded: '0.00' });
      // Undone, it took nothing back: an operator may correct the whole recharge.
      const correction = {
        id: randomUUID(),
        recharge: r.id,
        credits: 40,
        reason: 'keyed 40 for 0',
      };
      ok(await shop.post(`/v1/cards/${card}/corrections`, correction), 201);
      await bookHolds(db());
    });

    test("when an operator posts a correction its card does not hold, then the compensation puts the credits back on the card's account; voided while its card holds it, the compensation takes them", async () => {
      for (const decision of ['post', 'void'] as const) {
        const { shop, card, tillA, tillB, recharge: r } = await recharge();
        const change = randomUUID();
        ok(
          await shop.post(`/v1/cards/${card}/corrections`, {
            id: change,
            recharge: r.id,
            credits: 30,
            reason: 'keyed 40 for 10',
          }),
          201,
        );
        const apply = await decided(shop, decision, 'correction', card, tillA, {
          applies: change,
          cardCredits: 40,
        });
        const pool = (await shop.customer()).body.credits;
        await compensated(shop, apply, tillB);
        const account = await accountOf(shop, card);
        // Posted and undone, or voided and redone: the card's word wins either way.
        assert.equal(account.credits, decision === 'post' ? 40 : 10, decision);
        assert.equal(
          (await shop.customer()).body.credits,
          decision === 'post' ? pool - 30 : pool + 30,
        );
        assert.equal(account.changes[0].state, 'applied', decision);
        await bookHolds(db());
      }
    });

    test('when an operator voids a pickup whose card holds the credits, then the compensation picks the replacement up after all; posted while the card lacks them, they wait again as a new replacement that the next till picks up', async () => {
      for (const decision of ['void', 'post'] as const) {
        const shop = await context().newShop(1000, '0.50');
        const [old, fresh] = [freshCard(), freshCard()];
        const [tillA, tillB] = [randomUUID(), randomUUID()];
        await recharged(shop, old, { credits: 30 }, tillA);
        ok(await shop.post(`/v1/cards/${old}/block`, { reason: 'lost' }));
        const change = randomUUID();
        ok(
          await shop.post(`/v1/cards/${old}/replace`, {
            id: change,
            newCardId: fresh,
            reason: 'lost',
          }),
          201,
        );
        const pickup = await decided(shop, decision, 'replacement', fresh, tillA, {
          applies: change,
        });
        const made = await compensated(shop, pickup, tillB);
        const account = await accountOf(shop, fresh);
        if (decision === 'void') {
          assert.equal(made.applies, change);
          assert.equal(account.credits, 30);
          assert.equal((await shop.get('/v1/card-list')).body.waiting.length, 0);
        } else {
          assert.equal(made.applies, null);
          assert.equal(account.credits, 0);
          const waiting = (await shop.get('/v1/card-list')).body.waiting;
          assert.deepEqual(waiting, [
            { id: made.id, kind: 'replacement', cardId: fresh, credits: 30, bonusCredits: 0 },
          ]);
          const again = {
            ...pickup,
            id: randomUUID(),
            applies: made.id,
            tillId: tillB,
            cardBefore: 'test:again',
          };
          ok(await shop.create(again), 201);
          ok(await shop.resolve(again.id, 'post', { tillId: tillB }));
          assert.equal((await accountOf(shop, fresh)).credits, 30);
        }
        await bookHolds(db());
      }
    });

    test('when an operator decides a block-clear its card disagrees with, then the compensation records what the card shows and moves nothing', async () => {
      for (const decision of ['post', 'void'] as const) {
        const { shop, card, tillA, tillB } = await recharge();
        ok(await shop.post(`/v1/cards/${card}/block`, { reason: 'lost' }));
        const clear = await decided(shop, decision, 'block-clear', card, tillA, {
          cardCredits: 40,
        });
        const pool = (await shop.customer()).body.credits;
        const made = await compensated(shop, clear, tillB);
        assert.deepEqual([made.kind, made.credits], ['block-clear', 40]);
        assert.equal((await shop.customer()).body.credits, pool);
        assert.equal((await accountOf(shop, card)).credits, 40);
        await bookHolds(db());
      }
    });

    test('when a compensation names a movement of another kind, other credits, a pending one, or brings fields of a plain one, then it is refused and nothing moves; one the account cannot give is refused and flagged', async () => {
      const { shop, card, tillA, tillB, recharge: r } = await recharge();
      const refund = await pendingRefund(shop, card, r.id, tillA);
      const base = { kind: 'refund', cardId: card, tillId: tillB, compensates: refund.id };
      refused(await shop.create({ ...base, id: randomUUID() }), 422, 'InvalidCompensation');
      ok(await shop.resolve(refund.id, 'void', { evidence }));
      refused(
        await shop.create({ ...base, id: randomUUID(), kind: 'correction' }),
        422,
        'InvalidCompensation',
      );
      refused(
        await shop.create({ ...base, id: randomUUID(), credits: 39 }),
        422,
        'InvalidCompensation',
      );
      refused(
        await shop.create({ ...base, id: randomUUID(), refunds: r.id }),
        400,
        'InvalidMovement',
      );
      refused(
        await shop.create({ ...base, id: randomUUID(), tillId: undefined }),
        400,
        'InvalidMovement',
      );
      // Paid out meanwhile by the operator's books: the account cannot give the refund.
      ok(
        await shop.resolve(refund.id, 'void', {
          tillId: tillA,
          evidence: 'card read: it holds it',
        }),
      );
      const paid = { id: randomUUID(), kind: 'discharge', cardId: card, credits: 40 };
      ok(await shop.create(paid), 201);
      refused(await shop.create({ ...base, id: randomUUID() }), 422, 'CardAccountExceeded');
      const flags = (await accountOf(shop, card)).flags as { kind: string }[];
      assert.ok(
        flags.some((flag) => flag.kind === 'compensation-refused'),
        JSON.stringify(flags),
      );
      await bookHolds(db());
    });

    test('when a compensation arrives whose id was voided before, then it is 409 MovementAlreadyVoided, every time, and the card still waits for it', async () => {
      const { shop, card, tillA, tillB, recharge: r } = await recharge();
      const refund = await pendingRefund(shop, card, r.id, tillA);
      ok(await shop.resolve(refund.id, 'void', { evidence }));
      const compensation = compensationOf(refund, tillB);
      refused(
        await shop.resolve(compensation.id, 'void', { tillId: tillB }),
        404,
        'MovementNotFound',
      );
      for (const attempt of [1, 2]) {
        refused(await shop.create(compensation), 409, 'MovementAlreadyVoided');
        assert.equal((await accountOf(shop, card)).credits, 40, `attempt ${attempt}`);
      }
      assert.equal((await shop.get(`/v1/movements/${refund.id}`)).body.awaitsCard, true);
      await bookHolds(db());
    });
  });
}
