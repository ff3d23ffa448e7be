/**
 * POST /dischargecard when the ledger refuses or cannot take the payout's "before" record: each
 * refusal is the spec's error (or its own code), the card is untouched, and a block the till's
 * list did not know yet empties the card. And the POS's reference, carried to the ledger.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError } from '../../service/errors.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { floatRig } from '../support/float-rig.ts';
import {
  CARD,
  KEY,
  SHOP,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
  cardList,
} from '../support/money-rig.ts';

/** The error a promise fails with (an answer fails the test, printed). */
const failure = (promise: Promise<unknown>): Promise<AppError> =>
  promise.then(
    (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
    (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      return error;
    },
  );

describe('dischargeCard, refused or carried', () => {
  test("when the ledger refuses the card as blocked (the till's list did not know yet), then CardBlocked, the block is learnt, and the card is emptied by a block-clear", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    sim.cardRules.block(KEY, CARD, true, 'owner', 'stolen');
    const rig = engineWith(ledgerOf(sim));
    await rig.open();
    const card = cardOnReader(30);
    const { list, blocks } = cardList();
    const refused = await failure(
      dischargeCard(card.access, rig.engine, { keyFingerprint: fingerprint(KEY), blocks: list }),
    );
    await rig.engine.close();
    assert.equal(refused.code, 'CardBlocked', refused.message);
    assert.match(refused.detail ?? '', /the 30 credits it held were cleared/);
    assert.ok(blocks.has(CARD), 'the block is learnt for the next request');
    assert.equal(card.held(), 0, 'the card is emptied');
    const kinds = [...sim.movements.values()].map((m) => [m.kind, m.state]);
    assert.deepEqual(kinds, [['block-clear', 'posted']], 'no payout; one block-clear');
  });

  test('when the ledger says a change waits for the card and the till has no card list to apply it from, then CardChangeWaiting, the card untouched', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const ledger = ledgerOf(sim);
    ledger.createMovement = async () => {
      throw new LedgerRefusal(409, 'CardChangeWaiting');
    };
    const rig = engineWith(ledger);
    await rig.open();
    const card = cardOnReader(30);
    const refused = await failure(
      dischargeCard(card.access, rig.engine, { keyFingerprint: fingerprint(KEY) }),
    );
    await rig.engine.close();
    assert.deepEqual([refused.code, refused.status], ['CardChangeWaiting', 500], refused.message);
    assert.deepEqual([card.held(), card.writes], [30, 0]);
  });

  test("when a payout carries the POS's reference, then the ledger's movement and the answer carry it; without one, none", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    sim.importCard(SHOP, '04A1A2A3', 20);
    const rig = engineWith(ledgerOf(sim));
    await rig.open();
    const withReference = await dischargeCard(cardOnReader(30).access, rig.engine, {
      keyFingerprint: fingerprint(KEY),
      reference: 'POS-18',
    });
    const without = await dischargeCard(cardOnReader(20, '04A1A2A3').access, rig.engine, {
      keyFingerprint: fingerprint(KEY),
    });
    await rig.engine.close();
    assert.equal(withReference.reference, 'POS-18');
    assert.equal(sim.movements.get(withReference.movementId as string)?.reference, 'POS-18');
    assert.equal(without.reference, null);
    assert.equal(sim.movements.get(without.movementId as string)?.reference, null);
  });

  test("when the till's own float recharge of the card cannot be reported before the payout, then ErrorTrackingDischargeMovement saying so, no payout created, the card untouched", async () => {
    const rig = floatRig();
    await rig.open();
    rig.customer();
    rig.engine.start();
    await rig.clock.advance(0);
    await eventually(() => rig.floats.status().state === 'online', 'the float open');
    const card = cardOnReader(0, CARD, { spare: true });
    // The ledger stops answering; the till has not noticed yet (still online).
    rig.ledger.down = true;
    await rechargeCard(card.access, rig.engine, {
      request: { credits: 20 },
      customer: rig.customer(),
      keyFingerprint: fingerprint(KEY),
    });
    assert.equal(rig.floats.keeper.online, true);
    const before = rig.sim.movements.size;
    const refused = await failure(
      dischargeCard(card.access, rig.engine, { keyFingerprint: fingerprint(KEY) }),
    );
    await rig.engine.close();
    assert.deepEqual([refused.code, refused.status], ['ErrorTrackingDischargeMovement', 500]);
    assert.equal(
      refused.detail,
      'the float recharges on this card could not be reported to the ledger first',
    );
    assert.equal(card.held(), 20);
    assert.equal(rig.sim.movements.size, before, 'no payout created');
  });
});
