/**
 * A post tells the ledger when its movement happened by the till's clock (`occurredAt`): when
 * the card write was proven, not when the post finally got through. Day reports count a shop's
 * day by it, so a post retried after an outage, or after a restart that compacted the journal,
 * must still name the time of the sale.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock, type Clock } from '../../service/wallet/clock.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  KEY,
  MemoryStore,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

/** The wall clock's timers, with a time that moves only when told. */
function settableClock(start: number): Clock & { time: number } {
  return {
    time: start,
    now() {
      return this.time;
    },
    setTimer: systemClock.setTimer,
    clearTimer: systemClock.clearTimer,
  };
}

const SALE = Date.parse('2026-03-29T00:59:59.000Z');

test('when a post gets through only after an outage and two restarts, then the ledger is told the time the card write was proven', async () => {
  const sim = simWithShops();
  const ledger = ledgerOf(sim);
  const store = new MemoryStore();
  // The movement starts 5 s before its card write is proven (a slow reservation).
  const clock = settableClock(SALE - 5_000);
  const create = ledger.createMovement;
  ledger.createMovement = async (apiKey, movement) => {
    const created = await create(apiKey, movement);
    clock.time = SALE;
    return created;
  };
  const first = engineWith(ledger, { store, clock });
  await first.open();
  const { access, held } = cardOnReader(10);
  ledger.failPosts = true;
  const answer = await rechargeCard(access, first.engine, {
    keyFingerprint: fingerprint(KEY),
    customer: { customerId: 'shop', name: 'A', credits: 1_000, creditCost: '0.50' },
    request: { credits: 5 },
  });
  assert.equal(answer.credits, 15, JSON.stringify(answer));
  assert.equal(held(), 15);
  await first.engine.close();

  // Two hours later (a new local day in most of Europe) the till restarts twice, the ledger
  // still away: the journal is compacted at each open, the second time from its own compaction.
  clock.time = SALE + 2 * 60 * 60 * 1000;
  const restarted = engineWith(ledger, { store, clock });
  await restarted.open();
  await restarted.engine.close();
  ledger.failPosts = false;
  const second = engineWith(ledger, { store, clock });
  await second.open();
  const [movement] = sim.movements.values();
  assert.ok(movement);
  // Reconciliation posts what the journal proves written (at start, as the service does).
  await second.engine.reconcile();
  await eventually(() => movement.state === 'posted', `the post (ledger: ${movement.state})`);
  assert.equal(movement.occurredAt, new Date(SALE).toISOString());
  await second.engine.close();
});
