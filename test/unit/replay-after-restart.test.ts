/**
 * An Idempotency-Key whose write landed, when the till crashed after journaling that the card
 * holds the write and before journaling the answer: the same key, after the restart (and after
 * the restarts that compact the journal), replays the answer and never writes the card again.
 * Found by the shop simulation (seed 277: a payout's key moved its card twice).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
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
  idempotency,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };
const keyFingerprint = fingerprint(KEY);

/** The journal as a crash right after the card line left it: no answer, nothing resolved. */
function crashedAfterCardLine(text: string): MemoryStore {
  const store = new MemoryStore();
  const lines = text.split('\n').filter((line) => line !== '');
  const card = lines.findIndex((line) => JSON.parse(line).type === 'card');
  store.text = lines
    .slice(0, card + 1)
    .map((line) => `${line}\n`)
    .join('');
  return store;
}

describe('a key replayed after a crash between the card line and the answer line', () => {
  for (const kind of ['recharge', 'discharge'] as const) {
    test(`when a ${kind}'s key comes again after the restart, and again after restarts that compacted the journal, then the first answer and the card is not written again`, async () => {
      const sim = simWithShops();
      sim.importCard(SHOP, CARD, 30);
      const ledger = ledgerOf(sim);
      const card = cardOnReader(30);
      const key = idempotency(`k-${kind}`, kind === 'recharge' ? '{"credits":10}' : '{}');
      const ask = (engine: ReturnType<typeof engineWith>['engine']) =>
        kind === 'recharge'
          ? rechargeCard(card.access, engine, {
              request: { credits: 10 },
              customer,
              keyFingerprint,
              idempotency: key,
            })
          : dischargeCard(card.access, engine, { keyFingerprint, idempotency: key });

      const first = engineWith(ledger);
      await first.open();
      const answer = await ask(first.engine);
      await first.engine.close();
      const held = card.held();
      const writes = card.writes;

      // The restart: the journal holds the card line, not the answer; the movement is posted.
      const store = crashedAfterCardLine(first.store.text);
      const second = engineWith(ledger, { store });
      await second.open();
      await eventually(() => sim.movements.values().next().value?.state === 'posted', 'the post');
      assert.deepEqual(await ask(second.engine), answer);
      await second.engine.close();

      // Two more restarts, each compacting the journal: the key is still remembered.
      for (const _ of [1, 2]) {
        const next = engineWith(ledger, { store });
        await next.open();
        assert.deepEqual(await ask(next.engine), answer);
        await next.engine.close();
      }
      assert.equal(card.writes, writes, 'the card written again');
      assert.equal(card.held(), held);
      assert.equal(sim.movements.size, 1, 'a second movement');
    });
  }
});
