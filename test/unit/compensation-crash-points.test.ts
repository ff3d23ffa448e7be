/**
 * A card that holds a write an operator voided without it (the card reported lost, then found):
 * the till that made the write journals what the card shows and a compensating movement. A
 * crash may come between any two of those journal lines (each is made durable on its own);
 * whichever lines survived, the books must come to match the card once the till is up again.
 * Found by the shop simulation (seed 815678990): the card line survived, the compensation's
 * did not, and the movement was done with nothing left to compensate it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  SHOP,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

/** A journal store that crashes after `left` more lines are durable (undefined: never). */
class CrashingStore extends MemoryStore {
  left: number | undefined;
  override async append(line: string): Promise<void> {
    if (this.left !== undefined) {
      if (this.left === 0) throw new Error('the till crashed');
      this.left -= 1;
    }
    await super.append(line);
  }
}

/**
 * The till's recharge of 20 lands on a card holding 30 while the card leaves; an operator voids
 * it (the card was reported lost). With `learnt`, the till learns the void at reconciliation
 * before the card is back. The card comes back to the till, which crashes after `crashAfter`
 * more journal lines; the till starts again on what was durable, and sees the card again if it
 * still awaits it. What the ledger ends with.
 */
async function crashWhileSettingRight(learnt: boolean, crashAfter: number) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const store = new CrashingStore();
  const first = engineWith(ledgerOf(sim), { store });
  await first.open();
  const card = cardOnReader(30);
  card.nextWrite = 'lost';
  await assert.rejects(
    rechargeCard(card.access, first.engine, {
      request: { credits: 20 },
      customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
      keyFingerprint: fingerprint(KEY),
    }),
    (error: AppError) => error.code === 'CardRemovedDuringWrite',
  );
  assert.equal(card.held(), 50, 'the write landed');
  const [movement] = first.journal.movements.values();
  assert.ok(movement);
  sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
  if (learnt) {
    await first.engine.reconcile();
    assert.equal(first.journal.movements.get(movement.id)?.learnt, true);
  }
  store.left = crashAfter;
  first.engine.start();
  await card.access.withCard((session) => first.engine.settle(session)).catch(() => undefined);
  // Whatever the background was doing, it writes no more lines: the till is down.
  await first.engine.close().catch(() => undefined);

  const durable = new MemoryStore();
  durable.text = store.text;
  const second = engineWith(ledgerOf(sim), { store: durable });
  await second.open();
  second.engine.start();
  await second.engine.reconcile();
  if (second.engine.uncertainCards.has(CARD)) {
    await card.access.withCard((session) => second.engine.settle(session));
  }
  const what = `${learnt ? 'learnt' : 'not learnt'}, crash after ${crashAfter} line(s); journal:\n${durable.text}`;
  await eventually(() => second.engine.unconfirmed === 0, `nothing unconfirmed (${what})`);
  await second.engine.close();
  const compensations = [...sim.movements.values()].filter((m) => m.compensates === movement.id);
  return { sim, movement: sim.movements.get(movement.id), compensations, what };
}

describe('a crash while a till sets right an operator’s void its card disagrees with', () => {
  for (const learnt of [true, false]) {
    test(`when the till ${learnt ? 'had learnt the void before the card came back' : 'learns the void from the card'} and crashes between any two journal lines, then a compensating recharge is posted all the same and the books match the card`, async () => {
      // Beyond the last line a settlement writes: no crash at all.
      for (let crashAfter = 0; crashAfter <= 8; crashAfter += 1) {
        const { sim, movement, compensations, what } = await crashWhileSettingRight(
          learnt,
          crashAfter,
        );
        assert.equal(movement?.state, 'voided', what);
        assert.deepEqual(
          compensations.map((m) => [m.kind, m.credits, m.state]),
          [['recharge', 20, 'posted']],
          what,
        );
        assert.equal(
          sim.cardAccount(SHOP, CARD),
          50,
          `the books hold what the card does (${what})`,
        );
        assert.equal(movement?.awaitsCard, false, `the card is free again (${what})`);
      }
    });
  }
});
