/**
 * The cashier's undo (POST /cards/undo) on the real card path: pcscd with vpcd, nfc-pcsc, the
 * service over real HTTP and a real ledger. A shop gives +10 % from 20.00; the cashier keyed
 * 25.00; machines spent some of it before the undo: the undo takes back what is left, bonus
 * first, and refunds the paid credits at the recharge's price, as the ledger decides (its cloud
 * API, "Refunds: the cashier's undo"). On MIFARE Classic and DESFire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { DEFAULT_DESFIRE_AID } from '../../service/card/desfire/desfire-wallet-format.ts';
import { decodeWallet, planWrite, sectorBlocks } from '../../service/card/wallet-format.ts';
import { startCardRig, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, httpRequest, shown } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualDesfireCard, type AnyVirtualCard } from '../support/virtual-card.ts';

/** The DESFire wallet's value file (docs/card-format.md). */
const VALUE_FILE = 1;

let rig: CardRig;
before(async () => {
  rig = await startCardRig(
    { cardTimeoutMs: 1_500 },
    {
      ledgerReady: async (ledger) => {
        const customerId = await ledger.ledger.authenticate(TEST_API_KEY);
        await setCardRules(ledger.db, customerId, {
          bonusTiers: [{ minAmount: '20.00', bonusPercent: '10' }],
        });
      },
    },
  );
});
after(() => rig?.close());

const post = (path: string, body?: unknown) =>
  apiCaller(() => rig.service.url, TEST_API_KEY)('POST', path, body);

/** A vending machine spends `credits` from the card, with its own key: no till record. */
function machineSpends(card: AnyVirtualCard, credits: number): void {
  if (card instanceof VirtualDesfireCard) {
    const file = card.application(DEFAULT_DESFIRE_AID)?.files.get(VALUE_FILE);
    if (file?.type !== 'value') throw new Error('no wallet value file');
    file.value -= credits;
    return;
  }
  const state = decodeWallet(card.block(4), card.block(5));
  if (state.kind !== 'valid') throw new Error(`card ${card.id}: no valid wallet`);
  const plan = planWrite(state, state.balance - credits);
  card.setBlock(sectorBlocks(1).slots[plan.slot], plan.block);
}

async function refundOf(cardId: string) {
  const res = await httpRequest(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
    contract: false, // the ledger's answer, not the worker's
  });
  assert.equal(res.status, 200, res.text);
  const { movements } = res.json as {
    movements: {
      kind: string;
      credits: number;
      bonusCredits: number;
      amount: string;
      state: string;
    }[];
  };
  return movements.filter((movement) => movement.kind === 'refund');
}

describe('the cashier undoes a recharge machines spent part of', () => {
  for (const type of ['mifare-classic', 'desfire'] as const) {
    test(`when machines spent 15 of a recharge of 25.00 (50 paid + 5 bonus) on a ${type} card, then the undo takes the 40 left, bonus first, and refunds 35 x 0.50 = 17.50`, async () => {
      const card =
        type === 'desfire' ? await rig.desfireCardHolding(0) : await rig.cardHolding(null);
      await rig.present(card);
      try {
        const poolBefore = await shopCredits(rig.ledger.url);
        const recharged = await post('/writecard', { amount: 25 });
        assert.equal(recharged.status, 200, shown(recharged));
        const { movementId, credits } = recharged.json as { movementId: string; credits: number };
        assert.equal(credits, 55, 'the recharge gave 50 paid and 5 bonus credits');
        await rig.settled();
        machineSpends(card, 15);
        assert.equal(walletBalance(card), 40);

        const res = await post('/cards/undo', { movementId });
        assert.equal(res.status, 200, shown(res));
        const answer = res.json as Record<string, unknown>;
        assert.deepEqual(
          {
            credits: answer.credits,
            refundedCredits: answer.refundedCredits,
            refundedAmount: answer.refundedAmount,
            refunds: answer.refunds,
          },
          { credits: 0, refundedCredits: 40, refundedAmount: 17.5, refunds: movementId },
        );
        assert.equal(walletBalance(card), 0, 'the card holds what the undo left: nothing');
        await rig.settled();
        assert.deepEqual(
          (await refundOf(card.id)).map(({ credits, bonusCredits, amount, state }) => ({
            credits,
            bonusCredits,
            amount,
            state,
          })),
          [{ credits: 40, bonusCredits: 5, amount: '17.50', state: 'posted' }],
        );
        // The 55 left the pool; the 40 taken back returned (machines spent the other 15).
        assert.equal(await shopCredits(rig.ledger.url), poolBefore - 15);
        const again = await post('/cards/undo', { movementId });
        assert.equal(again.status, 500, shown(again));
        assert.equal((again.json as { error: string }).error, 'AlreadyUndone', shown(again));
        const report = await checkLedger(rig.ledger.db);
        assert.ok(report.ok, report.problems.join('; '));
      } finally {
        await rig.takeAway();
      }
    });
  }

  test('when machines spent the whole recharge, then NothingToUndo and nothing moves', async () => {
    const card = await rig.cardHolding(null);
    await rig.present(card);
    try {
      const recharged = await post('/writecard', { credits: 6 });
      assert.equal(recharged.status, 200, shown(recharged));
      await rig.settled();
      machineSpends(card, 6);
      const res = await post('/cards/undo', {
        movementId: (recharged.json as { movementId: string }).movementId,
      });
      assert.equal(res.status, 500, shown(res));
      assert.equal((res.json as { error: string }).error, 'NothingToUndo', shown(res));
      assert.equal(walletBalance(card), 0);
      await rig.settled();
      assert.deepEqual(await refundOf(card.id), []);
    } finally {
      await rig.takeAway();
    }
  });
});
