import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  amountForCredits,
  creditsForAmount,
  formatDecimal,
  parseDecimal,
  parseStoredDecimal,
} from '../../common/decimal.ts';

describe('decimal money arithmetic', () => {
  test('when decimals are printed, then they have at least 2 decimals and no trailing zeros beyond', () => {
    assert.equal(formatDecimal(5000n), '0.50');
    assert.equal(formatDecimal(1250n), '0.125');
    assert.equal(formatDecimal(10000n), '1.00');
    assert.equal(formatDecimal(3333n), '0.3333');
    assert.equal(formatDecimal(0n), '0.00');
    assert.equal(formatDecimal(123456789n), '12345.6789');
  });

  test('when decimal text is parsed, then only plain non-negative decimals within the bounds are accepted', () => {
    assert.equal(parseDecimal('12.5'), 125000n);
    assert.equal(parseDecimal('0.0001'), 1n);
    assert.equal(parseDecimal('007'), 70000n);
    for (const text of ['', '.5', '5.', '-1', '1e3', '1,5', ' 1', '0x10', '1.00001']) {
      assert.equal(parseDecimal(text), undefined, text);
    }
    assert.equal(parseDecimal('1.234', { maxDecimals: 2 }), undefined);
    assert.equal(parseDecimal('1234567890123'), undefined);
    assert.equal(parseStoredDecimal('0.5000'), 5000n);
    assert.equal(parseStoredDecimal('12'), 120000n);
  });

  test('when an amount is converted, then credits = floor(amount / cost) exactly, for any amount and cost', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 14n - 1n }), // amount in cents (12 integer digits)
        fc.bigInt({ min: 1n, max: 10n ** 8n }), // cost in ten-thousandths
        (cents, cost) => {
          const amount = cents * 100n;
          const credits = creditsForAmount(amount, cost);
          // n x cost <= amount < (n + 1) x cost: the largest whole number of credits
          assert.ok(amountForCredits(credits, cost) <= amount);
          assert.ok(amountForCredits(credits + 1n, cost) > amount);
          const text = formatDecimal(amount);
          assert.equal(parseDecimal(text), amount);
        },
      ),
    );
  });

  test('when the textbook float traps are converted, then the answers are exact', () => {
    // 0.29 / 0.01 is 28.999999999999996 in binary floating point.
    assert.equal(creditsForAmount(parseDecimal('0.29') ?? 0n, parseDecimal('0.01') ?? 0n), 29n);
    // 3 x 0.1 is 0.30000000000000004 in binary floating point.
    assert.equal(formatDecimal(amountForCredits(3, parseDecimal('0.1') ?? 0n)), '0.30');
    assert.equal(creditsForAmount(parseDecimal('0.3') ?? 0n, parseDecimal('0.1') ?? 0n), 3n);
  });
});
