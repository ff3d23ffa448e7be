/**
 * What an amount buys (docs/integrators.md, "Bonus tiers"; GET /quote): the ledger's quote,
 * the one by the price and tiers the till learnt last when the ledger cannot be reached, a
 * ledger from before tiers, and the query's parsing. The http area tests the route; these reach
 * the quote from the unit tests alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BonusQuote, Customer } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import {
  hasBonusTiers,
  parseQuoteQuery,
  quoteAmount,
  quoteByLearntTiers,
} from '../../service/wallet/amount-quote.ts';

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, detail: error.detail }
    : error instanceof LedgerRefusal
      ? { refusal: error.code, status: error.status }
      : { not: String(error) };

/** A shop at 0.50 a credit: 20.00 gets 2 bonus credits, 50.00 gets 10%. */
const shop: Customer = {
  customerId: 'shop',
  name: 'A',
  credits: 1_000,
  creditCost: '0.50',
  cards: {
    undoWindowSeconds: 600,
    bonusSpend: 'bonus-first',
    bonusTiers: [
      { minAmount: '20.00', bonusCredits: 2 },
      { minAmount: '50.00', bonusPercent: '10' },
    ],
  },
};
const noTiers: Customer = { ...shop, cards: undefined };

const answering = (answer: () => Promise<BonusQuote>) => ({ getBonusQuote: answer });
const asked: [string, string][] = [];
const ledgerQuote = answering(async () => ({
  amount: '20.00',
  paidCredits: 40,
  bonusCredits: 5,
  rechargeAmount: '20.00',
  creditCost: '0.50',
}));

describe('quoteAmount', () => {
  test("when the ledger answers, then its quote, the card's credits the paid and bonus ones together, not offline", async () => {
    const quote = await quoteAmount(
      {
        getBonusQuote: async (apiKey, amount) => {
          asked.push([apiKey, amount]);
          return ledgerQuote.getBonusQuote();
        },
      },
      'the-key',
      shop,
      '20.00',
    );
    assert.deepEqual(quote, {
      amount: '20.00',
      paidCredits: 40,
      bonusCredits: 5,
      credits: 45,
      rechargeAmount: '20.00',
      creditCost: '0.50',
      offline: false,
    });
    assert.deepEqual(asked, [['the-key', '20.00']]);
  });

  test('when the ledger cannot be reached, then the quote by the tiers learnt last, offline', async () => {
    const offline = answering(() => Promise.reject(errors.ledgerUnavailable()));
    assert.deepEqual(await quoteAmount(offline, 'k', shop, '20.75'), {
      amount: '20.75',
      paidCredits: 41,
      bonusCredits: 2,
      credits: 43,
      rechargeAmount: '20.50',
      creditCost: '0.50',
      offline: true,
    });
    assert.deepEqual(await quoteAmount(offline, 'k', shop, '0.50'), {
      amount: '0.50',
      paidCredits: 1,
      bonusCredits: 0,
      credits: 1,
      rechargeAmount: '0.50',
      creditCost: '0.50',
      offline: true,
    });
  });

  test('when the ledger cannot be reached and the amount buys less than one credit (or the price is unknown), then the amount is refused', async () => {
    const offline = answering(() => Promise.reject(errors.ledgerUnavailable()));
    const refused = (customer: Customer, amount: string) =>
      quoteAmount(offline, 'k', customer, amount).then((quote) => ({ quote }), seen);
    const below = {
      code: 'Invalid credits or amount value',
      status: 400,
      detail: 'amount below one credit',
    };
    assert.deepEqual(await refused(shop, '0.49'), below);
    assert.deepEqual(await refused({ ...shop, creditCost: '0' }, '5.00'), below);
    assert.deepEqual(await refused({ ...shop, creditCost: 'x' }, '5.00'), below);
  });

  test('when the ledger says the amount buys less than one credit, then the amount is refused', async () => {
    const below = answering(() => Promise.reject(new LedgerRefusal(422, 'AmountBelowOneCredit')));
    assert.deepEqual(await quoteAmount(below, 'k', shop, '0.10').then((q) => ({ q }), seen), {
      code: 'Invalid credits or amount value',
      status: 400,
      detail: 'amount below one credit',
    });
  });

  test('when a ledger from before bonus tiers has no quote (404), then the quote by the price without bonus, not offline; with tiers learnt, the 404 is passed on', async () => {
    const old = answering(() => Promise.reject(new LedgerRefusal(404, 'NotFound')));
    assert.deepEqual(await quoteAmount(old, 'k', noTiers, '20.00'), {
      amount: '20.00',
      paidCredits: 40,
      bonusCredits: 0,
      credits: 40,
      rechargeAmount: '20.00',
      creditCost: '0.50',
      offline: false,
    });
    const passedOn = await quoteAmount(old, 'k', shop, '20.00').then((q) => ({ q }), seen);
    assert.deepEqual(passedOn, { refusal: 'NotFound', status: 404 });
  });

  test("when the ledger refuses otherwise, or fails with the worker's other errors, then that error as it is", async () => {
    const refusing = answering(() => Promise.reject(new LedgerRefusal(401, 'InvalidApiKey')));
    assert.deepEqual(
      await quoteAmount(refusing, 'k', noTiers, '20.00').then((q) => ({ q }), seen),
      {
        refusal: 'InvalidApiKey',
        status: 401,
      },
    );
    const failing = answering(() => Promise.reject(errors.noCard()));
    assert.deepEqual(
      await quoteAmount(failing, 'k', shop, '20.00').then((q) => ({ q }), seen),
      seen(errors.noCard()),
    );
    const broken = answering(() => Promise.reject(new TypeError('boom')));
    assert.deepEqual(await quoteAmount(broken, 'k', shop, '20.00').then((q) => ({ q }), seen), {
      not: 'TypeError: boom',
    });
  });
});

