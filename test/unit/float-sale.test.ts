/**
 * Beginning a recharge paid from the float (service/wallet/float-sale.ts): both journal lines
 * in one append before the card is touched, with the sale's float details, its bonus and POS
 * reference only when it has them; the request owns the movement from before its first line,
 * and gives it up when the sale goes no further (a refused balance, a journal that fails).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import type { WalletCard } from '../../service/card/card-face.ts';
import { planWrite } from '../../service/card/wallet-card.ts';
import { startFloatSale, type FloatSaleInput } from '../../service/wallet/float-sale.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import type { FloatPlan } from '../../service/wallet/till-floats.ts';
import { PREFIX } from '../support/float-fixtures.ts';

const ID = floatMovementId(PREFIX, 1);

function bookOf(failing = false) {
  const appends: Record<string, unknown>[][] = [];
  const owned = new Map<string, string>();
  const ownedAtAppend: boolean[] = [];
  const book = {
    owned,
    append: async (...lines: Record<string, unknown>[]) => {
      ownedAtAppend.push(owned.has(ID));
      if (failing) throw new Error('disk full');
      appends.push(lines);
    },
    movement: (id: string) => ({ id }),
  } as unknown as MovementBook;
  return { book, appends, owned, ownedAtAppend };
}

function inputOf(overrides: Partial<FloatSaleInput> = {}, plan: Partial<FloatPlan> = {}) {
  return {
    keyFingerprint: 'fp-1',
    idempotency: undefined,
    wallet: { cardId: '04A1', balance: 10, before: 'classic:v1:10:2:1' },
    plan: {
      float: { floatId: 'float-1' },
      id: ID,
      seq: 1,
      credits: 30,
      amount: '15.00',
      creditCost: '0.50',
      bonusCredits: 0,
      ...plan,
    } as FloatPlan,
    balanceAfter: (credits: number) => 10 + credits,
    ...overrides,
  } as FloatSaleInput;
}

const card = { cardId: '04A1' } as WalletCard;

describe('startFloatSale', () => {
  test('when a float sale starts, then its started and reserved lines go in one append, owned by the request first, with the card write planned with its evidence', async () => {
    const made = bookOf();
    const released: string[] = [];
    const reservation = await startFloatSale(made.book, card, inputOf(), (id) => released.push(id));
    const intent = planWrite('classic:v1:10:2:1', 40, ID, { float: true });
    assert.deepEqual(made.ownedAtAppend, [true]);
    assert.equal(made.owned.get(ID), 'fp-1');
    assert.deepEqual(made.appends, [
      [
        {
          type: 'started',
          id: ID,
          kind: 'recharge',
          cardId: '04A1',
          keyFingerprint: 'fp-1',
          idempotency: undefined,
          float: {
            floatId: 'float-1',
            seq: 1,
            credits: 30,
            creditCost: '0.50',
            cardBefore: 'classic:v1:10:2:1',
          },
        },
        { type: 'reserved', id: ID, credits: 30, amount: '15.00', intent },
      ],
    ]);
    assert.deepEqual(reservation, { movement: { id: ID }, intent });
    assert.deepEqual(released, []);
  });

  test('when the sale gives a bonus and carries a POS reference, then both lines say so', async () => {
    const made = bookOf();
    await startFloatSale(
      made.book,
      card,
      inputOf({ reference: 'receipt-9' }, { bonusCredits: 5 }),
      () => {},
    );
    const [started, reserved] = made.appends[0] ?? [];
    assert.equal(started?.reference, 'receipt-9');
    assert.equal((started?.float as Record<string, unknown>).bonusCredits, 5);
    assert.equal(reserved?.bonusCredits, 5);
  });

  test('when the balance is refused or the journal fails, then nothing is journaled past it, the movement is released and the error goes up', async () => {
    const refused = bookOf();
    const released: string[] = [];
    const tooMuch = new RangeError('the card would hold more than its maximum');
    await assert.rejects(
      startFloatSale(
        refused.book,
        card,
        inputOf({
          balanceAfter: () => {
            throw tooMuch;
          },
        }),
        (id) => released.push(id),
      ),
      tooMuch,
    );
    assert.deepEqual(refused.appends, []);
    const failing = bookOf(true);
    await assert.rejects(
      startFloatSale(failing.book, card, inputOf(), (id) => released.push(id)),
      /disk full/,
    );
    assert.deepEqual(released, [ID, ID]);
  });
});
