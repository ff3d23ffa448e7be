/**
 * Reconciliation (docs/integrators.md, "Reconciliation"): the ledger's pending movements of
 * every shop this till holds a key for, compared with the journal. This till's are finished or
 * left to their card; other tills' are shown, never resolved; one this till made but whose
 * journal line was lost is adopted and decided by its card.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { errors } from '../../service/errors.ts';
import type { Logger } from '../../service/logger.ts';
import type { WaitingMovement } from '../../service/wallet/movement-engine.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  OTHER_KEY,
  OTHER_SHOP,
  OTHER_TILL,
  SHOP,
  TILL,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  settled,
  simWithShops,
} from '../support/money-rig.ts';

/** A logger that keeps its warnings and errors. */
function recordingLog() {
  const lines: string[] = [];
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message) => lines.push(`warn: ${message}`),
    error: (message) => lines.push(`error: ${message}`),
  };
  return { log, lines };
}

async function setUp(options: Parameters<typeof engineWith>[1] = {}) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const ledger = ledgerOf(sim);
  const rig = engineWith(ledger, options);
  await rig.open();
  const waiting: (readonly WaitingMovement[])[] = [];
  rig.engine.on('waitingForCard', (list) => waiting.push(list));
  return { sim, ledger, ...rig, waiting };
}

