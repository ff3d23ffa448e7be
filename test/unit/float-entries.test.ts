/**
 * The till float's journal lines and their folds (service/wallet/float-entries.ts): a top-up's
 * answer counted once, only for the float and top-up it answers; a lost float ended only by its
 * own id; a found recharge kept as first seen; and compaction's lines rebuilding the same folds,
 * with the dropped sales carried over and old reported found recharges left out.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LedgerCustomer } from '../../service/cloud/ledger-client.ts';
import {
  emptyFloatFolds,
  floatEntriesOf,
  foldFloatEntry,
  isFloatEntry,
  type FloatEntry,
  type FloatFolds,
} from '../../service/wallet/float-entries.ts';

const AT = '2026-11-26T10:00:00.000Z';
const LATER = '2026-11-26T11:00:00.000Z';

function foldAll(entries: FloatEntry[], folds = emptyFloatFolds()): FloatFolds {
  for (const entry of entries) foldFloatEntry(folds, entry);
  return folds;
}

const opened: FloatEntry = {
  type: 'float',
  floatId: 'float-1',
  requestId: 'open-1',
  keyFingerprint: 'fp-1',
  prefix: 'a1b2c3d4e5f6',
  idsIssued: 100,
  granted: 200,
  at: AT,
};

describe('folding float lines', () => {
  test('when a top-up is answered, then its grant is counted once, only for its own float and top-up, and the ids issued never shrink', () => {
    const folds = foldAll([
      opened,
      { type: 'float-topup', floatId: 'float-1', id: 't1', credits: 150, ids: 100, at: AT },
      { type: 'float-granted', floatId: 'float-1', id: 't1', granted: 120, idsIssued: 200, at: AT },
      // The same answer journaled again (a retry's): nothing more.
      { type: 'float-granted', floatId: 'float-1', id: 't1', granted: 120, idsIssued: 200, at: AT },
      // An answer of a top-up never asked, or of another float: nothing.
      { type: 'float-granted', floatId: 'float-1', id: 't9', granted: 50, idsIssued: 300, at: AT },
      { type: 'float-topup', floatId: 'float-0', id: 't2', credits: 10, ids: 0, at: AT },
      { type: 'float-granted', floatId: 'float-0', id: 't2', granted: 10, idsIssued: 400, at: AT },
      { type: 'float-topup', floatId: 'float-1', id: 't3', credits: 10, ids: 0, at: AT },
      { type: 'float-granted', floatId: 'float-1', id: 't3', granted: 10, idsIssued: 150, at: AT },
    ]);
    assert.equal(folds.float?.granted, 200 + 120 + 10);
    assert.equal(folds.float?.idsIssued, 200);
    assert.deepEqual(
      [...(folds.float?.topUps ?? [])],
      [
        ['t1', { credits: 150, ids: 100, granted: 120 }],
        ['t3', { credits: 10, ids: 0, granted: 10 }],
      ],
    );
  });

  test('when a float is opened, then the open request is done and the float starts with nothing sold, neither closing nor closed', () => {
    const folds = foldAll([
      { type: 'float-open', requestId: 'open-1', keyFingerprint: 'fp-1', at: AT },
      opened,
    ]);
    assert.equal(folds.opening, undefined);
    assert.deepEqual(folds.float, {
      floatId: 'float-1',
      requestId: 'open-1',
      keyFingerprint: 'fp-1',
      prefix: 'a1b2c3d4e5f6',
      idsIssued: 100,
      granted: 200,
      topUps: new Map(),
      soldBefore: 0,
      seqBefore: 0,
      closing: false,
      closed: false,
      openedAt: AT,
    });
  });

  test('when closing and closed lines name another float, then this one stays open', () => {
    const folds = foldAll([
      opened,
      { type: 'float-closing', floatId: 'float-0', at: AT },
      { type: 'float-closed', floatId: 'float-0', at: AT },
    ]);
    assert.equal(folds.float?.closing, false);
    assert.equal(folds.float?.closed, false);
    foldAll(
      [
        { type: 'float-closing', floatId: 'float-1', at: AT },
        { type: 'float-closed', floatId: 'float-1', at: AT },
      ],
      folds,
    );
    assert.equal(folds.float?.closing, true);
    assert.equal(folds.float?.closed, true);
  });

  test('when a lost float is said closed, then only a line of its own id ends the hold', () => {
    const folds = foldAll([
      { type: 'float-lost', floatId: 'float-0', lost: true, at: AT },
      { type: 'float-lost', floatId: 'float-9', lost: false, at: LATER },
    ]);
    assert.deepEqual(folds.lost, { floatId: 'float-0', at: AT });
    foldAll([{ type: 'float-lost', floatId: 'float-0', lost: false, at: LATER }], folds);
    assert.equal(folds.lost, undefined);
  });

  test('when a found recharge is seen again, then it is kept as first seen; its report is noted only if it was found', () => {
    const folds = foldAll([
      { type: 'found', movementId: 'm1', cardId: '04AA', credits: 7, at: AT },
      { type: 'found', movementId: 'm1', cardId: '04BB', credits: 9, at: LATER },
      { type: 'found-reported', movementId: 'm1', at: LATER },
      { type: 'found-reported', movementId: 'm2', at: LATER },
    ]);
    assert.deepEqual(
      [...folds.found],
      [['m1', { cardId: '04AA', credits: 7, at: AT, reportedAt: LATER }]],
    );
  });

  test('when the ledger is noted seen, then it is when the ledger answered (seenAt), or, in a line from before 2.5.0, when the line was written', () => {
    assert.equal(foldAll([{ type: 'ledger-seen', seenAt: AT, at: LATER }]).ledgerSeenAt, AT);
    assert.equal(foldAll([{ type: 'ledger-seen', at: LATER }]).ledgerSeenAt, LATER);
    // Compaction keeps the answer's time.
    const folds = foldAll([{ type: 'ledger-seen', seenAt: AT, at: LATER }]);
    assert.equal(
      foldAll(floatEntriesOf(folds, { sold: 0, seq: 0 }, Date.parse(LATER), 3600_000)).ledgerSeenAt,
      AT,
    );
  });

  test('when the float lines are told from others, then each of its kinds is one, and a movement line is not', () => {
    for (const type of [
      'float-open',
      'float',
      'float-topup',
      'float-granted',
      'float-closing',
      'float-closed',
      'float-lost',
      'found',
      'found-reported',
      'shop',
      'ledger-seen',
    ]) {
      assert.equal(isFloatEntry({ type }), true, type);
    }
    assert.equal(isFloatEntry({ type: 'started' }), false);
    assert.equal(isFloatEntry({ type: 'reserved' }), false);
  });
});

describe("compaction's float lines", () => {
  const shop = { customerId: 'shop-1', creditCost: '0.50' } as LedgerCustomer;
  const rich: FloatEntry[] = [
    { type: 'float-open', requestId: 'open-2', keyFingerprint: 'fp-2', at: AT },
    { ...opened, soldBefore: 30, seqBefore: 9 } as FloatEntry,
    { type: 'float-topup', floatId: 'float-1', id: 't1', credits: 150, ids: 0, at: AT },
    { type: 'float-granted', floatId: 'float-1', id: 't1', granted: 150, idsIssued: 100, at: AT },
    { type: 'float-topup', floatId: 'float-1', id: 't2', credits: 40, ids: 100, at: AT },
    { type: 'float-closing', floatId: 'float-1', at: AT },
    { type: 'float-lost', floatId: 'float-0', lost: true, at: AT },
    { type: 'found', movementId: 'm1', cardId: '04AA', credits: 7, at: AT },
    { type: 'found', movementId: 'm2', cardId: '04BB', credits: 8, at: AT },
    { type: 'found-reported', movementId: 'm2', at: AT },
    { type: 'shop', keyFingerprint: 'fp-1', customer: shop, at: AT },
    { type: 'ledger-seen', at: LATER },
  ];

  test('when the folds are rebuilt from their lines, then they are the same, the dropped sales carried in what was sold before and the highest id', () => {
    const folds = foldAll(rich);
    const lines = floatEntriesOf(folds, { sold: 25, seq: 12 }, Date.parse(LATER), 3600_000);
    const rebuilt = foldAll(lines);
    // The unanswered top-up stays to be asked again; the answered one is in `granted` only.
    assert.deepEqual(rebuilt, {
      ...folds,
      float: {
        ...folds.float,
        soldBefore: 55,
        seqBefore: 12,
        topUps: new Map([['t2', { credits: 40, ids: 100 }]]),
      },
    });
    assert.equal(rebuilt.float?.granted, 350);
    // A highest id dropped below the one carried before does not lower it.
    const lower = foldAll(floatEntriesOf(folds, { sold: 0, seq: 3 }, Date.parse(LATER), 3600_000));
    assert.equal(lower.float?.seqBefore, 9);
  });

  test('when a found recharge was reported longer ago than the time kept, then it is left out; at that age exactly, kept', () => {
    const folds = foldAll(rich);
    const keep = 3600_000;
    const kept = floatEntriesOf(folds, { sold: 0, seq: 0 }, Date.parse(AT) + keep, keep);
    assert.deepEqual([...foldAll(kept).found.keys()], ['m1', 'm2']);
    const dropped = floatEntriesOf(folds, { sold: 0, seq: 0 }, Date.parse(AT) + keep + 1, keep);
    assert.deepEqual([...foldAll(dropped).found.keys()], ['m1'], 'an unreported one is kept');
  });

  test('when an open request is on its way after a float closed, then compaction keeps it with its id, so it is sent again the same and opens one float', () => {
    const folds = foldAll([
      opened,
      { type: 'float-closed', floatId: 'float-1', at: AT },
      { type: 'float-open', requestId: 'open-2', keyFingerprint: 'fp-1', at: LATER },
    ]);
    const lines = floatEntriesOf(folds, { sold: 0, seq: 0 }, Date.parse(LATER), 0);
    assert.deepEqual(lines, [
      { type: 'float-open', requestId: 'open-2', keyFingerprint: 'fp-1', at: LATER },
    ]);
  });

  test('when the float is closed, then compaction keeps none of its lines; with nothing known, no lines', () => {
    const folds = foldAll([opened, { type: 'float-closed', floatId: 'float-1', at: AT }]);
    assert.deepEqual(floatEntriesOf(folds, { sold: 0, seq: 0 }, 0, 0), []);
    assert.deepEqual(floatEntriesOf(emptyFloatFolds(), { sold: 0, seq: 0 }, 0, 0), []);
  });
});
