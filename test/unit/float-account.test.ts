/**
 * What a till's float holds by its own count (service/wallet/float-account.ts): the credits its
 * sales may have put on cards, the movement ids it has left, and which sales the ledger must
 * still hear of. The book is a plain object: the journal's folds as the engine leaves them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { floatMovementId, MAX_FLOAT_SEQ } from '../../common/float-ids.ts';
import { FloatAccount, needsReport } from '../../service/wallet/float-account.ts';
import type { TillFloat } from '../../service/wallet/float-entries.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import { PREFIX } from '../support/float-fixtures.ts';

function floatOf(overrides: Partial<TillFloat> = {}): TillFloat {
  return {
    floatId: 'float-1',
    requestId: 'r',
    keyFingerprint: 'k',
    prefix: PREFIX,
    idsIssued: 100,
    granted: 200,
    topUps: new Map(),
    soldBefore: 0,
    seqBefore: 0,
    closing: false,
    closed: false,
    openedAt: '2026-11-26T10:00:00.000Z',
    ...overrides,
  };
}

/** A float sale as the journal folds it: written (default), reserved only, or started only. */
function sale(
  seq: number,
  credits: number,
  how: 'written' | 'reserved' | 'started' | 'not-written' | 'posted' = 'written',
  extra: Partial<Movement> = {},
  floatId = 'float-1',
): Movement {
  return {
    id: floatMovementId(PREFIX, seq),
    kind: 'recharge',
    cardId: '04A1B2C3',
    float: { floatId, seq, credits, creditCost: '0.50', cardBefore: 'classic:v1:blank' },
    ...(how === 'started' ? {} : { reserved: { credits } }),
    ...(how === 'written' || how === 'posted' ? { card: 'committed' } : {}),
    ...(how === 'not-written' ? { card: 'not-written' } : {}),
    ...(how === 'posted' ? { resolved: 'posted' } : {}),
    ...extra,
  } as unknown as Movement;
}

function accountOf(float: TillFloat | undefined, movements: Movement[], owned: string[] = []) {
  const book = {
    journal: { floats: { float } },
    movements: new Map(movements.map((m) => [m.id, m])),
    owned: new Map(owned.map((id) => [id, 'k'])),
  } as unknown as MovementBook;
  return new FloatAccount(book);
}

describe('FloatAccount', () => {
  test('when sales of this float and of an earlier one are in the journal, then only its own count in what it sold and in its next id', () => {
    const float = floatOf({ soldBefore: 5, seqBefore: 2 });
    const account = accountOf(float, [
      sale(3, 10),
      sale(4, 20),
      sale(90, 70, 'written', {}, 'float-0'),
    ]);
    assert.deepEqual(
      account.salesOf(float).map((m) => m.float?.seq),
      [3, 4],
    );
    assert.equal(account.sold(float), 5 + 10 + 20);
    assert.equal(account.available(float), 200 - 35);
    assert.equal(account.nextSeq(float), 5);
    assert.deepEqual(account.nextId(float), { id: floatMovementId(PREFIX, 5), seq: 5 });
    assert.equal(account.idsLeft(float), 100 - 4);
  });

  test('when a sale certainly did not land, or was only started by no running request, then it spends nothing; started by a running one, it does', () => {
    const float = floatOf();
    const running = sale(3, 40, 'started');
    const account = accountOf(
      float,
      [sale(1, 10, 'not-written'), sale(2, 20, 'started'), running, sale(4, 30, 'reserved')],
      [running.id],
    );
    assert.equal(account.sold(float), 40 + 30);
    assert.equal(account.available(float), 200 - 70);
    assert.equal(account.nextSeq(float), 5, 'an id used by a write that failed is not used again');
  });

  test('when every id is used, then none is left and no next id is given; ids past the largest sequence number do not count', () => {
    const float = floatOf({ idsIssued: 2 });
    const account = accountOf(float, [sale(1, 1), sale(2, 1)]);
    assert.equal(account.idsLeft(float), 0);
    assert.equal(account.nextId(float), undefined);
    const huge = floatOf({ idsIssued: MAX_FLOAT_SEQ + 10, seqBefore: MAX_FLOAT_SEQ - 1 });
    assert.equal(accountOf(huge, []).idsLeft(huge), 1);
    assert.equal(accountOf(floatOf({ idsIssued: 5 }), []).idsLeft(floatOf({ idsIssued: 5 })), 5);
  });

  test('when the float is closing or closed, then the till may not sell from it', () => {
    assert.equal(accountOf(floatOf({ closing: true }), []).float, undefined);
    assert.equal(accountOf(floatOf({ closed: true }), []).float, undefined);
    const open = floatOf();
    assert.equal(accountOf(open, []).float, open);
  });

  test('when sales wait to be reported, then the unreported ones are those not done, not owned by a running request, and not undecided ones told already; their credits leave out writes that did not land', () => {
    const float = floatOf();
    const running = sale(5, 50, 'reserved');
    const undecidedTold = sale(6, 60, 'reserved', { reportedUndecided: true } as Partial<Movement>);
    // Told as undecided, its card seen since: to report again, but its credits counted already.
    const decidedSince = sale(7, 70, 'written', { reportedUndecided: true } as Partial<Movement>);
    const account = accountOf(
      float,
      [
        sale(1, 10),
        sale(2, 20, 'posted'),
        sale(3, 30, 'not-written'),
        sale(4, 40, 'reserved'),
        running,
        undecidedTold,
        decidedSince,
      ],
      [running.id],
    );
    assert.deepEqual(
      account.unreported().map((m) => m.float?.seq),
      [1, 3, 4, 7],
    );
    assert.deepEqual(account.unreportedSales(), { movements: 2, credits: 10 + 40 });
    assert.equal(account.unreportedCredits(), 50);
  });

  test('when a sale is undecided, then it needs a report until it was reported so; decided since, it needs one again', () => {
    assert.equal(needsReport(sale(1, 1, 'reserved')), true);
    assert.equal(
      needsReport(sale(1, 1, 'reserved', { reportedUndecided: true } as Partial<Movement>)),
      false,
    );
    assert.equal(
      needsReport(sale(1, 1, 'written', { reportedUndecided: true } as Partial<Movement>)),
      true,
    );
    assert.equal(needsReport(sale(1, 1, 'posted')), false);
  });
});
