/**
 * POST /cards/settle on a card an operator's post holds at the ledger: the answer reports the
 * operator's word (posted) once the card confirmed it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { settleCard } from '../../service/wallet/settle-card.ts';
import {
  CARD,
  KEY,
  OTHER_TILL,
  SHOP,
  engineWith,
  fingerprint,
  shopWithCard,
} from '../support/money-rig.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };

describe("settleCard, on an operator's post given without the card", () => {
  test('when the card holds the recharge an operator posted, then it is reported settled as posted, with no compensation, and the card is free', async () => {
    const { sim, ledger, card, ...here } = await shopWithCard(30);
    const other = engineWith(ledger, { tillId: OTHER_TILL });
    await other.open();
    // The other till's write lands, but the reader never says so: left pending.
    card.nextWrite = 'lost';
    await assert.rejects(
      rechargeCard(card.access, other.engine, {
        keyFingerprint: fingerprint(KEY),
        request: { credits: 20 },
        customer,
      }),
      (error: AppError) => error.code === 'CardRemovedDuringWrite',
    );
    const [movement] = sim.movements.values();
    assert.ok(movement && movement.state === 'pending');
    sim.resolve(KEY, movement.id, 'posted', { evidence: 'operator: the customer has it' });
    assert.equal(movement.awaitsCard, true);
    const answer = await settleCard(
      card.access,
      here.engine,
      { getCardAccount: async (apiKey, cardId) => sim.cardAccountOf(apiKey, cardId) },
      KEY,
    );
    assert.deepEqual(answer, {
      cardId: CARD,
      settled: [
        { id: movement.id, tillId: OTHER_TILL, kind: 'recharge', credits: 20, state: 'posted' },
      ],
      undecided: [],
    });
    assert.equal(movement.awaitsCard, false);
    assert.match(movement.cardEvidence ?? '', /: it holds the write from /);
    await here.engine.close();
    await other.engine.close();
  });
});
