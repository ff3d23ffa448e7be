/**
 * The engine's shared book: which API key a movement still needs (a key is released, or an
 * earlier key retired, only once nothing needs it), and a card's latest movement.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { silentLogger } from '../../service/logger.ts';
import type { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { ManualClock, MemoryStore } from '../support/money-rig.ts';

async function bookOf(): Promise<MovementBook> {
  const journal = new MovementJournal(new MemoryStore());
  await journal.open(0);
  return new MovementBook({
    journal,
    tillId: 'till',
    keys: {} as KeyRing,
    clock: new ManualClock(),
    log: silentLogger,
    newId: () => 'new',
  });
}

async function started(book: MovementBook, id: string, print: string, cardId = 'AA') {
  await book.append({ type: 'started', id, kind: 'recharge', cardId, keyFingerprint: print });
  await book.append({ type: 'reserved', id, credits: 1, amount: '0.5' });
}

describe('MovementBook', () => {
  test('when a request of a key is running, then that key is in use and no other', async () => {
    const book = await bookOf();
    book.owned.set('m1', 'k1');
    assert.equal(book.keyInUse('k1'), true);
    assert.equal(book.keyInUse('k2'), false);
  });

  test("when a key's movement is undecided, then that key is in use, not another key", async () => {
    const book = await bookOf();
    await started(book, 'm1', 'k1');
    assert.equal(book.keyInUse('k1'), true);
    assert.equal(book.keyInUse('k2'), false);
  });

  test('when a movement is done, then its key is free, unless its outcome was learnt with the card away', async () => {
    const book = await bookOf();
    await started(book, 'done', 'k1');
    await book.append({ type: 'card', id: 'done', outcome: 'committed' });
    await book.append({ type: 'resolved', id: 'done', state: 'posted' });
    assert.equal(book.keyInUse('k1'), false);
    await started(book, 'learnt', 'k2');
    await book.append({ type: 'card', id: 'learnt', outcome: 'committed', learnt: true });
    await book.append({ type: 'resolved', id: 'learnt', state: 'posted' });
    assert.equal(book.keyInUse('k2'), true);
  });

  test("when a card's movements are looked up, then its latest is the last of its own that is not a compensation", async () => {
    const book = await bookOf();
    await started(book, 'm1', 'k1', 'AA');
    await started(book, 'm2', 'k1', 'AA');
    await started(book, 'other card', 'k1', 'BB');
    await book.append({
      type: 'started',
      id: 'c1',
      kind: 'discharge',
      cardId: 'AA',
      keyFingerprint: 'k1',
      compensates: 'm1',
      credits: 1,
    });
    assert.equal(book.latestOfCard('AA')?.id, 'm2');
    assert.equal(book.latestOfCard('CC'), undefined);
    assert.equal(book.compensationOf('m1')?.id, 'c1');
    assert.equal(book.compensationOf('m2'), undefined);
  });

  test('when a key is lent to two pieces of work, then it stays in use until both gave it back; giving it back twice counts once', async () => {
    const book = await bookOf();
    Object.assign(book.keys, { keyFor: (print: string) => (print === 'k1' ? 'key-1' : undefined) });
    const first = book.lendKey('k1');
    const second = book.lendKey('k1');
    assert.ok(first && second);
    assert.equal(book.lendKey('k2'), undefined, 'a key not held is not lent');
    first();
    assert.equal(book.keyInUse('k1'), true, 'the second still holds it');
    first();
    assert.equal(book.keyInUse('k1'), true, 'the first gave it back once only');
    second();
    assert.equal(book.keyInUse('k1'), false);
  });
});