describe('quoteByLearntTiers and hasBonusTiers', () => {
  test('when the amount reaches the highest tier, then its percentage of the credits paid for, rounded down', () => {
    assert.deepEqual(quoteByLearntTiers(shop, '55.30'), {
      amount: '55.30',
      paidCredits: 110,
      bonusCredits: 11,
      credits: 121,
      rechargeAmount: '55.00',
      creditCost: '0.50',
      offline: true,
    });
  });

  test('when the shop has tiers, then it has bonus tiers; with none, or no card rules, not', () => {
    assert.equal(hasBonusTiers(shop), true);
    assert.equal(hasBonusTiers(noTiers), false);
    assert.equal(hasBonusTiers({ ...shop, cards: { ...shop.cards!, bonusTiers: [] } }), false);
    assert.equal(quoteByLearntTiers(noTiers, '50.00').bonusCredits, 0);
  });
});

describe('parseQuoteQuery', () => {
  test('when the query is one amount in euros, then it, written with two decimals', () => {
    assert.equal(parseQuoteQuery({ amount: '20' }), '20.00');
    assert.equal(parseQuoteQuery({ amount: '7.5' }), '7.50');
    assert.equal(parseQuoteQuery({ amount: '0.01' }), '0.01');
    assert.equal(parseQuoteQuery({ amount: '10000.00' }), '10000.00');
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    [
      'another parameter',
      { amount: '5', amounts: '5' },
      '"amounts": not a parameter of /quote, which takes amount; did you mean amount?',
    ],
    [
      'an unrelated parameter',
      { amount: '5', credits: '5' },
      '"credits": not a parameter of /quote, which takes amount',
    ],
    ['no amount', {}, 'the query needs amount, e.g. /quote?amount=20.00'],
    ['the amount twice', { amount: ['5', '6'] }, 'amount: give it once'],
    [
      'not a number',
      { amount: 'five' },
      'amount: must be a number of euros, like 20.00 (got "five")',
    ],
    [
      'a number after text',
      { amount: 'x5' },
      'amount: must be a number of euros, like 20.00 (got "x5")',
    ],
    [
      'text after a number',
      { amount: '5x' },
      'amount: must be a number of euros, like 20.00 (got "5x")',
    ],
    [
      'a bare decimal point',
      { amount: '5.' },
      'amount: must be a number of euros, like 20.00 (got "5.")',
    ],
    [
      'thirteen digits',
      { amount: '1234567890123' },
      'amount: must be a number of euros, like 20.00 (got "1234567890123")',
    ],
    [
      'long text',
      { amount: 'y'.repeat(41) },
      `amount: must be a number of euros, like 20.00 (got "${'y'.repeat(40)}...")`,
    ],
    [
      'forty characters',
      { amount: 'y'.repeat(40) },
      `amount: must be a number of euros, like 20.00 (got "${'y'.repeat(40)}")`,
    ],
    ['three decimals', { amount: '5.001' }, 'amount: at most 2 decimals (got "5.001")'],
    ['zero', { amount: '0.00' }, 'amount: must be 0.01 to 10000.00 euros (got 0.00)'],
    [
      'above the bound',
      { amount: '10000.01' },
      'amount: must be 0.01 to 10000.00 euros (got 10000.01)',
    ],
  ];
  for (const [what, query, detail] of invalid) {
    test(`when the query has ${what}, then 400 saying what it takes`, () => {
      let failure: unknown;
      try {
        failure = { parsed: parseQuoteQuery(query) };
      } catch (error) {
        failure = seen(error);
      }
      assert.deepEqual(failure, { code: 'Invalid credits or amount value', status: 400, detail });
    });
  }
});
