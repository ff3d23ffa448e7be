/**
 * POST /writecard when the ledger refuses the reservation: its refusals become the spec's
 * errors (status and words the integrator sees), and the card is not written.
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
