/**
 * Reconciliation of a movement adopted from the ledger whose planned write a crash kept out of
 * the journal: the plan is journaled again, the movement itself is not started again (it keeps
 * when it was first adopted).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  CARD,
  KEY,
  ManualClock,
  MemoryStore,
  SHOP,
  TILL,
  engineWith,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

describe('reconcile, an adopted movement without its plan', () => {
  test('when reconciliation plans it again, then only its plan is journaled: it keeps its first start line and time', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const id = randomUUID();
    sim.create(KEY, {
      id,
      kind: 'recharge',
      cardId: CARD,
      credits: 20,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    const adoptedAt = '2026-01-01T00:00:00.000Z';
    const store = new MemoryStore();
    store.text = `${JSON.stringify({
      type: 'started',
      id,
      kind: 'recharge',
      cardId: CARD,
      keyFingerprint: fingerprint(KEY),
      adopted: true,
      at: adoptedAt,
    })}\n`;
    const clock = new ManualClock();
    clock.time = Date.parse(adoptedAt) + 60 * 60_000;
    const { journal, engine, open } = engineWith(ledgerOf(sim), { store, clock });
    await open();
    await engine.reconcile();
    const movement = journal.movements.get(id);
    assert.equal(movement?.reserved?.credits, 20, JSON.stringify(movement));
    assert.equal(movement?.startedAt, adoptedAt);
    assert.equal(movement?.adopted, true);
    const lines = store.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; id?: string });
    assert.deepEqual(
      lines.filter((line) => line.id === id).map((line) => line.type),
      ['started', 'reserved'],
      store.text,
    );
    await engine.close();
  });
});
