/**
 * What the money engine shows the tray and the service around it: the count of movements the
 * ledger has not confirmed (an event), the compensations the ledger refused, the movements
 * overdue after the documented 24 hours, reconciliation on demand, a suspect card read, each
 * pass of the outbox, and nothing left running once it is closed.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  ManualClock,
  OTHER_TILL,
  SHOP,
  TILL,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

const HOUR = 60 * 60 * 1000;

describe('MovementEngine, what it shows', () => {
  test('when a payout is not confirmed by the ledger at first, then the engine announces one unconfirmed movement, and none once the outbox posted it', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const ledger = ledgerOf(sim);
    const { engine, open } = engineWith(ledger);
    await open();
    const counts: number[] = [];
    engine.on('unconfirmed', (count) => counts.push(count));
    ledger.failPosts = true;
    const card = cardOnReader(30);
    await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) });
    await eventually(() => engine.unconfirmed === 1, 'the post to go unconfirmed');
    assert.ok(counts.includes(1), `announced: ${JSON.stringify(counts)}`);
    ledger.failPosts = false;
    await eventually(() => engine.unconfirmed === 0, 'the outbox to post it');
    assert.equal(counts.at(-1), 0, `announced: ${JSON.stringify(counts)}`);
    assert.equal([...sim.movements.values()][0]?.state, 'posted');
    await engine.close();
  });

  test('when the journal holds a compensation the ledger refused beside settled movements, then only the refused compensation is listed as a conflict', async () => {
    const store = new MemoryStore();
    const at = new Date().toISOString();
    const paid = randomUUID();
    const compensation = randomUUID();
    const intent = { slot: 1, value: 30, generation: 2, previousBalance: 20 };
    store.text = [
      { type: 'started', id: paid, kind: 'recharge', cardId: CARD, keyFingerprint: 'k', at },
      { type: 'reserved', id: paid, credits: 10, amount: '5.00', intent, at },
      { type: 'card', id: paid, outcome: 'committed', at },
      { type: 'resolved', id: paid, state: 'voided', at },
      { type: 'answered', id: paid, status: 200, body: {}, at },
      {
        type: 'started',
        id: compensation,
        kind: 'recharge',
        cardId: CARD,
        keyFingerprint: 'k',
        compensates: paid,
        credits: 10,
        at,
      },
      { type: 'conflict', id: compensation, detail: 'NoCredits', at },
    ]
      .map((line) => `${JSON.stringify(line)}\n`)
      .join('');
    const { engine, open } = engineWith(ledgerOf(simWithShops()), { store });
    await open();
    assert.deepEqual(
      engine.conflicts.map((movement) => [movement.id, movement.conflict]),
      [[compensation, 'NoCredits']],
    );
    await engine.close();
  });

  test("when this till's movement has waited 24 hours (the documented default bound), then it is overdue; a moment less, not yet", async () => {
    const sim = simWithShops();
    const clock = new ManualClock();
    const { engine, open } = engineWith(ledgerOf(sim), { clock });
    await open();
    // This till's, lost by its journal, with no card state to plan from: an operator's.
    const { movement } = sim.create(KEY, {
      id: randomUUID(),
      kind: 'recharge',
      cardId: CARD,
      credits: 5,
      tillId: TILL,
    });
    const overdue = () => engine.waitingForCard.map((entry) => [entry.owner, entry.overdue]);
    clock.time = Date.parse(movement.createdAt) + 24 * HOUR - 1;
    await engine.reconcile();
    assert.deepEqual(overdue(), [['operator', false]]);
    clock.time += 1;
    await engine.reconcile();
    assert.deepEqual(overdue(), [['operator', true]]);
    await engine.close();
  });
});

describe('MovementEngine, when it reconciles', () => {
  test('when asked to reconcile soon (the ledger is back), then it reconciles without waiting for the period', async () => {
    const sim = simWithShops();
    const clock = new ManualClock();
    const { engine, open } = engineWith(ledgerOf(sim), { clock });
    await open();
    const id = randomUUID();
    sim.create(KEY, { id, kind: 'recharge', cardId: CARD, credits: 1, tillId: OTHER_TILL });
    engine.reconcileSoon();
    await clock.advance(0);
    assert.deepEqual(
      engine.waitingForCard.map((entry) => entry.id),
      [id],
    );
    await engine.close();
  });

  test('when closed, then nothing is left scheduled: a movement pending later is not reconciled however long the clock runs', async () => {
    const sim = simWithShops();
    const clock = new ManualClock();
    const ledger = ledgerOf(sim);
    const { engine, open } = engineWith(ledger, { clock });
    await open();
    engine.start();
    await clock.advance(0);
    await engine.close();
    assert.equal(clock.pending, 0, `timers left: ${clock.pending}`);
    sim.create(KEY, {
      id: randomUUID(),
      kind: 'recharge',
      cardId: CARD,
      credits: 1,
      tillId: OTHER_TILL,
    });
    await clock.advance(10 * 60_000);
    assert.deepEqual(engine.waitingForCard, []);
  });

  test('when a card read holds more than its newest movement record says, then the engine tells the host the card, its credits and why it is suspect', async () => {
    const { engine, open } = engineWith(ledgerOf(simWithShops()));
    await open();
    const suspects: unknown[] = [];
    engine.on('cardSuspect', (suspect) => suspects.push(suspect));
    const { card } = cardOnReader(35);
    const wallet = await card.readWallet();
    const record = { counter: 3, movementId: randomUUID(), valueAfter: 30 };
    const read = await engine.readWallet({
      ...card,
      readWallet: async () => ({ ...wallet, record }),
    });
    assert.equal(read.suspect, 'card-above-record');
    assert.deepEqual(suspects, [{ cardId: CARD, credits: 35, suspicion: 'card-above-record' }]);
    await engine.readWallet(card);
    assert.equal(suspects.length, 1, 'a card its record explains is not told');
    await engine.close();
  });

  test('when the outbox has gone through what it holds, then the engine says so (outboxPassed), for the service to pass on', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const ledger = ledgerOf(sim);
    const { engine, open } = engineWith(ledger);
    await open();
    let passes = 0;
    engine.on('outboxPassed', () => (passes += 1));
    ledger.failPosts = true;
    await dischargeCard(cardOnReader(30).access, engine, { keyFingerprint: fingerprint(KEY) });
    ledger.failPosts = false;
    await eventually(() => passes > 0 && engine.unconfirmed === 0, 'an outbox pass posted it');
    await engine.close();
  });
});
