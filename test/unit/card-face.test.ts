// The card face's few functions of its own (card-face.ts) and its planning for any card type
// (wallet-card.ts): a write is planned from the text a card's wallet reads as, a float
// recharge's with its evidence (docs/card-format.md, "The float reference" and section 9).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isAboveRecord, isDesfireIntent, type CardWallet } from '../../service/card/card-face.ts';
import { balanceBefore, isKnownBefore, planWrite } from '../../service/card/wallet-card.ts';

const FLOAT_ID = '22ea3bfc-5b3b-8000-8000-00000000002a';
const MOVEMENT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

describe("the card face's own functions", () => {
  const wallet = (balance: number, valueAfter?: number): CardWallet => ({
    cardId: '04A1B2C3D4E5F6',
    balance,
    before: `desfire:v1:${balance}:3`,
    ...(valueAfter === undefined
      ? {}
      : { record: { counter: 3, movementId: MOVEMENT, valueAfter } }),
  });

  test('when a card holds more than its newest record left it, then it is above its record; as much or less (a machine spent), or no record, not', () => {
    assert.equal(isAboveRecord(wallet(51, 50)), true);
    assert.equal(isAboveRecord(wallet(50, 50)), false);
    assert.equal(isAboveRecord(wallet(20, 50)), false);
    assert.equal(isAboveRecord(wallet(51)), false);
  });

  test("when a write is planned for a DESFire card, then it is a DESFire intent; a Classic card's, or one journaled before the card types (no type), not", () => {
    assert.equal(isDesfireIntent(planWrite('desfire:v1:blank', 5, MOVEMENT)), true);
    assert.equal(isDesfireIntent(planWrite('classic:v1:blank', 5, MOVEMENT)), false);
    assert.equal(
      isDesfireIntent({ slot: 0, value: 5, generation: 1, previousBalance: null }),
      false,
    );
  });
});

describe('planning a write for any card type (wallet-card.ts)', () => {
  test("when a float recharge is planned, then each card type's write carries its evidence; any other write none", () => {
    const desfire = planWrite('desfire:v1:30:3', 50, FLOAT_ID, { float: true });
    assert.deepEqual(desfire, {
      type: 'desfire',
      counter: 4,
      movementId: FLOAT_ID,
      value: 50,
      previousBalance: 30,
      float: true,
    });
    assert.equal('float' in planWrite('desfire:v1:30:3', 50, MOVEMENT), false);
    assert.equal('float' in planWrite('desfire:v1:30:3', 50, MOVEMENT, { float: false }), false);
    const classic = planWrite('classic:v1:30:4:1', 50, FLOAT_ID, { float: true });
    assert.equal(classic.type, 'classic');
    assert.equal(typeof (classic.type === 'classic' && classic.reference), 'string');
    const plain = planWrite('classic:v1:30:4:1', 50, MOVEMENT, {});
    assert.equal(plain.type === 'classic' && plain.reference, undefined);
  });

  test("when a DESFire card's text is read, then its balance before, and it is a known card type", () => {
    assert.equal(balanceBefore('desfire:v1:30:3'), 30);
    assert.equal(balanceBefore('desfire:v1:blank'), 0);
    assert.equal(isKnownBefore('desfire:v1:30:3'), true);
    assert.equal(isKnownBefore('desfire:v1:blank'), true);
    assert.equal(isKnownBefore('desfire:v2:30:3'), false);
    assert.throws(() => planWrite('desfire:v2:30:3', 5, MOVEMENT), {
      name: 'RangeError',
      message: 'no card type reads the wallet state "desfire:v2:30:3"',
    });
  });
});
