// An operator's word on a cashier's undo given without the card, and the card's answer to it,
// over real HTTP (the card simulator, the reference ledger): the undo's write lands but the
// card is pulled before the till knows, the shop owner voids the refund at the ledger ("the
// customer says it failed"), and the card, read at a till again, shows the credits taken off.
// The till sets the books right with a compensating refund (docs/cloud-api.md, "Compensations
// of a card's own movements"): the pool gets the credits, the day report counts one refund, and
// the card is no longer held.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { shown } from '../support/http-client.ts';
import { callLedger, callTill, creditsOnCard, placeCard } from '../support/shop-tills.ts';
import {
  pendingMovements,
  shopCredits,
  startTestLedger,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
let till: TestService;

before(async () => {
  ledger = await startTestLedger();
  till = await startTestService(
    { cloudUrl: ledger.url, simulator: true },
    { limits: ROOMY_LIMITS },
  );
});
after(async () => {
  await till?.close();
  await ledger?.close();
});

interface AtLedger {
  id: string;
  kind: string;
  state: string;
  credits: number;
  compensates: string | null;
  awaitsCard: boolean;
}

async function movementsOf(cardId: string): Promise<AtLedger[]> {
  const account = await callLedger(ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return (account.json as { movements: AtLedger[] }).movements;
}

async function refundLine(): Promise<{ count: number; credits: number; euros: string }> {
  const report = await callLedger(ledger, 'GET', '/v1/reports/day');
  assert.equal(report.status, 200, shown(report));
  return (report.json as { totals: { refunds: { count: number; credits: number; euros: string } } })
    .totals.refunds;
}

test("when an operator voids a cashier's undo without the card and the card, read at a till, holds it, then a compensating refund sets the books right and the card is no longer held", async () => {
  const cardId = await placeCard(till, '04D0C001');
  const sold = await callTill(till, 'POST', '/writecard', { credits: 18 });
  assert.equal(sold.status, 200, shown(sold));
  const { movementId: mistaken } = sold.json as { movementId: string };
  await waitUntil(async () => (await pendingMovements(ledger.url)) === 0, 10_000, 'posted');
  const linesBefore = await refundLine();

  const armed = await callTill(till, 'POST', '/simulator/fault', { fault: 'tear-after-commit' });
  assert.equal(armed.status, 200, shown(armed));
  const torn = await callTill(till, 'POST', '/cards/undo', { movementId: mistaken });
  assert.equal((torn.json as { error?: string }).error, 'CardRemovedDuringWrite', shown(torn));
  const refund = (await movementsOf(cardId)).find((movement) => movement.kind === 'refund');
  assert.equal(refund?.state, 'pending', JSON.stringify(refund));

  // The customer says the undo failed; the shop owner voids it without the card.
  const voided = await callLedger(ledger, 'POST', `/v1/movements/${refund.id}/void`, {
    evidence: 'the customer says the undo failed',
  });
  assert.equal(voided.status, 200, shown(voided));
  assert.equal((voided.json as AtLedger).awaitsCard, true, shown(voided));
  const poolAfterVoid = await shopCredits(ledger.url);

  // The card comes back to the till: it holds the undo (0 credits left).
  const back = await callTill(till, 'POST', '/simulator/put-back', { cardId });
  assert.equal(back.status, 200, shown(back));
  await waitUntil(() => till.readers.status.card?.cardId === cardId, 5_000, 'card seen');
  const settle = await callTill(till, 'POST', '/cards/settle');
  assert.equal(settle.status, 200, shown(settle));
  await waitUntil(
    async () => till.unconfirmedMovements === 0 && (await pendingMovements(ledger.url)) === 0,
    10_000,
    'every movement resolved',
  );

  const movements = await movementsOf(cardId);
  const compensation = movements.find((movement) => movement.compensates === refund.id);
  assert.deepEqual(
    [compensation?.kind, compensation?.state, compensation?.credits],
    ['refund', 'posted', 18],
    JSON.stringify(movements),
  );
  const held = movements.filter((movement) => movement.awaitsCard);
  assert.deepEqual(held, [], 'the card is no longer held');
  assert.equal(await creditsOnCard(till), 0);
  assert.equal(await shopCredits(ledger.url), poolAfterVoid + 18, 'the pool got the credits');
  const account = await callLedger(ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal((account.json as { credits: number }).credits, 0, shown(account));
  const lines = await refundLine();
  assert.equal(lines.count - linesBefore.count, 1, 'one refund, the compensation');
  assert.equal(lines.credits - linesBefore.credits, 18);
  assert.equal(Number(lines.euros) - Number(linesBefore.euros), 9);
  assert.deepEqual((await checkLedger(ledger.db)).problems, []);

  // Free again: the card takes a recharge.
  const next = await callTill(till, 'POST', '/writecard', { credits: 5 });
  assert.equal(next.status, 200, shown(next));
  assert.equal(await creditsOnCard(till), 5);
});
