/**
 * Work that will journal a movement made with a key keeps that key while it runs: the operator
 * may replace the key (and the till release it, no journaled movement needing it) meanwhile,
 * and a movement journaled with a released key could never be posted or voided. Found by the
 * shop simulation:
 * - seed 5525: a movement this till made, which its lost journal no longer holds, adopted from
 *   the ledger's list with the key the list came with, released while the list was on its way;
 * - seed 1119: the compensation a request makes for an operator's word on its card (the card
 *   held at the ledger), made with the request's key, released while the ledger was asked.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { SimLedger } from '../simulation/sim-ledger.ts';
import type { AppError } from '../../service/errors.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  OTHER_TILL,
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

describe("a request deciding a card held for an operator's word while its key is replaced", () => {
  test("when the key is replaced while the ledger is asked what holds the card, then the compensation is made and posted with the request's key, which is released only after", async () => {
    const sim = new SimLedger(() => Date.now());
    sim.addShop({ id: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' }, [KEY, NEW_KEY]);
    sim.importCard(SHOP, CARD, 30);
    // Another till's recharge, which the card (still 30) does not hold, posted by an operator
    // without the card: the ledger holds the card until a till reads it.
    const id = randomUUID();
    sim.create(KEY, {
      id,
      kind: 'recharge',
      cardId: CARD,
      credits: 20,
      tillId: OTHER_TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    sim.resolve(KEY, id, 'posted', { evidence: 'operator: the customer says it landed' });
    let current = KEY;
    const ledger = ledgerOf(sim);
    const { engine, journal, keys, open } = engineWith(ledger, { currentKey: () => current });
    const released: string[] = [];
    keys.on('released', (key) => released.push(key));
    const account = ledger.getCardAccount;
    ledger.getCardAccount = async (apiKey, cardId) => {
      const answer = await account(apiKey, cardId);
      if (current === KEY) {
        // The request's refused create is settled (absent): no journaled movement needs the
        // key when the operator replaces it.
        const settled = () => [...journal.movements.values()].every((m) => m.resolved);
        await eventually(settled, 'the refused create settled');
        current = NEW_KEY;
        engine.retireKey(KEY);
      }
      return answer;
    };
    await open();
    const card = cardOnReader(30);
    await rechargeCard(card.access, engine, {
      request: { credits: 10 },
      customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
      keyFingerprint: fingerprint(KEY),
    }).catch((error: AppError) => assert.fail(`${error.code}: ${error.message}`));
    const compensation = [...sim.movements.values()].find((m) => m.compensates === id);
    await eventually(() => compensation?.state === 'posted', 'the compensation posted');
    await eventually(() => released.includes(KEY), 'the key released');
    await engine.close();
  });
});
