import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { systemClock } from '../../service/wallet/clock.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { FloatAccount } from '../../service/wallet/float-account.ts';
import { ANSWER_RETENTION_MS } from '../../service/wallet/journal-entries.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { MemoryStore } from '../support/money-rig.ts';

const at = '2026-01-05T08:00:00.000Z';
const floatId = 'f10a7000-0000-4000-8000-000000000001';
const prefix = 'a1b2c3d4e5f6';

/** A float of 100 credits given to the till at `at` (`requestId`: its opening's). */
async function openFloat(
  journal: MovementJournal,
  float: { floatId: string; prefix: string },
  requestId: string,
): Promise<void> {
  await journal.append({
    type: 'float',
    ...float,
    requestId,
    keyFingerprint: 'k',
    idsIssued: 100,
    granted: 100,
    at,
  });
}

/** A float of 100 credits and two of its recharges sold, written and reported, at `at`. */
async function twoSales(journal: MovementJournal): Promise<void> {
  await openFloat(journal, { floatId, prefix }, 'open-1');
  for (const seq of [1, 2]) await sale(journal, { floatId, prefix }, seq, true);
}

/** The float account of the journal in `store` opened a day and an hour after `at`. */
async function accountNextDay(store: MemoryStore): Promise<FloatAccount> {
  const nextDay = new MovementJournal(store);
  await nextDay.open(Date.parse(at) + ANSWER_RETENTION_MS + 60 * 60_000);
  assert.equal(nextDay.movements.size, 0, store.text);
  const book = new MovementBook({
    journal: nextDay,
    tillId: '00000000-0000-4000-8000-0000000000aa',
    keys: new KeyRing(
      () => 'key',
      () => 'k',
    ),
    clock: systemClock,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    newId: () => 'id',
  });
  return new FloatAccount(book);
}

// Found by the shop simulation with floats (npm run simulate -- --seed 6 --floats): after a
// night, the start's compaction dropped a float's two recharges and wrote what they used to the
// file, but the till went on from its memory and sold seq 1 and 2 again (the ledger refused
// both as a conflict, and the cards carried credits no book counted).
test("when a start's compaction drops a float's recharges past their 24 h, then the same journal goes on from the ids and credits they used", async () => {
  const store = new MemoryStore();
  const journal = new MovementJournal(store);
  await journal.open(Date.parse(at));
  await twoSales(journal);
  await journal.close();

  const account = await accountNextDay(store);
  const float = account.float;
  assert.ok(float, store.text);
  assert.deepEqual(
    { next: account.nextId(float)?.id, available: account.available(float) },
    { next: floatMovementId(prefix, 3), available: 80 },
    store.text,
  );
});

/** A float sale of 10 credits journaled at `at`: written and reported, or not written (voided). */
async function sale(
  journal: MovementJournal,
  float: { floatId: string; prefix: string },
  seq: number,
  written: boolean,
): Promise<void> {
  const id = floatMovementId(float.prefix, seq);
  await journal.append({
    type: 'started',
    id,
    kind: 'recharge',
    cardId: `04B1B2B${seq}`,
    keyFingerprint: 'k',
    float: {
      floatId: float.floatId,
      seq,
      credits: 10,
      creditCost: '0.50',
      cardBefore: 'classic:0:0',
    },
    at,
  });
  const intent = { slot: 1 as const, value: 10, generation: 1, previousBalance: 0 };
  await journal.append({ type: 'reserved', id, credits: 10, amount: '5', intent, at });
  await journal.append({ type: 'card', id, outcome: written ? 'committed' : 'not-written', at });
  if (written) await journal.append({ type: 'answered', id, status: 200, body: {}, at });
  await journal.append({ type: 'resolved', id, state: written ? 'posted' : 'voided', at });
}

test("when a start's compaction drops a float sale that was not written, and a sale of the till's earlier, closed float, then the open float counts only its own written sales as sold", async () => {
  const store = new MemoryStore();
  const journal = new MovementJournal(store);
  await journal.open(Date.parse(at));
  const earlier = { floatId: 'f10a7000-0000-4000-8000-000000000002', prefix: 'b1b2c3d4e5f6' };
  await openFloat(journal, earlier, 'open-0');
  await sale(journal, earlier, 1, true);
  await journal.append({ type: 'float-closed', floatId: earlier.floatId, at });
  const current = { floatId, prefix };
  await openFloat(journal, current, 'open-1');
  await sale(journal, current, 1, true);
  await sale(journal, current, 2, false);
  await journal.close();

  const account = await accountNextDay(store);
  const float = account.float;
  assert.equal(float?.floatId, floatId, store.text);
  assert.deepEqual(
    { next: account.nextId(float)?.id, available: account.available(float) },
    { next: floatMovementId(prefix, 3), available: 90 },
    store.text,
  );
});

test("when a start's compaction wrote the float's lines, then the next start reads the same float from the file alone", async () => {
  const store = new MemoryStore();
  const journal = new MovementJournal(store);
  await journal.open(Date.parse(at));
  await twoSales(journal);
  await journal.close();

  // The first start compacts (its float folded again from what it wrote); the second reads
  // only what that compaction left in the file.
  for (const start of ['compacting', 'after the compaction']) {
    const account = await accountNextDay(store);
    const float = account.float;
    assert.ok(float, `${start}: ${store.text}`);
    assert.deepEqual(
      { next: account.nextId(float)?.id, available: account.available(float) },
      { next: floatMovementId(prefix, 3), available: 80 },
      `${start}: ${store.text}`,
    );
  }
});
