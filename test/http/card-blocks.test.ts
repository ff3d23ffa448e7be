// A card the shop blocked (lost, stolen) is refused at every till (docs/integrators.md, "Blocked
// cards"): each till polls the shop's card list and answers /readcard, /writecard and
// /dischargecard with 500 CardBlocked; a till that has not polled since the block gets the
// ledger's 409 CardBlocked on its reservation and answers the same. Nothing moves: no card
// write, no ledger change. Over real HTTP: two tills on the card simulator, one real ledger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse } from '../support/http-client.ts';
import {
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
/** Polls the card list every second. */
let tillA: TestService;
let tillB: TestService;
/** Polls once at start, then only every minute: it learns a block from the ledger's refusal. */
let slowTill: TestService;

before(async () => {
  ledger = await startTestLedger();
  const start = (cardListEveryMs: number) =>
    startTestService(
      { cloudUrl: ledger.url, simulator: true, cardListEveryMs },
      { limits: ROOMY_LIMITS },
    );
  tillA = await start(1_000);
  tillB = await start(1_000);
  slowTill = await start(60_000);
});
after(async () => {
  await tillA?.close();
  await tillB?.close();
  await slowTill?.close();
  await ledger?.close();
});

const call = (till: TestService, method: string, path: string, body?: unknown) =>
  apiCaller(() => till.url, TEST_API_KEY)(method, path, body);

async function ledgerCall(method: string, path: string, body?: unknown): Promise<HttpResponse> {
  const res = await fetch(`${ledger.url}${path}`, {
    method,
    headers: {
      'X-Api-Key': TEST_API_KEY,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: {}, text, json: text ? JSON.parse(text) : undefined };
}

async function place(till: TestService, uid: string, credits = 0): Promise<string> {
  const placed = await call(till, 'POST', '/simulator/place', {
    uid,
    ...(credits > 0 ? { credits } : {}),
  });
  assert.equal(placed.status, 200, shown(placed));
  const { cardId } = placed.json as { cardId: string };
  await waitUntil(() => till.readers.status.card?.cardId === cardId, 5_000, 'card seen');
  return cardId;
}

/** What the simulated card on the till's reader holds (read by the simulator, not the API). */
async function onCard(till: TestService): Promise<number | null> {
  const status = await call(till, 'GET', '/simulator');
  return (status.json as { card: { credits: number | null } }).card.credits;
}

async function movementsOf(cardId: string): Promise<unknown[]> {
  const account = await ledgerCall('GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return (account.json as { movements: unknown[] }).movements;
}

function assertCardBlocked(answer: HttpResponse, cardId: string): void {
  assert.equal(answer.status, 500, shown(answer));
  const body = answer.json as { error: string; detail: string };
  assert.equal(body.error, 'CardBlocked', shown(answer));
  assert.match(body.detail, new RegExp(`card ${cardId} is blocked`), shown(answer));
}

describe('a blocked card', () => {
  test('when the shop blocks a card, then both tills learn it from their card list and refuse it in every card call, and nothing moves', async () => {
    const cardId = await place(tillA, '04B10C01');
    const recharged = await call(tillA, 'POST', '/writecard', { credits: 20 });
    assert.equal(recharged.status, 200, shown(recharged));
    await place(tillB, '04B10C01', 20);

    const blocked = await ledgerCall('POST', `/v1/cards/${cardId}/block`, { reason: 'lost' });
    assert.equal(blocked.status, 200, shown(blocked));
    for (const till of [tillA, tillB]) {
      // /readcard never asks the ledger: only the polled list can make it refuse.
      await waitUntil(
        async () => (await call(till, 'GET', '/readcard')).status === 500,
        10_000,
        'the till learns the block from its card list',
      );
      assertCardBlocked(await call(till, 'GET', '/readcard'), cardId);
    }
    const pool = await shopCredits(ledger.url);
    const before = await movementsOf(cardId);
    for (const till of [tillA, tillB]) {
      assertCardBlocked(await call(till, 'POST', '/writecard', { credits: 5 }), cardId);
      assertCardBlocked(await call(till, 'POST', '/writecard', { amount: 5 }), cardId);
      assertCardBlocked(await call(till, 'POST', '/dischargecard'), cardId);
      assert.equal(await onCard(till), 20);
    }
    assert.equal(await shopCredits(ledger.url), pool);
    assert.deepEqual(await movementsOf(cardId), before);

    // Unblocked, the tills take it again once their list says so.
    const unblocked = await ledgerCall('POST', `/v1/cards/${cardId}/unblock`, { reason: 'found' });
    assert.equal(unblocked.status, 200, shown(unblocked));
    await waitUntil(
      async () => (await call(tillA, 'GET', '/readcard')).status === 200,
      10_000,
      'the till learns the unblock',
    );
    const again = await call(tillA, 'POST', '/writecard', { credits: 1 });
    assert.equal(again.status, 200, shown(again));
    assert.equal((again.json as { credits: number }).credits, 21);
  });

  test("when a till's list does not know the block yet, then the ledger's refusal is answered CardBlocked, nothing is written, and its /readcard refuses the card from then on", async () => {
    const cardId = await place(slowTill, '04B10C02');
    const recharged = await call(slowTill, 'POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, shown(recharged));
    const blocked = await ledgerCall('POST', `/v1/cards/${cardId}/block`, { reason: 'stolen' });
    assert.equal(blocked.status, 200, shown(blocked));
    // Its list is from before the block (it polls every minute).
    const read = await call(slowTill, 'GET', '/readcard');
    assert.equal(read.status, 200, shown(read));

    const pool = await shopCredits(ledger.url);
    const refused = await call(slowTill, 'POST', '/writecard', { credits: 5 });
    assertCardBlocked(refused, cardId);
    assert.match((refused.json as { detail: string }).detail, /stolen/);
    assert.equal(await onCard(slowTill), 10);
    assert.equal(await shopCredits(ledger.url), pool);
    assertCardBlocked(await call(slowTill, 'GET', '/readcard'), cardId);
  });

  test("when a till's list does not know the block yet, then a payout refused by the ledger is CardBlocked and the card keeps its credits", async () => {
    const cardId = await place(slowTill, '04B10C03');
    const recharged = await call(slowTill, 'POST', '/writecard', { credits: 8 });
    assert.equal(recharged.status, 200, shown(recharged));
    const blocked = await ledgerCall('POST', `/v1/cards/${cardId}/block`, { reason: 'lost' });
    assert.equal(blocked.status, 200, shown(blocked));
    const pool = await shopCredits(ledger.url);
    assertCardBlocked(await call(slowTill, 'POST', '/dischargecard'), cardId);
    assert.equal(await onCard(slowTill), 8);
    assert.equal(await shopCredits(ledger.url), pool);
  });
});
