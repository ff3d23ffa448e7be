// A card the shop blocked (lost, stolen) is refused at every till (docs/integrators.md, "Blocked
// cards"): each till polls the shop's card list and answers /readcard, /writecard and
// /dischargecard with 500 CardBlocked; a till that has not polled since the block gets the
// ledger's 409 CardBlocked on its reservation and answers the same. No credits move. A POST
// with the card empties it (a block-clear movement: journaled, created, written, posted), a
// GET never writes it. Over real HTTP: two tills on the card simulator, one real ledger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitUntil } from '../support/card-rig.ts';
import { shown, type HttpResponse } from '../support/http-client.ts';
import { shopCredits, type TestLedger } from '../support/test-ledger.ts';
import {
  callLedger,
  callTill,
  creditsOnCard,
  placeCard,
  startShopTills,
  type ShopTills,
} from '../support/shop-tills.ts';
import type { TestService } from '../support/test-service.ts';

let shop: ShopTills;
let ledger: TestLedger;
let tillA: TestService;
let tillB: TestService;
/** Polls once at start, then only every minute: it learns a block from the ledger's refusal. */
let slowTill: TestService;

before(async () => {
  shop = await startShopTills();
  ({ ledger, tillA, tillB, slowTill } = shop);
});
after(() => shop?.close());

interface LedgerMovement {
  kind: string;
  credits: number;
  state: string;
  tillId: string | null;
}

