/**
 * POST /writecard when the ledger refuses the reservation: its refusals become the spec's
 * errors (status and words the integrator sees), and the card is not written; a block the
 * till's list did not know yet empties the card. And what a reservation carries to the ledger
 * and to the card list.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError } from '../../service/errors.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  SHOP,
  cardOnReader,
  engineWith,
  fingerprint,
  ledgerOf,
  simWithShops,
  cardList,
} from '../support/money-rig.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };

async function refusedWith(code: string) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const ledger = ledgerOf(sim);
  ledger.createMovement = async () => {
    throw new LedgerRefusal(422, code);
  };
  const rig = engineWith(ledger);
  await rig.open();
  const card = cardOnReader(30);
  const failure = await rechargeCard(card.access, rig.engine, {
    keyFingerprint: fingerprint(KEY),
    request: { amount: '0.50' },
    customer,
  }).then(
    (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
    (error: unknown) => error,
  );
  await rig.engine.close();
  return { failure, card };
}

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, message: error.message, detail: error.detail }
    : { not: String(error) };

describe('rechargeCard, refused by the ledger', () => {
  test("when the ledger says the shop's pool cannot cover it, then NoCredits (500), the card not written", async () => {
    const { failure, card } = await refusedWith('NoCredits');
    assert.deepEqual(seen(failure), {
      code: 'NoCredits',
      status: 500,
      message: "The shop's credit pool cannot cover it",
      detail: undefined,
    });
    assert.equal(card.writes, 0);
  });

  test('when the ledger says the amount buys less than one credit at its credit cost, then 400 naming the rule, the card not written', async () => {
    const { failure, card } = await refusedWith('AmountBelowOneCredit');
    assert.deepEqual(seen(failure), {
      code: 'Invalid credits or amount value',
      status: 400,
      message: 'amount below one credit',
      detail: 'amount below one credit',
    });
    assert.equal(card.writes, 0);
  });
});

describe('rechargeCard, reserved at the ledger', () => {
  test("when the ledger refuses the card as blocked (the till's list did not know yet), then CardBlocked, the block is learnt, and the card is emptied by a block-clear", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    sim.cardRules.block(KEY, CARD, true, 'owner', 'lost');
    const rig = engineWith(ledgerOf(sim));
    await rig.open();
    const card = cardOnReader(30);
    const { list, blocks } = cardList();
    const failure = await rechargeCard(card.access, rig.engine, {
      keyFingerprint: fingerprint(KEY),
      request: { credits: 5 },
      customer,
      blocks: list,
    }).then(
      (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
      (error: unknown) => error,
    );
    await rig.engine.close();
    assert.equal((failure as AppError).code, 'CardBlocked', JSON.stringify(seen(failure)));
    assert.match(String((failure as AppError).detail), /the 30 credits it held were cleared/);
    assert.ok(blocks.has(CARD), 'the block is learnt for the next request');
    assert.equal(card.held(), 0, 'the card is emptied');
    const kinds = [...sim.movements.values()].map((m) => [m.kind, m.state]);
    assert.deepEqual(kinds, [['block-clear', 'posted']], 'no recharge; one block-clear');
  });

  test("when a recharge from the pool carries the POS's reference, then the ledger's movement and the answer carry it; without one, none", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const rig = engineWith(ledgerOf(sim));
    await rig.open();
    const card = cardOnReader(30);
    const recharge = (reference?: string) =>
      rechargeCard(card.access, rig.engine, {
        keyFingerprint: fingerprint(KEY),
        request: { credits: 5 },
        customer,
        ...(reference === undefined ? {} : { reference }),
      });
    const withReference = await recharge('POS-17');
    const without = await recharge();
    await rig.engine.close();
    assert.equal(withReference.reference, 'POS-17');
    assert.equal(sim.movements.get(withReference.movementId as string)?.reference, 'POS-17');
    assert.equal(without.reference, null);
    assert.equal(sim.movements.get(without.movementId as string)?.reference, null);
  });

  test('when a card the ledger holds for no one is recharged from the pool, then the card list is not told it was read (no poll of the ledger per sale)', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const rig = engineWith(ledgerOf(sim));
    await rig.open();
    const card = cardOnReader(30);
    const { list, read } = cardList();
    const answer = await rechargeCard(card.access, rig.engine, {
      keyFingerprint: fingerprint(KEY),
      request: { credits: 5 },
      customer,
      blocks: list,
      holds: list,
    });
    await rig.engine.close();
    assert.equal(answer.credits, 35);
    assert.deepEqual(read, []);
  });
});
