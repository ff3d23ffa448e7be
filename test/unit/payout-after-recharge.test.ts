/**
 * A payout right after a recharge of the same card at the same till, the recharge's post not
 * confirmed yet (the recharge is answered before its post): the ledger checks the payout
 * against the card's account, which counts posted movements only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
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
} from '../support/money-rig.ts';

test("when a payout follows this till's recharge of the card whose post went unanswered, then the recharge is posted first and the payout goes through, the card not flagged", async () => {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const ledger = ledgerOf(sim);
  // The outbox would post it again only after a minute: the payout comes first.
  const { engine, open } = engineWith(ledger, { retryMs: 60_000, maxRetryMs: 60_000 });
  await open();
  const card = cardOnReader(30);
  const keyFingerprint = fingerprint(KEY);
  ledger.failPosts = true;
  const recharged = await rechargeCard(card.access, engine, {
    request: { credits: 20 },
    customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
    keyFingerprint,
  });
  assert.equal(recharged.credits, 50);
  const recharge = recharged.movementId as string;
  await eventually(
    () => ledger.calls.includes(`post ${recharge}`) && engine.unconfirmed === 1,
    "the recharge's post tried, unanswered",
  );
  assert.equal(sim.movements.get(recharge)?.state, 'pending');

  ledger.failPosts = false;
  const paid = await dischargeCard(card.access, engine, { keyFingerprint }).catch(
    (error: AppError) => ({ refused: error.code, status: error.status, detail: error.detail }),
  );
  assert.ok(!('refused' in paid), `the payout answered: ${JSON.stringify(paid)}`);
  assert.equal(paid.dischargedCredits, 50);
  assert.equal(sim.movements.get(recharge)?.state, 'posted', 'posted first');
  assert.deepEqual(sim.flags, [], 'no card flagged');
  await eventually(() => engine.unconfirmed === 0, 'the payout posted');
  assert.equal(sim.cardAccount(SHOP, CARD), 0);
  assert.equal(card.held(), 0);
  await engine.close();
});
