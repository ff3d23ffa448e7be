// The cashier's undo (docs/integrators.md, "Undoing a recharge"): POST /cards/undo takes back
// this till's newest recharge of the card on the reader, online only, decided at the ledger
// (the recharge still the card's newest write, inside the shop's undo window by the till's
// clock), through the movement engine: journaled, the card written and read back, posted.
// Over real HTTP: tills on the card simulator, one reference ledger (behind a fault proxy for
// the outage).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { systemClock, type Clock } from '../../service/wallet/clock.ts';
import { waitUntil } from '../support/card-rig.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { httpRequest, shown, type HttpResponse } from '../support/http-client.ts';
import { callLedger, callTill, creditsOnCard, placeCard } from '../support/shop-tills.ts';
import { startSimulatorShop, type SimulatorShop } from '../support/simulator-shop.ts';
import {
  pendingMovements,
  shopCredits,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';

let shop: SimulatorShop<'till' | 'other'>;
let ledger: TestLedger;
let proxy: FaultProxy;
/** The till under test: its ledger calls go through the proxy, its clock can be moved on. */
let till: TestService;
/** Another till of the same shop. */
let other: TestService;
/** How far till's clock is ahead of the wall clock. */
let ahead = 0;
const tillClock: Clock = { ...systemClock, now: () => Date.now() + ahead };

before(async () => {
  shop = await startSimulatorShop({
    tills: {
      till: { proxied: true, config: { ledgerTimeoutMs: 500 }, clock: tillClock },
      other: {},
    },
  });
  ledger = shop.ledger;
  ({ till, other } = shop.tills);
  proxy = shop.proxy('till');
});
after(() => shop?.close());
beforeEach(() => {
  proxy.setMode({ kind: 'pass' });
  ahead = 0;
});

async function putBack(at: TestService, cardId: string): Promise<void> {
  const res = await callTill(at, 'POST', '/simulator/put-back', { cardId });
  assert.equal(res.status, 200, shown(res));
  await waitUntil(() => at.readers.status.card?.cardId === cardId, 5_000, 'card seen');
}

async function recharge(at: TestService, body: object): Promise<string> {
  const res = await callTill(at, 'POST', '/writecard', body);
  assert.equal(res.status, 200, shown(res));
  return (res.json as { movementId: string }).movementId;
}

const undo = (movementId: string, headers = {}, at = till) =>
  callTill(at, 'POST', '/cards/undo', { movementId }, headers);

/** Every movement resolved at both tills and at the ledger. */
async function settled(): Promise<void> {
  await waitUntil(
    async () =>
      till.unconfirmedMovements === 0 &&
      other.unconfirmedMovements === 0 &&
      (await pendingMovements(ledger.url)) === 0,
    10_000,
    'every movement resolved',
  );
}

interface LedgerMovement {
  id: string;
  kind: string;
  credits: number;
  amount: string;
  state: string;
  refunds?: string | null;
}

async function refundsOf(cardId: string): Promise<LedgerMovement[]> {
  const account = await callLedger(ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return (account.json as { movements: LedgerMovement[] }).movements.filter(
    (movement) => movement.kind === 'refund',
  );
}

function assertRefused(res: HttpResponse, code: string, detail?: RegExp): void {
  assert.equal(res.status, 500, shown(res));
  assert.equal((res.json as { error: string }).error, code, shown(res));
  if (detail) assert.match((res.json as { detail: string }).detail, detail, shown(res));
}

async function refundTotals(): Promise<{ count: number; credits: number; euros: string }> {
  const report = await callLedger(ledger, 'GET', '/v1/reports/day');
  assert.equal(report.status, 200, shown(report));
  return (report.json as { totals: { refunds: { count: number; credits: number; euros: string } } })
    .totals.refunds;
}

describe('POST /cards/undo', () => {
  test('when the cashier undoes a mistaken recharge, then the card and the pool are back, and the day report shows the refund', async () => {
    const cardId = await placeCard(till, '04D0A001');
    await recharge(till, { credits: 10 });
    const reportBefore = await refundTotals();
    const poolBefore = await shopCredits(ledger.url);
    // Keyed 50.00 instead of 5.00.
    const mistaken = await recharge(till, { amount: 50 });
    assert.equal(await creditsOnCard(till), 110);

    const withReference = await undo(mistaken, { 'Pos-Reference': 'undo-1' });
    assert.equal(withReference.status, 400, shown(withReference));
    assert.equal((withReference.json as { error: string }).error, 'InvalidReference');
    const res = await undo(mistaken);
    assert.equal(res.status, 200, shown(res));
    const answer = res.json as Record<string, unknown>;
    assert.deepEqual(
      { ...answer, movementId: typeof answer.movementId, occurredAt: typeof answer.occurredAt },
      {
        cardId,
        credits: 10,
        refundedCredits: 100,
        refundedAmount: 50,
        refunds: mistaken,
        movementId: 'string',
        occurredAt: 'string',
        reference: null,
      },
    );
    assert.equal(await creditsOnCard(till), 10);
    await settled();
    assert.equal(await shopCredits(ledger.url), poolBefore, 'the 100 credits are back in the pool');
    assert.deepEqual(
      (await refundsOf(cardId)).map(({ id, credits, amount, state, refunds }) => ({
        id,
        credits,
        amount,
        state,
        refunds,
      })),
      [
        {
          id: answer.movementId,
          credits: 100,
          amount: '50.00',
          state: 'posted',
          refunds: mistaken,
        },
      ],
    );
    const reportAfter = await refundTotals();
    assert.equal(reportAfter.count - reportBefore.count, 1);
    assert.equal(reportAfter.credits - reportBefore.credits, 100);
    assert.equal(Number(reportAfter.euros) - Number(reportBefore.euros), 50);
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test("when the recharge's post has not reached the ledger yet (its answer came first), then the undo posts it first and goes through", async () => {
    const cardId = await placeCard(till, '04D0A00F');
    const isPost = (method: string, path: string) => method === 'POST' && path.endsWith('/post');
    const postsSeen = () => proxy.requests.filter((seen) => isPost(seen.method, seen.path)).length;
    const before = postsSeen();
    proxy.setMode({ kind: 'error500' }, isPost);
    const mistaken = await recharge(till, { credits: 33 });
    // The worker gave up on this try (an attempt and two retries); the outbox tries later.
    await waitUntil(() => postsSeen() - before >= 3, 10_000, 'the post tried and given up');
    proxy.setMode({ kind: 'pass' });
    const res = await undo(mistaken);
    assert.equal(res.status, 200, shown(res));
    assert.equal((res.json as { refundedCredits: number }).refundedCredits, 33);
    assert.equal(await creditsOnCard(till), 0);
    await settled();
    assert.deepEqual(
      (await refundsOf(cardId)).map((movement) => movement.state),
      ['posted'],
    );
  });

  test('when the same recharge is undone twice, then the second is refused AlreadyUndone and nothing moves', async () => {
    await placeCard(till, '04D0A002');
    const mistaken = await recharge(till, { credits: 40 });
    const first = await undo(mistaken);
    assert.equal(first.status, 200, shown(first));
    const second = await undo(mistaken);
    assertRefused(second, 'AlreadyUndone', new RegExp(`recharge ${mistaken}`));
    assert.equal(await creditsOnCard(till), 0);
    await settled();
    assert.equal((await refundsOf('04D0A002')).length, 1);
  });

  test('when the same undo is asked again with its Idempotency-Key, then the first answer is replayed; with another body the key is refused', async () => {
    await placeCard(till, '04D0A003');
    const mistaken = await recharge(till, { credits: 30 });
    const key = { 'Idempotency-Key': randomUUID() };
    const first = await undo(mistaken, key);
    assert.equal(first.status, 200, shown(first));
    await settled();
    const again = await undo(mistaken, key);
    assert.equal(again.status, 200, shown(again));
    assert.deepEqual(again.json, first.json);
    const otherBody = await undo(randomUUID(), key);
    assert.equal(otherBody.status, 422, shown(otherBody));
    assert.deepEqual(otherBody.json, { error: 'IdempotencyKeyReused' });
    assert.equal(await creditsOnCard(till), 0);
    assert.equal((await refundsOf('04D0A003')).length, 1);
  });

  test("when the undo comes after the shop's window by the till's clock, then UndoWindowPassed and nothing moves; inside it, it goes through", async () => {
    await placeCard(till, '04D0A004');
    const mistaken = await recharge(till, { credits: 20 });
    await settled();
    // The shop's window is 10 minutes (the default).
    ahead = 601_000;
    const late = await undo(mistaken);
    assertRefused(late, 'UndoWindowPassed', /undo window is 600 seconds/);
    assert.equal(await creditsOnCard(till), 20);
    assert.deepEqual(await refundsOf('04D0A004'), []);
    ahead = 599_000;
    const inTime = await undo(mistaken);
    assert.equal(inTime.status, 200, shown(inTime));
    assert.equal(await creditsOnCard(till), 0);
  });

  test('when another card is on the reader, then UndoOfAnotherCard and neither card moves', async () => {
    const recharged = await placeCard(till, '04D0A005');
    const mistaken = await recharge(till, { credits: 15 });
    const another = await placeCard(till, '04D0A006');
    await recharge(till, { credits: 3 });
    const res = await undo(mistaken);
    assertRefused(res, 'UndoOfAnotherCard', new RegExp(`${recharged}.*${another}`));
    assert.equal(await creditsOnCard(till), 3);
    await putBack(till, recharged);
    assert.equal(await creditsOnCard(till), 15);
    assert.deepEqual(await refundsOf(recharged), []);
    assert.deepEqual(await refundsOf(another), []);
  });

  test("when the recharge is no longer the card's newest write, then UndoNotNewest and nothing moves", async () => {
    await placeCard(till, '04D0A007');
    const first = await recharge(till, { credits: 8 });
    await recharge(till, { credits: 2 });
    const res = await undo(first);
    assertRefused(res, 'UndoNotNewest', /came after it/);
    assert.equal(await creditsOnCard(till), 10);
    assert.deepEqual(await refundsOf('04D0A007'), []);
  });

  test('when another till made the recharge, then UndoOfAnotherTill and nothing moves', async () => {
    await placeCard(other, '04D0A008');
    const theirs = await recharge(other, { credits: 12 });
    await settled();
    await placeCard(till, '04D0A008');
    const res = await undo(theirs);
    assertRefused(res, 'UndoOfAnotherTill', /undoes only this till's own/);
    assert.deepEqual(await refundsOf('04D0A008'), []);
  });

  test('when the id names no recharge, then UndoRechargeNotFound; a body that is not one is 400 InvalidBody', async () => {
    await placeCard(till, '04D0A009');
    await recharge(till, { credits: 1 });
    assertRefused(await undo(randomUUID()), 'UndoRechargeNotFound', /no posted recharge/);
    for (const body of [{}, { movementId: 'x' }, { movementId: randomUUID(), credits: 1 }, []]) {
      const res = await callTill(till, 'POST', '/cards/undo', body);
      assert.equal(res.status, 400, shown(res));
      assert.equal((res.json as { error: string }).error, 'InvalidBody', shown(res));
    }
    assert.equal(await creditsOnCard(till), 1);
  });

  test('when two undos of one recharge come at once, then one takes it back and the other is refused; the card moves once', async () => {
    await placeCard(till, '04D0A00A');
    const mistaken = await recharge(till, { credits: 25 });
    const answers = await Promise.all([undo(mistaken), undo(mistaken)]);
    const statuses = answers.map((res) => res.status).sort();
    assert.deepEqual(statuses, [200, 500], answers.map(shown).join('\n'));
    const refused = answers.find((res) => res.status === 500) as HttpResponse;
    assertRefused(refused, 'AlreadyUndone');
    // With one Idempotency-Key: the second is told the first is running, or gets its answer.
    const again = await recharge(till, { credits: 7 });
    const key = { 'Idempotency-Key': randomUUID() };
    const keyed = await Promise.all([undo(again, key), undo(again, key)]);
    const ok = keyed.filter((res) => res.status === 200);
    assert.ok(ok.length >= 1, keyed.map(shown).join('\n'));
    for (const res of keyed.filter((answer) => answer.status !== 200)) {
      assert.deepEqual(res.json, { error: 'IdempotencyKeyInUse' }, shown(res));
    }
    for (const res of ok) assert.deepEqual(res.json, ok[0]?.json);
    assert.equal(await creditsOnCard(till), 0);
    await settled();
    assert.equal(
      (await refundsOf('04D0A00A')).filter((movement) => movement.state === 'posted').length,
      2,
    );
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  for (const [fault, landed] of [
    ['tear-before-commit', false],
    ['tear-after-commit', true],
  ] as const) {
    test(`when the card is pulled during the undo's write (${fault}), then CardRemovedDuringWrite, and the card decides it when presented again, exactly once`, async () => {
      const cardId = await placeCard(till, landed ? '04D0A00B' : '04D0A00C');
      const mistaken = await recharge(till, { credits: 18 });
      await settled();
      const poolBefore = await shopCredits(ledger.url);
      const armed = await callTill(till, 'POST', '/simulator/fault', { fault });
      assert.equal(armed.status, 200, shown(armed));
      const res = await undo(mistaken);
      assertRefused(res, 'CardRemovedDuringWrite');
      // Pending at the ledger until the card is seen.
      assert.equal((await refundsOf(cardId))[0]?.state, 'pending');
      await putBack(till, cardId);
      const settle = await callTill(till, 'POST', '/cards/settle');
      assert.equal(settle.status, 200, shown(settle));
      await settled();
      assert.equal(await creditsOnCard(till), landed ? 0 : 18);
      const refunds = await refundsOf(cardId);
      assert.deepEqual(
        refunds.map((movement) => movement.state),
        [landed ? 'posted' : 'voided'],
      );
      assert.equal(await shopCredits(ledger.url), poolBefore + (landed ? 18 : 0));
      // Not landed: the cashier undoes it again; landed: it was undone.
      const retry = await undo(mistaken);
      if (landed) assertRefused(retry, 'AlreadyUndone');
      else assert.equal(retry.status, 200, shown(retry));
      assert.equal(await creditsOnCard(till), 0);
      await settled();
      assert.deepEqual((await checkLedger(ledger.db)).problems, []);
    });
  }

  test('when the shop blocked the card since its recharge, then CardBlocked, the card is emptied as on /writecard, and no refund is made', async () => {
    const cardId = await placeCard(till, '04D0A010');
    const mistaken = await recharge(till, { credits: 14 });
    await settled();
    const blocked = await fetch(`${ledger.url}/v1/cards/${cardId}/block`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'reported stolen' }),
    });
    assert.equal(blocked.status, 200, await blocked.text());
    const res = await undo(mistaken);
    assertRefused(res, 'CardBlocked');
    assert.equal(await creditsOnCard(till), 0, 'emptied with a block-clear');
    await settled();
    assert.deepEqual(await refundsOf(cardId), []);
  });

  test("when an operator's correction waits for the card, then CardChangeWaiting saying an undo does not apply it, and nothing moves", async () => {
    const cardId = await placeCard(till, '04D0A011');
    const mistaken = await recharge(till, { credits: 16 });
    await settled();
    const corrected = await fetch(`${ledger.url}/v1/cards/${cardId}/corrections`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        id: randomUUID(),
        recharge: mistaken,
        credits: 6,
        reason: 'keyed 16',
      }),
    });
    assert.equal(corrected.status, 201, await corrected.text());
    const res = await undo(mistaken);
    assertRefused(res, 'CardChangeWaiting', /an undo does not apply it/);
    assert.equal(await creditsOnCard(till), 16);
    assert.deepEqual(await refundsOf(cardId), []);
  });

  test('when a page of an Origin the till does not allow asks for an undo, then 403 ForbiddenOrigin and nothing moves', async () => {
    await placeCard(till, '04D0A00E');
    const mistaken = await recharge(till, { credits: 4 });
    const res = await undo(mistaken, { Origin: 'https://evil.example' });
    assert.equal(res.status, 403, shown(res));
    assert.equal((res.json as { error: string }).error, 'ForbiddenOrigin', shown(res));
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(await creditsOnCard(till), 4);
    const withoutKey = await httpRequest(`${till.url}/cards/undo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ movementId: mistaken }),
    });
    assert.equal(withoutKey.status, 401, shown(withoutKey));
    assert.equal(await creditsOnCard(till), 4);
    assert.deepEqual(await refundsOf('04D0A00E'), []);
  });

  test('when the ledger cannot be reached, then 500 LedgerUnavailable saying an undo needs it, and the card is untouched', async () => {
    await placeCard(till, '04D0A00D');
    const mistaken = await recharge(till, { credits: 9 });
    await settled();
    proxy.setMode({ kind: 'refuse' });
    const res = await undo(mistaken);
    assertRefused(res, 'LedgerUnavailable', /an undo needs it/);
    assert.equal(await creditsOnCard(till), 9);
    proxy.setMode({ kind: 'pass' });
    await settled();
    assert.deepEqual(
      (await refundsOf('04D0A00D')).filter((movement) => movement.state !== 'voided'),
      [],
    );
    const online = await undo(mistaken);
    assert.equal(online.status, 200, shown(online));
  });
});
