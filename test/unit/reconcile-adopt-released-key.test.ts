/**
 * A movement this till made, which its lost journal no longer holds, is adopted with a key the
 * till still holds: the operator may replace that key (and the till release it, no journaled
 * movement needing it) while the ledger's list is on its way. Found by the shop simulation
 * (seed 5525: adopted with the released key, the movement could never be voided).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { SimLedger } from '../simulation/sim-ledger.ts';
import {
  CARD,
  KEY,
  SHOP,
  TILL,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
} from '../support/money-rig.ts';

const NEW_KEY = 'engine-test-key-shop-a-02';

describe('reconcile, a movement to adopt while its key is replaced', () => {
  test('when the key a list came with is released before the adoption, then the movement is adopted at the next reconciliation with the key that lists it, and resolved with it', async () => {
    const sim = new SimLedger(() => Date.now());
    sim.addShop({ id: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' }, [KEY, NEW_KEY]);
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
    let current = KEY;
    const ledger = ledgerOf(sim);
    const list = ledger.listPendingMovements;
    const { engine, journal, keys, open } = engineWith(ledger, { currentKey: () => current });
    const released: string[] = [];
    keys.on('released', (key) => released.push(key));
    // While the first list is on its way, the operator replaces the key: no movement of the
    // (lost) journal needs it, so the till releases it at once.
    let replaced = false;
    ledger.listPendingMovements = async (apiKey) => {
      const pending = await list(apiKey);
      if (!replaced) {
        replaced = true;
        current = NEW_KEY;
        engine.retireKey(KEY);
      }
      return pending;
    };
    await open();
    await engine.reconcile();
    assert.deepEqual(released, [KEY]);
    await engine.reconcile();
    const movement = journal.movements.get(id);
    assert.equal(movement?.adopted, true, 'adopted');
    assert.equal(movement?.keyFingerprint, fingerprint(NEW_KEY));
    // The card, seen, shows the write did not land: the till voids it with the key it holds.
    const card = cardOnReader(30);
    await card.access.withCard((session) => engine.settle(session));
    await eventually(() => sim.movements.get(id)?.state === 'voided', 'the void');
    await engine.close();
  });
});