async function accountOf(
  cardId: string,
): Promise<{ credits: number; movements: LedgerMovement[] }> {
  const account = await callLedger(ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return account.json as { credits: number; movements: LedgerMovement[] };
}

async function blockClears(cardId: string): Promise<LedgerMovement[]> {
  return (await accountOf(cardId)).movements.filter((movement) => movement.kind === 'block-clear');
}

function assertCardBlocked(answer: HttpResponse, cardId: string): void {
  assert.equal(answer.status, 500, shown(answer));
  const body = answer.json as { error: string; detail: string };
  assert.equal(body.error, 'CardBlocked', shown(answer));
  assert.match(body.detail, new RegExp(`card ${cardId} is blocked`), shown(answer));
}

describe('a blocked card', () => {
  test('when the shop blocks a card, then both tills learn it from their card list and refuse it in every card call; a POST empties it with a block-clear, and no credits move', async () => {
    const cardId = await placeCard(tillA, '04B10C01');
    const recharged = await callTill(tillA, 'POST', '/writecard', { credits: 20 });
    assert.equal(recharged.status, 200, shown(recharged));
    // The same card at the other till (a card of its own simulator, with the same id).
    await placeCard(tillB, '04B10C01', 20);

    const blocked = await callLedger(ledger, 'POST', `/v1/cards/${cardId}/block`, {
      reason: 'lost',
    });
    assert.equal(blocked.status, 200, shown(blocked));
    for (const till of [tillA, tillB]) {
      // /readcard never asks the ledger: only the polled list can make it refuse.
      await waitUntil(
        async () => (await callTill(till, 'GET', '/readcard')).status === 500,
        10_000,
        'the till learns the block from its card list',
      );
      assertCardBlocked(await callTill(till, 'GET', '/readcard'), cardId);
      // A GET never writes the card.
      assert.equal(await creditsOnCard(till), 20);
    }
    const pool = await shopCredits(ledger.url);
    const account = await accountOf(cardId);

    const emptied = await callTill(tillA, 'POST', '/writecard', { credits: 5 });
    assertCardBlocked(emptied, cardId);
    assert.match(
      (emptied.json as { detail: string }).detail,
      /the 20 credits it held were cleared from it/,
    );
    assert.equal(await creditsOnCard(tillA), 0);
    await waitUntil(
      async () => (await blockClears(cardId)).every((clear) => clear.state === 'posted'),
      10_000,
      'the block-clear is posted',
    );
    assert.deepEqual(
      (await blockClears(cardId)).map(({ credits, tillId, state }) => ({ credits, tillId, state })),
      [{ credits: 20, tillId: tillA.tillId, state: 'posted' }],
    );
    // Emptied, it is refused still, and nothing more is written or recorded.
    assertCardBlocked(await callTill(tillA, 'POST', '/writecard', { amount: 5 }), cardId);
    assertCardBlocked(await callTill(tillA, 'POST', '/dischargecard'), cardId);
    assert.equal((await blockClears(cardId)).length, 1);
    // No credits moved: the pool and the card's account (kept for a replacement) are as they were.
    assert.equal(await shopCredits(ledger.url), pool);
    assert.equal((await accountOf(cardId)).credits, account.credits);

    // Unblocked, the tills take it again once their list says so.
    const unblocked = await callLedger(ledger, 'POST', `/v1/cards/${cardId}/unblock`, {
      reason: 'found',
    });
    assert.equal(unblocked.status, 200, shown(unblocked));
    await waitUntil(
      async () => (await callTill(tillA, 'GET', '/readcard')).status === 200,
      10_000,
      'the till learns the unblock',
    );
    const again = await callTill(tillA, 'POST', '/writecard', { credits: 1 });
    assert.equal(again.status, 200, shown(again));
    assert.equal((again.json as { credits: number }).credits, 1);
  });

  test("when a till's list does not know the block yet, then the ledger's refusal is answered CardBlocked, the card is emptied with a block-clear, and its /readcard refuses the card from then on", async () => {
    const cardId = await placeCard(slowTill, '04B10C02');
    const recharged = await callTill(slowTill, 'POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, shown(recharged));
    const blocked = await callLedger(ledger, 'POST', `/v1/cards/${cardId}/block`, {
      reason: 'stolen',
    });
    assert.equal(blocked.status, 200, shown(blocked));
    // Its list is from before the block (it polls every minute).
    const read = await callTill(slowTill, 'GET', '/readcard');
    assert.equal(read.status, 200, shown(read));

    const pool = await shopCredits(ledger.url);
    const refused = await callTill(slowTill, 'POST', '/writecard', { credits: 5 });
    assertCardBlocked(refused, cardId);
    assert.match(
      (refused.json as { detail: string }).detail,
      /stolen.*the 10 credits it held were cleared/,
    );
    assert.equal(await creditsOnCard(slowTill), 0);
    assert.equal(await shopCredits(ledger.url), pool);
    assert.deepEqual(
      (await blockClears(cardId)).map(({ credits }) => credits),
      [10],
    );
    assertCardBlocked(await callTill(slowTill, 'GET', '/readcard'), cardId);
  });

  test("when a till's list does not know the block yet, then a payout refused by the ledger is CardBlocked and the card is emptied with a block-clear", async () => {
    const cardId = await placeCard(slowTill, '04B10C03');
    const recharged = await callTill(slowTill, 'POST', '/writecard', { credits: 8 });
    assert.equal(recharged.status, 200, shown(recharged));
    const blocked = await callLedger(ledger, 'POST', `/v1/cards/${cardId}/block`, {
      reason: 'lost',
    });
    assert.equal(blocked.status, 200, shown(blocked));
    const pool = await shopCredits(ledger.url);
    assertCardBlocked(await callTill(slowTill, 'POST', '/dischargecard'), cardId);
    assert.equal(await creditsOnCard(slowTill), 0);
    assert.equal(await shopCredits(ledger.url), pool);
    assert.deepEqual(
      (await blockClears(cardId)).map(({ credits }) => credits),
      [8],
    );
  });

  for (const [fault, commits] of [
    ['tear-before-commit', false],
    ['tear-after-commit', true],
  ] as const) {
    test(`when the card leaves in the middle of its block-clear (${fault}), then the answer says so and the card put back settles it exactly once`, async () => {
      const uid = fault === 'tear-before-commit' ? '04B10C04' : '04B10C05';
      const cardId = await placeCard(tillA, uid);
      assert.equal((await callTill(tillA, 'POST', '/writecard', { credits: 6 })).status, 200);
      assert.equal(
        (await callLedger(ledger, 'POST', `/v1/cards/${cardId}/block`, { reason: 'x' })).status,
        200,
      );
      await waitUntil(
        async () => (await callTill(tillA, 'GET', '/readcard')).status === 500,
        10_000,
        'the till learns the block',
      );
      const armed = await callTill(tillA, 'POST', '/simulator/fault', { fault });
      assert.equal(armed.status, 200, shown(armed));
      const torn = await callTill(tillA, 'POST', '/dischargecard');
      assert.equal(torn.status, 500, shown(torn));
      assert.equal((torn.json as { error: string }).error, 'CardRemovedDuringWrite', shown(torn));
      await waitUntil(() => tillA.readers.status.card === null, 5_000, 'card gone');
      const back = await callTill(tillA, 'POST', '/simulator/put-back', { cardId });
      assert.equal(back.status, 200, shown(back));
      await waitUntil(() => tillA.readers.status.card?.cardId === cardId, 5_000, 'card back');
      // The next POST decides the torn write on the card first, then empties it if need be.
      assertCardBlocked(await callTill(tillA, 'POST', '/dischargecard'), cardId);
      assert.equal(await creditsOnCard(tillA), 0);
      await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'movements settled');
      const clears = await blockClears(cardId);
      // Landed: posted, and no second one. Not landed: voided, and a second one emptied it.
      assert.deepEqual(
        clears.map(({ credits, state }) => ({ credits, state })),
        commits
          ? [{ credits: 6, state: 'posted' }]
          : [
              { credits: 6, state: 'posted' },
              { credits: 6, state: 'voided' },
            ],
      );
    });
  }

  test('when a blocked DESFire card is presented in a POST, then its value is debited to 0 under a block-clear', async () => {
    const placed = await callTill(slowTill, 'POST', '/simulator/place', { type: 'desfire' });
    assert.equal(placed.status, 200, shown(placed));
    const { cardId } = placed.json as { cardId: string };
    await waitUntil(() => slowTill.readers.status.card?.cardId === cardId, 5_000, 'card seen');
    const recharged = await callTill(slowTill, 'POST', '/writecard', { credits: 12 });
    assert.equal(recharged.status, 200, shown(recharged));
    assert.equal(
      (await callLedger(ledger, 'POST', `/v1/cards/${cardId}/block`, { reason: 'x' })).status,
      200,
    );
    const refused = await callTill(slowTill, 'POST', '/writecard', { credits: 1 });
    assertCardBlocked(refused, cardId);
    assert.match(
      (refused.json as { detail: string }).detail,
      /the 12 credits it held were cleared/,
    );
    assert.equal(await creditsOnCard(slowTill), 0);
    await waitUntil(() => slowTill.unconfirmedMovements === 0, 10_000, 'movements settled');
    assert.deepEqual(
      (await blockClears(cardId)).map(({ credits, state }) => ({ credits, state })),
      [{ credits: 12, state: 'posted' }],
    );
  });
});
