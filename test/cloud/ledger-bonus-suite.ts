/**
 * Bonus tiers of contract v1 (docs/cloud-api.md, "Bonus tiers", "Payouts of bonus credits")
 * end to end over HTTP: part of the ledger suite (ledger-suite.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { setCreditCost } from '../../cloud/admin.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import type { BonusTier, CardRules } from '../../common/ledger-contract.ts';
import {
  accountOf,
  bookHolds,
  freshCard,
  ok,
  paidOut,
  recharged,
  refused,
  type CardRulesSuiteContext,
} from './ledger-card-rules-suite.ts';

const TIERS: BonusTier[] = [
  { minAmount: '20.00', bonusCredits: 2 },
  { minAmount: '50.00', bonusCredits: 8 },
  { minAmount: '100.00', bonusPercent: '10.00' },
];

export function defineBonusTests(context: () => CardRulesSuiteContext): void {
  async function bonusShop(rules: Partial<CardRules> = { bonusTiers: TIERS }, cost = '0.50') {
    const shop = await context().newShop(10_000, cost);
    const { customerId } = (await shop.customer()).body;
    await setCardRules(context().db, customerId, rules);
    return { shop, customerId };
  }

  describe('bonus tiers', () => {
    test('when a shop has no tiers, then every price rule holds as documented: credits = floor(amount / cost), rechargeAmount and dischargedAmount = credits x cost', async () => {
      const shop = await context().newShop(1000, '0.30');
      const card = freshCard();
      const recharge = await recharged(shop, card, { amount: '20.00' });
      assert.deepEqual(
        { credits: recharge.credits, amount: recharge.amount, bonus: recharge.bonusCredits },
        { credits: 66, amount: '19.80', bonus: 0 },
      );
      const { customerId } = (await shop.customer()).body;
      await setCreditCost(context().db, customerId, 4000n);
      const payout = await paidOut(shop, card, 66);
      assert.deepEqual(
        { amount: payout.amount, bonus: payout.bonusCredits },
        { amount: '26.40', bonus: 0 },
        'at the cost now, as before tiers existed',
      );
      await bookHolds(context().db);
    });

    test('when a shop has tiers, then a recharge by amount gets the highest tier its paid amount reaches, out of the pool, and a recharge by credits gets exactly what it asks', async () => {
      const { shop } = await bonusShop();
      const customer = (await shop.customer()).body;
      assert.deepEqual(customer.cards.bonusTiers, TIERS);
      const cases: [string, number, number, string][] = [
        ['19.99', 39, 0, '19.50'],
        ['20.00', 40, 2, '20.00'],
        ['49.99', 99, 2, '49.50'],
        ['50.00', 100, 8, '50.00'],
        ['100.00', 200, 20, '100.00'],
        ['123.45', 246, 24, '123.00'],
      ];
      for (const [amount, paid, bonus, charged] of cases) {
        const card = freshCard();
        const pool = (await shop.customer()).body.credits;
        const quote = await shop.get(`/v1/bonus-quote?amount=${amount}`);
        ok(quote);
        assert.deepEqual(quote.body, {
          amount,
          paidCredits: paid,
          bonusCredits: bonus,
          rechargeAmount: charged,
          creditCost: '0.50',
        });
        const recharge = await recharged(shop, card, { amount });
        assert.deepEqual(
          { credits: recharge.credits, bonus: recharge.bonusCredits, amount: recharge.amount },
          { credits: paid + bonus, bonus, amount: charged },
          `amount ${amount}`,
        );
        assert.equal((await shop.customer()).body.credits, pool - paid - bonus);
        const account = await accountOf(shop, card);
        assert.deepEqual(
          { credits: account.credits, bonus: account.bonusCredits, paid: account.paidAmount },
          { credits: paid + bonus, bonus, paid: charged },
        );
      }
      const byCredits = await recharged(shop, freshCard(), { credits: 200 });
      assert.deepEqual(
        { credits: byCredits.credits, bonus: byCredits.bonusCredits, amount: byCredits.amount },
        { credits: 200, bonus: 0, amount: '100.00' },
      );
      refused(await shop.get('/v1/bonus-quote?amount=0.25'), 422, 'AmountBelowOneCredit');
      refused(await shop.get('/v1/bonus-quote?amount=abc'), 400, 'InvalidQuery');
      await bookHolds(context().db);
    });

    test('when a card holding bonus credits is paid out, then it spends the bonus first and returns only the euros paid in, at their average price; every credit goes back to the pool', async () => {
      const { shop } = await bonusShop();
      const card = freshCard();
      await recharged(shop, card, { amount: '20.00' }); // 40 + 2 bonus, 20.00
      await recharged(shop, card, { amount: '10.00' }); // 20, 10.00: 62 credits, 60 paid 30.00
      const pool = (await shop.customer()).body.credits;
      const part = await paidOut(shop, card, 17); // 2 bonus, 15 paid at 0.50
      assert.deepEqual(
        { amount: part.amount, bonus: part.bonusCredits },
        { amount: '7.50', bonus: 2 },
      );
      const rest = await paidOut(shop, card, 45);
      assert.deepEqual(
        { amount: rest.amount, bonus: rest.bonusCredits },
        { amount: '22.50', bonus: 0 },
      );
      assert.equal((await shop.customer()).body.credits, pool + 62);
      const account = await accountOf(shop, card);
      assert.deepEqual(
        { credits: account.credits, bonus: account.bonusCredits, paid: account.paidAmount },
        { credits: 0, bonus: 0, paid: '0.00' },
      );
      await bookHolds(context().db);
    });

    test('when the shop spends bonus last, then a part payout takes paid credits first, and a full one forfeits the bonus', async () => {
      const { shop } = await bonusShop({ bonusTiers: TIERS, bonusSpend: 'bonus-last' });
      const card = freshCard();
      await recharged(shop, card, { amount: '50.00' }); // 100 + 8
      const part = await paidOut(shop, card, 30);
      assert.deepEqual(
        { amount: part.amount, bonus: part.bonusCredits },
        { amount: '15.00', bonus: 0 },
      );
      const rest = await paidOut(shop, card, 78);
      assert.deepEqual(
        { amount: rest.amount, bonus: rest.bonusCredits },
        { amount: '35.00', bonus: 8 },
      );
      await bookHolds(context().db);
    });

    test('when prices change between recharges and the payout, then a payout never returns more euros than were paid in: paid credits go at their average price, rounded down, the last of them with what is left', async () => {
      const { shop, customerId } = await bonusShop(
        { bonusTiers: [{ minAmount: '10.00', bonusCredits: 3 }] },
        '0.30',
      );
      const card = freshCard();
      const first = await recharged(shop, card, { amount: '20.00' }); // 66 paid (19.80) + 3
      assert.deepEqual(
        { credits: first.credits, amount: first.amount },
        { credits: 69, amount: '19.80' },
      );
      await setCreditCost(context().db, customerId, 4000n);
      await recharged(shop, card, { amount: '10.00' }); // 25 paid (10.00) + 3
      await setCreditCost(context().db, customerId, 10000n);
      // 97 credits: 6 bonus, 91 paid for 29.80.
      const part = await paidOut(shop, card, 16); // the 6 bonus, 10 paid: 29.80 x 10 / 91
      assert.deepEqual(
        { amount: part.amount, bonus: part.bonusCredits },
        { amount: '3.2747', bonus: 6 },
      );
      const rest = await paidOut(shop, card, 81);
      assert.deepEqual(
        { amount: rest.amount, bonus: rest.bonusCredits },
        { amount: '26.5253', bonus: 0 },
      );
      await bookHolds(context().db);
    });

    test('when a card with bonus credits is paid out at a shop whose tiers are off since, then the bonus rule still pays for paid credits only', async () => {
      const { shop, customerId } = await bonusShop();
      const card = freshCard();
      await recharged(shop, card, { amount: '20.00' });
      await setCardRules(context().db, customerId, { bonusTiers: [] });
      assert.deepEqual((await shop.customer()).body.cards.bonusTiers, []);
      const payout = await paidOut(shop, card, 42);
      assert.deepEqual(
        { amount: payout.amount, bonus: payout.bonusCredits },
        { amount: '20.00', bonus: 2 },
      );
      const plain = await recharged(shop, freshCard(), { amount: '20.00' });
      assert.deepEqual(
        { credits: plain.credits, bonus: plain.bonusCredits },
        { credits: 40, bonus: 0 },
      );
    });

    test('when a till reports float recharges with the bonus it gave, then the bonus is kept apart in the card account, and one above the tiers is flagged', async () => {
      const { shop, customerId } = await bonusShop();
      await setFloatSettings(context().db, customerId, { size: 500 });
      const tillId = randomUUID();
      const float = await shop.post('/v1/floats', { tillId, requestId: randomUUID(), ids: 5 });
      ok(float, 201);
      const [card, other] = [freshCard(), freshCard()];
      const item = (seq: number, cardId: string, credits: number, bonusCredits: number) => ({
        id: floatMovementId(float.body.idPrefix, seq),
        cardId,
        credits,
        bonusCredits,
        card: 'written',
        creditCost: '0.50',
      });
      const report = await shop.post('/v1/float-reports', {
        tillId,
        movements: [item(1, card, 42, 2), item(2, other, 45, 5)],
      });
      ok(report);
      assert.deepEqual(
        report.body.results.map((result: { flags: string[] }) => result.flags),
        [[], ['bonus-above-tiers']],
      );
      const account = await accountOf(shop, card);
      assert.deepEqual(
        { credits: account.credits, bonus: account.bonusCredits, paid: account.paidAmount },
        { credits: 42, bonus: 2, paid: '20.00' },
      );
      const again = await shop.post('/v1/float-reports', {
        tillId,
        movements: [item(1, card, 42, 3)],
      });
      assert.equal(again.body.results[0].outcome, 'refused');
      assert.deepEqual(again.body.results[0].flags, ['conflict']);
      const bad = await shop.post('/v1/float-reports', {
        tillId,
        movements: [item(3, card, 4, 4)],
      });
      refused(bad, 400, 'InvalidReport');
      await bookHolds(context().db);
    });

    test('when a paid amount or a bonus is changed behind the ledger, then check reports the card', async () => {
      const { shop, customerId } = await bonusShop();
      const card = freshCard();
      await recharged(shop, card, { amount: '20.00' });
      await context().db.query(
        `UPDATE card_accounts SET paid_amount = paid_amount + 1, bonus_credits = 0
         WHERE customer_id = $1 AND card_id = $2`,
        [customerId, card],
      );
      const { checkLedger } = await import('../../cloud/check.ts');
      const report = await checkLedger(context().db);
      assert.ok(
        report.problems.some(
          (problem) => problem.includes(`card ${card}`) && problem.includes('paid amount'),
        ),
        report.problems.join('\n'),
      );
      assert.ok(
        report.problems.some(
          (problem) => problem.includes(`card ${card}`) && problem.includes('bonus credits'),
        ),
        report.problems.join('\n'),
      );
      await context().db.query(
        `UPDATE card_accounts SET paid_amount = paid_amount - 1, bonus_credits = 2
         WHERE customer_id = $1 AND card_id = $2`,
        [customerId, card],
      );
      await bookHolds(context().db);
    });
  });
}
