/**
 * The body of POST /writecard, parsed before anything touches the card or the ledger: exactly
 * one of `credits` or `amount`, each within the documented bounds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import {
  RECHARGE_BOUNDS,
  buysAtLeastOneCredit,
  parseRechargeRequest,
} from '../../service/wallet/recharge-request.ts';

/** The refusal's detail (its message: which field and rule), or a failure naming what was parsed. */
function refusal(body: unknown): string {
  try {
    const parsed = parseRechargeRequest(body);
    return assert.fail(`parsed ${JSON.stringify(body)} as ${JSON.stringify(parsed)}`);
  } catch (error) {
    assert.equal((error as AppError).code, 'Invalid credits or amount value');
    assert.equal((error as AppError).status, 400);
    return (error as AppError).message;
  }
}

describe('parseRechargeRequest', () => {
  test('when credits are a whole number within 1..100 000, then they are the request', () => {
    assert.deepEqual(parseRechargeRequest({ credits: 1 }), { credits: 1 });
    assert.deepEqual(parseRechargeRequest({ credits: RECHARGE_BOUNDS.maxCredits }), {
      credits: 100_000,
    });
    assert.deepEqual(parseRechargeRequest({ credits: 7, amount: null }), { credits: 7 });
  });

  test('when credits are out of bounds, fractional or not a number, then 400 naming credits', () => {
    for (const credits of [0, -1, 100_001, 1.5, '5', Number.NaN, 2 ** 53, true]) {
      assert.match(refusal({ credits }), /^credits: /, `credits ${String(credits)}`);
    }
  });

  test('when an amount has at most two decimals and is within 0.01..10 000, then it is the canonical decimal', () => {
    assert.deepEqual(parseRechargeRequest({ amount: 12.5 }), { amount: '12.50' });
    assert.deepEqual(parseRechargeRequest({ amount: 0.01 }), { amount: '0.01' });
    assert.deepEqual(parseRechargeRequest({ amount: 10_000 }), { amount: '10000.00' });
    assert.deepEqual(parseRechargeRequest({ amount: 3, credits: null }), { amount: '3.00' });
  });

  test('when an amount is zero, over 10 000, has three decimals or is not a finite number, then 400 naming amount', () => {
    for (const amount of [0, 10_000.01, 1.234, -5, '5', Number.POSITIVE_INFINITY, 1e21, 0.001]) {
      assert.match(refusal({ amount }), /^amount: /, `amount ${String(amount)}`);
    }
  });

  test('when both or neither are given, then 400 saying which', () => {
    assert.equal(refusal({ credits: 5, amount: 2 }), 'send credits or amount, not both');
    const neither = 'the body needs credits or amount, e.g. {"credits": 10}';
    assert.equal(refusal({}), neither);
    assert.equal(refusal({ credits: null, amount: null }), neither);
    assert.equal(refusal(undefined), neither);
    for (const body of [null, 'credits=5', [{ credits: 5 }]]) {
      assert.match(refusal(body), /^the body must be a JSON object with credits or amount \(got /);
    }
  });

  test('when a body is refused, then its detail shows what was sent, its kind, and 40 characters of it at most', () => {
    // What an integrator reads to find their bug: the value as sent, and what kind it was.
    assert.equal(refusal(null), 'the body must be a JSON object with credits or amount (got null)');
    assert.equal(
      refusal([{ credits: 5 }]),
      'the body must be a JSON object with credits or amount (got an array)',
    );
    assert.equal(
      refusal('credits=5'),
      'the body must be a JSON object with credits or amount (got a string)',
    );
    assert.equal(refusal({ credits: '5' }), 'credits: must be a whole number (got a string "5")');
    assert.equal(refusal({ credits: 1.5 }), 'credits: must be a whole number (got 1.5)');
    assert.equal(refusal({ credits: [1] }), 'credits: must be a whole number (got an array [1])');
    assert.equal(
      refusal({ amount: 'x'.repeat(38) }),
      `amount: must be a number of euros (got a string "${'x'.repeat(38)}")`,
    );
    assert.equal(
      refusal({ amount: 'x'.repeat(39) }),
      `amount: must be a number of euros (got a string "${'x'.repeat(39)}...)`,
    );
    assert.equal(
      refusal({ amount: Number.POSITIVE_INFINITY }),
      'amount: must be a number of euros (got Infinity)',
    );
    assert.equal(refusal({ amount: 12.345 }), 'amount: at most 2 decimals (got 12.345)');
    assert.equal(
      refusal({ credit: 5 }),
      '"credit": not a field of /writecard, which takes credits or amount; did you mean credits?',
    );
  });
});

describe('buysAtLeastOneCredit', () => {
  test('when the amount is at least the credit cost, then true; below it, or at a cost of zero, false', () => {
    assert.equal(buysAtLeastOneCredit('0.50', '0.50'), true);
    assert.equal(buysAtLeastOneCredit('0.51', '0.50'), true);
    assert.equal(buysAtLeastOneCredit('0.49', '0.50'), false);
    assert.equal(buysAtLeastOneCredit('5.00', '0.00'), false);
    assert.equal(buysAtLeastOneCredit('5.00', 'free'), false);
    assert.equal(buysAtLeastOneCredit('five', '0.50'), false);
  });
});