describe('reconciliation', () => {
  test("when another till's movement is pending, then it is shown as that till's, never resolved nor overdue", async () => {
    const { sim, engine, ledger, waiting } = await setUp({ uncertainMovementBoundMs: 0 });
    const id = randomUUID();
    const { movement } = sim.create(KEY, {
      id,
      kind: 'discharge',
      cardId: CARD,
      credits: 30,
      tillId: OTHER_TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    await engine.reconcile();
    const expected: WaitingMovement = {
      id,
      kind: 'discharge',
      cardId: CARD,
      credits: 30,
      since: movement.createdAt,
      owner: 'other-till',
      overdue: false,
    };
    assert.deepEqual(engine.waitingForCard, [expected]);
    assert.deepEqual(waiting, [[expected]]);
    assert.equal(sim.get(KEY, id).state, 'pending');
    assert.ok(!ledger.calls.some((call) => call.endsWith(id)), 'neither posted nor voided');
    // The same list again is no change.
    await engine.reconcile();
    assert.equal(waiting.length, 1);
    await engine.close();
  });

  test("when another till's compensation is pending past the bound, then it is flagged overdue for an operator, once, naming the till and what to do, and never resolved here", async () => {
    const recorded = recordingLog();
    const { sim, engine, ledger } = await setUp({
      log: recorded.log,
      uncertainMovementBoundMs: 0,
    });
    const payout = randomUUID();
    sim.create(KEY, {
      id: payout,
      kind: 'discharge',
      cardId: CARD,
      credits: 30,
      tillId: OTHER_TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    sim.resolve(KEY, payout, 'voided', { tillId: OTHER_TILL });
    // The other till read the card, which held the payout: it made a compensation, then went
    // quiet before posting it.
    const compensation = randomUUID();
    sim.create(KEY, {
      id: compensation,
      kind: 'discharge',
      cardId: CARD,
      credits: 30,
      tillId: OTHER_TILL,
      compensates: payout,
    });
    await engine.reconcile();
    assert.deepEqual(
      engine.waitingForCard.map(({ id, owner, overdue }) => ({ id, owner, overdue })),
      [{ id: compensation, owner: 'other-till', overdue: true }],
    );
    await engine.reconcile();
    const flagged = recorded.lines.filter((line) => line.includes('has waited since'));
    assert.equal(flagged.length, 1, `logged once: ${JSON.stringify(recorded.lines)}`);
    assert.match(
      flagged[0] ?? '',
      new RegExp(
        `^error: movement ${compensation} .+: a compensation of till ${OTHER_TILL} \\(of ${payout}\\), which no card write decides: settle the card at any till \\(POST /cards/settle posts it with the card as evidence\\), or have an operator post it with evidence \\(movements post --evidence\\)$`,
      ),
    );
    assert.equal(sim.get(KEY, compensation).state, 'pending');
    assert.ok(
      !ledger.calls.some((call) => call.endsWith(compensation)),
      'neither posted nor voided',
    );
    await engine.close();
  });

  test("when this till's movement is pending but its journal lost it, then it is adopted from the card state it carries and its card decides it", async () => {
    const { sim, engine, journal, waiting } = await setUp();
    const id = randomUUID();
    sim.create(KEY, {
      id,
      kind: 'discharge',
      cardId: CARD,
      credits: 30,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    await engine.reconcile();
    const adopted = journal.movements.get(id);
    assert.deepEqual(adopted && { ...adopted, startedAt: undefined }, {
      id,
      kind: 'discharge',
      cardId: CARD,
      keyFingerprint: fingerprint(KEY),
      idempotency: undefined,
      adopted: true,
      startedAt: undefined,
      reserved: {
        credits: 30,
        amount: '15.00',
        intent: { type: 'classic', slot: 1, value: 0, generation: 2, previousBalance: 30 },
      },
    });
    assert.deepEqual(
      waiting.at(-1)?.map((entry) => entry.owner),
      ['this-till'],
    );
    // The card shows the payout landed: posted when it is presented.
    const card = cardOnReader(30);
    card.slots[1] = encodeValueBlock(0, 2);
    await engine.settle(card.card);
    assert.equal(sim.get(KEY, id).state, 'posted');
    assert.deepEqual(engine.waitingForCard, []);
    await engine.close();
  });

  test("when this till's lost recharge is adopted, then the write it decides by is the balance before plus its credits", async () => {
    const { sim, engine, journal } = await setUp();
    const id = randomUUID();
    sim.create(KEY, {
      id,
      kind: 'recharge',
      cardId: CARD,
      credits: 20,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    await engine.reconcile();
    assert.deepEqual(journal.movements.get(id)?.reserved?.intent, {
      type: 'classic',
      slot: 1,
      value: 50,
      generation: 2,
      previousBalance: 30,
    });
    // The card never got it: voided when it is presented.
    const card = cardOnReader(30);
    await engine.settle(card.card);
    assert.equal(sim.get(KEY, id).state, 'voided');
    await engine.close();
  });

  test("when this till's lost block-clear is adopted, then the write it decides by empties the card, and the card decides it", async () => {
    const { sim, engine, journal } = await setUp();
    sim.cardRules.block(KEY, CARD, true, 'key:test', 'lost');
    const id = randomUUID();
    sim.create(KEY, {
      id,
      kind: 'block-clear',
      cardId: CARD,
      cardCredits: 30,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    await engine.reconcile();
    assert.deepEqual(journal.movements.get(id)?.reserved?.intent, {
      type: 'classic',
      slot: 1,
      value: 0,
      generation: 2,
      previousBalance: 30,
    });
    // The card shows it emptied: posted when it is presented.
    const card = cardOnReader(30);
    card.slots[1] = encodeValueBlock(0, 2);
    await engine.settle(card.card);
    assert.equal(sim.get(KEY, id).state, 'posted');
    await engine.close();
  });

  test("when this till's lost movement carries no card state it can plan from, then it is an operator's, overdue past the bound", async () => {
    const recorded = recordingLog();
    const { sim, engine, journal } = await setUp({
      log: recorded.log,
      uncertainMovementBoundMs: 0,
    });
    const ids = [randomUUID(), randomUUID()];
    sim.create(KEY, {
      id: ids[0] as string,
      kind: 'recharge',
      cardId: CARD,
      credits: 5,
      tillId: TILL,
    });
    sim.create(KEY, {
      id: ids[1] as string,
      kind: 'recharge',
      cardId: CARD,
      credits: 5,
      tillId: TILL,
      cardBefore: 'desfire:v9:whatever',
    });
    await engine.reconcile();
    assert.deepEqual(
      engine.waitingForCard.map(({ id, owner, overdue }) => ({ id, owner, overdue })),
      [
        { id: ids[1], owner: 'operator', overdue: true },
        { id: ids[0], owner: 'operator', overdue: true },
      ],
    );
    assert.equal(journal.movements.size, 0, 'nothing adopted');
    await engine.reconcile();
    const overdue = recorded.lines.filter((line) => line.includes('has waited since'));
    assert.equal(overdue.length, 2, 'each overdue movement is logged once');
    assert.match(
      overdue[0] ?? '',
      /^error: movement .+ \(recharge 5 on card 04E1E2E3\) has waited since/,
    );
    await engine.close();
  });

  test("when this till's movement waits for its card within the bound, then it is listed as not overdue; past the bound, overdue", async () => {
    for (const [bound, overdue] of [
      [60_000, false],
      [0, true],
    ] as const) {
      const { engine, ledger } = await setUp({ uncertainMovementBoundMs: bound });
      const card = cardOnReader(30);
      card.nextWrite = 'lost';
      await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) }).catch(
        () => undefined,
      );
      await engine.reconcile();
      assert.deepEqual(
        engine.waitingForCard.map((entry) => [entry.owner, entry.overdue]),
        [['this-till', overdue]],
      );
      assert.ok(!ledger.calls.some((call) => call.startsWith('void') || call.startsWith('post')));
      await engine.close();
    }
  });

  test('when a movement the journal has to post is pending, then reconciliation posts it', async () => {
    const { sim, engine, ledger } = await setUp({ retryMs: 60_000, maxRetryMs: 60_000 });
    const card = cardOnReader(30);
    ledger.failPosts = true;
    await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) });
    const [movement] = sim.movements.values();
    ledger.failPosts = false;
    await engine.reconcile();
    assert.equal(movement?.state, 'posted');
    assert.equal(engine.unconfirmed, 0);
    await engine.close();
  });

  test('when the journal has a movement resolved that the ledger still holds pending, then the resolution is sent again', async () => {
    for (const state of ['posted', 'voided'] as const) {
      const store = new MemoryStore();
      const { sim, engine } = await setUp({ store });
      const id = randomUUID();
      sim.create(KEY, { id, kind: 'recharge', cardId: CARD, credits: 5, tillId: TILL });
      const at = new Date().toISOString();
      const journal = [
        {
          type: 'started',
          id,
          kind: 'recharge',
          cardId: CARD,
          keyFingerprint: fingerprint(KEY),
          at,
        },
        { type: 'resolved', id, state, at },
        // Answered within 24 h: kept by the journal's compaction.
        { type: 'answered', id, status: 200, body: {}, at },
      ];
      store.text = journal.map((line) => `${JSON.stringify(line)}\n`).join('');
      const reopened = engineWith(ledgerOf(sim), { store });
      await reopened.open();
      await reopened.engine.reconcile();
      assert.equal(sim.get(KEY, id).state, state);
      await reopened.engine.close();
      await engine.close();
    }
  });

  test("when one shop's pending list cannot be read, then the other shops' are still reconciled", async () => {
    const { sim, engine, keys, ledger } = await setUp({ currentKey: () => OTHER_KEY });
    // The key of shop A was replaced by shop B's; it is kept while A's movements need it.
    keys.retire(KEY, () => true);
    const id = randomUUID();
    sim.create(KEY, { id, kind: 'recharge', cardId: CARD, credits: 1, tillId: OTHER_TILL });
    const other = randomUUID();
    sim.importCard(OTHER_SHOP, CARD, 10);
    sim.create(OTHER_KEY, {
      id: other,
      kind: 'recharge',
      cardId: CARD,
      credits: 1,
      tillId: OTHER_TILL,
    });
    const list = ledger.listPendingMovements;
    ledger.listPendingMovements = async (apiKey) => {
      if (apiKey === OTHER_KEY) throw errors.ledgerUnavailable();
      return list(apiKey);
    };
    await engine.reconcile();
    assert.deepEqual(
      engine.waitingForCard.map((entry) => entry.id),
      [id],
    );
    await engine.close();
  });

  test('when movements wait, then each reconciliation warns once, listing each; with none waiting, it says nothing; an unreadable list is a warning', async () => {
    const recorded = recordingLog();
    const { sim, engine, ledger } = await setUp({ log: recorded.log });
    await engine.reconcile();
    assert.equal(recorded.lines.length, 0, 'nothing waits: nothing to say');
    const id = randomUUID();
    sim.create(KEY, { id, kind: 'discharge', cardId: CARD, credits: 30, tillId: OTHER_TILL });
    const second = randomUUID();
    sim.create(KEY, { id: second, kind: 'recharge', cardId: CARD, credits: 2, tillId: OTHER_TILL });
    await engine.reconcile();
    // In the ledger's order, as the waiting list has them.
    const listed = engine.waitingForCard.map((entry) =>
      entry.id === id
        ? `discharge 30 on card ${CARD} (${id}, other-till)`
        : `recharge 2 on card ${CARD} (${second}, other-till)`,
    );
    assert.deepEqual(recorded.lines, [
      `warn: reconciliation: 2 movement(s) wait: ${listed.join(', ')}`,
    ]);
    recorded.lines.length = 0;
    ledger.listPendingMovements = async () => {
      throw new Error('connection refused');
    };
    await engine.reconcile();
    assert.ok(
      recorded.lines.includes(
        'warn: reconciliation: the ledger did not list pending movements (connection refused)',
      ),
      recorded.lines.join('\n'),
    );
    await engine.close();
  });

  test('when a movement that was not waiting is resolved, then the waiting list is not announced again', async () => {
    const { sim, engine, ledger, waiting } = await setUp();
    // Another till's movement on another card waits.
    const otherCard = '04A1A2A3';
    sim.importCard(SHOP, otherCard, 5);
    const other = randomUUID();
    sim.create(KEY, {
      id: other,
      kind: 'recharge',
      cardId: otherCard,
      credits: 1,
      tillId: OTHER_TILL,
    });
    await engine.reconcile();
    assert.equal(waiting.length, 1, JSON.stringify(waiting));
    // This till's own payout lands and is posted: resolved, but it never waited.
    const card = cardOnReader(30);
    const answer = await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) });
    assert.equal(answer.dischargedCredits, 30, JSON.stringify(answer));
    await eventually(() => ledger.calls.some((call) => call.startsWith('post')), 'the post');
    await settled();
    assert.deepEqual(
      waiting.map((list) => list.map((entry) => entry.id)),
      [[other]],
    );
    await engine.close();
  });

  test('when a waiting movement is resolved, then it is no longer listed', async () => {
    const { engine, ledger } = await setUp();
    const card = cardOnReader(30);
    card.nextWrite = 'lost';
    await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) }).catch(
      () => undefined,
    );
    await engine.reconcile();
    assert.equal(engine.waitingForCard.length, 1);
    await engine.settle(card.card);
    await eventually(() => engine.waitingForCard.length === 0, 'the list emptied');
    assert.ok(ledger.calls.some((call) => call.startsWith('post')));
    await engine.close();
  });
});
