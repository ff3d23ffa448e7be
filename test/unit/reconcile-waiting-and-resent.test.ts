/**
 * Reconciliation, the parts the tray and the operator see: the waiting list as movements
 * leave it one by one, and what the log says when the journal and the ledger disagree (a
 * resolution sent again, and whether it failed) or when a movement the journal lost is adopted.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { WaitingMovement } from '../../service/wallet/movement-engine.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { memoryLogger } from '../support/memory-logger.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  SHOP,
  TILL,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

const SECOND_CARD = '04A1A2A3';

async function setUp(options: Parameters<typeof engineWith>[1] = {}) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  sim.importCard(SHOP, SECOND_CARD, 20);
  const ledger = ledgerOf(sim);
  const log = memoryLogger();
  const rig = engineWith(ledger, { log, ...options });
  await rig.open();
  const announced: (readonly WaitingMovement[])[] = [];
  rig.engine.on('waitingForCard', (list) => announced.push(list));
  return { sim, ledger, log, ...rig, announced };
}

describe('reconciliation: the waiting list', () => {
  test('when two movements wait for their cards and one card comes back, then the other is still listed, and the shorter list is announced', async () => {
    const { engine, announced } = await setUp();
    const first = cardOnReader(30, CARD);
    const second = cardOnReader(20, SECOND_CARD);
    for (const card of [first, second]) {
      // The payout lands, but the reader never says so: the card decides it later.
      card.nextWrite = 'lost';
      await dischargeCard(card.access, engine, { keyFingerprint: fingerprint(KEY) }).catch(
        () => undefined,
      );
    }
    await engine.reconcile();
    // In the ledger's order, whatever it is: compared as sets.
    const cards = (list: readonly WaitingMovement[]) => list.map((entry) => entry.cardId).sort();
    assert.deepEqual(cards(engine.waitingForCard), [SECOND_CARD, CARD]);
    await engine.settle(first.card);
    await eventually(() => engine.waitingForCard.length < 2, 'the first card to leave the list');
    assert.deepEqual(cards(engine.waitingForCard), [SECOND_CARD]);
    assert.deepEqual(announced.map(cards), [[SECOND_CARD, CARD], [SECOND_CARD]]);
    await engine.close();
  });
});

describe('reconciliation: the journal and the ledger disagree', () => {
  /** A movement of this till the journal has resolved as `state`; the ledger still holds it pending. */
  async function resolvedInJournalOnly(state: 'posted' | 'voided') {
    const store = new MemoryStore();
    const { sim, ledger, log } = await setUp({ store });
    const id = randomUUID();
    sim.create(KEY, { id, kind: 'recharge', cardId: CARD, credits: 5, tillId: TILL });
    const at = new Date().toISOString();
    store.text = [
      { type: 'started', id, kind: 'recharge', cardId: CARD, keyFingerprint: fingerprint(KEY), at },
      { type: 'resolved', id, state, at },
      // Answered within 24 h: kept by the journal's compaction.
      { type: 'answered', id, status: 200, body: {}, at },
    ]
      .map((line) => `${JSON.stringify(line)}\n`)
      .join('');
    const reopened = engineWith(ledger, { store, log });
    await reopened.open();
    return { sim, ledger, log, id, engine: reopened.engine };
  }

  test('when the journal has a movement resolved that the ledger holds pending, then the operator is warned, naming it and the resolution sent again', async () => {
    const { sim, log, id, engine } = await resolvedInJournalOnly('posted');
    await engine.reconcile();
    assert.equal(sim.get(KEY, id).state, 'posted');
    assert.ok(
      log.lines.includes(
        `warn reconciliation: movement ${id} is pending at the ledger; the journal has it resolved: post`,
      ),
      log.lines.join('\n'),
    );
    await engine.close();
  });

  test('when the resolution sent again fails, then reconciliation still ends and the warning says which resolution of which movement failed and why', async () => {
    const { sim, ledger, log, id, engine } = await resolvedInJournalOnly('voided');
    ledger.voidMovement = async () => {
      throw new Error('connection reset');
    };
    await engine.reconcile();
    assert.equal(sim.get(KEY, id).state, 'pending');
    assert.ok(
      log.lines.includes(`warn reconciliation: void of ${id}: connection reset`),
      log.lines.join('\n'),
    );
    await engine.close();
  });

  test("when this till's movement is pending but its journal lost it, then the operator is warned that it is adopted and from which card state its write is planned", async () => {
    const { sim, log, engine } = await setUp();
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
    assert.ok(
      log.lines.includes(
        `warn reconciliation: movement ${id} of this till is not in the journal; its card decides it (planned from classic:v1:30:1:0)`,
      ),
      log.lines.join('\n'),
    );
    await engine.close();
  });
});
