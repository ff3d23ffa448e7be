import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitUntil, walletBalance, type CardRig, type Till } from '../support/card-rig.ts';
import { httpRequest, shown, type HttpResponse, withoutReceipt } from '../support/http-client.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { startTwoTillRig } from '../support/two-till-rig.ts';
import { VirtualCard } from '../support/virtual-card.ts';

// A shop with two tills, each its own worker (API key, data folder, till id, reader), on one
// ledger process on PostgreSQL. Till B reconciles every second; its settings from before tills
// (`unknownPendingGraceMs: 3000`) used to void any pending movement its journal did not know
// after 3 s, another till's unsettled payout included, and the card was then paid out twice.
let rig: CardRig;
let tillA: Till;
let tillB: Till;
before(async () => {
  ({ rig, tillA, tillB } = await startTwoTillRig({
    tillA: { reconcileEveryMs: 1_000 },
    tillB: { reconcileEveryMs: 1_000, unknownPendingGraceMs: 3_000 },
  }));
});
after(() => rig.close());

function call(till: Till, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return httpRequest(`${till.service.url}${path}`, {
    method: 'POST',
    headers: { 'X-Api-Key': till.apiKey, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body ?? {}),
  });
}

const errorOf = (answer: HttpResponse) => (answer.json as { error?: string } | undefined)?.error;

async function cardAccount(cardId: string): Promise<{ credits: number; suspect: boolean }> {
  const answer = await fetch(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  return (await answer.json()) as { credits: number; suspect: boolean };
}

describe('a shop with two tills', () => {
  test("when till A's payout is left undecided (card pulled after the write) and till B reconciles for longer than its old grace, then B never voids it, the card decides it at A, the retry is answered 200 only once posted, and the card's dump written back is not paid out again", async () => {
    const card = new VirtualCard({ uid: Buffer.from([0x04, 0x7a, 0x11, 0x01]) });
    const poolBefore = await shopCredits(rig.ledger.url);
    await tillA.present(card);
    const loaded = await call(tillA, '/writecard', { credits: 100 });
    assert.equal(loaded.status, 200, shown(loaded));
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'the recharge posted');
    const dump = card.dump();

    // The payout's block write lands, its answer is lost: the card leaves with 0 on it.
    card.failAt('write', 'pull-after');
    const torn = await call(tillA, '/dischargecard', undefined, { 'Idempotency-Key': 'payout-1' });
    assert.equal(torn.status, 500, shown(torn));
    assert.equal(errorOf(torn), 'CardRemovedDuringWrite', shown(torn));
    assert.equal(walletBalance(card), 0);
    await waitUntil(() => tillA.reader.card === null, 5_000, 'card gone');
    await tillA.takeAway();

    // B reconciles every second: five times past its old 3 s grace, A's payout is still
    // pending, listed at B as another till's.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    assert.equal(await pendingMovements(rig.ledger.url), 1, 'the payout is still pending');
    assert.equal((await cardAccount(card.id)).credits, 0, 'its credits are held by the payout');
    assert.deepEqual(
      tillB.service.movementsWaitingForCard.map((entry) => [entry.kind, entry.owner]),
      [['discharge', 'other-till']],
    );

    // At B, the card (holding 0) is refused while A's payout is open: B writes nothing.
    await tillB.present(card);
    const atB = await call(tillB, '/writecard', { credits: 5 });
    assert.equal(atB.status, 500, shown(atB));
    assert.equal(errorOf(atB), 'MovementPendingAtOtherTill', shown(atB));
    assert.equal(walletBalance(card), 0);
    await tillB.takeAway();

    // Back at A: the card decides the payout (landed), it is posted, and the retry says so.
    await tillA.present(card);
    const retry = await call(tillA, '/dischargecard', undefined, { 'Idempotency-Key': 'payout-1' });
    assert.equal(retry.status, 200, shown(retry));
    assert.deepEqual(withoutReceipt(retry.json), {
      cardId: card.id,
      dischargedCredits: 100,
      dischargedAmount: 50,
    });
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'the payout posted');
    assert.equal(await pendingMovements(rig.ledger.url), 0);
    await tillA.takeAway();

    // The dump from before the payout, written back: neither till pays it out again.
    const restored = VirtualCard.fromMemory(card.uid, dump);
    for (const till of [tillA, tillB]) {
      await till.present(restored);
      const again = await call(till, '/dischargecard');
      assert.equal(again.status, 500, shown(again));
      assert.equal(errorOf(again), 'CardAccountExceeded', shown(again));
      assert.equal(walletBalance(restored), 100, 'the restored card is not written');
      await till.takeAway();
    }
    assert.equal(await shopCredits(rig.ledger.url), poolBefore, '100 loaded, 100 paid out');
    assert.deepEqual(await cardAccount(card.id), {
      ...(await cardAccount(card.id)),
      credits: 0,
      suspect: true,
    });
  });

  test('when till A is gone for good with a payout undecided, then an operator settles it at till B from the card, with evidence, and B can use the card', async () => {
    const card = new VirtualCard({ uid: Buffer.from([0x04, 0x7a, 0x11, 0x02]) });
    await tillA.present(card);
    assert.equal((await call(tillA, '/writecard', { credits: 40 })).status, 200);
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'the recharge posted');
    card.failAt('write', 'pull-before');
    const torn = await call(tillA, '/dischargecard');
    assert.equal(errorOf(torn), 'CardRemovedDuringWrite', shown(torn));
    await tillA.takeAway();
    assert.equal(walletBalance(card), 40, 'pulled before the write took effect');

    await tillB.present(card);
    try {
      const settled = await call(tillB, '/cards/settle');
      assert.equal(settled.status, 200, shown(settled));
      const answer = settled.json as { settled: { state: string; tillId: string }[] };
      assert.deepEqual(
        answer.settled.map((entry) => [entry.state, entry.tillId]),
        [['voided', tillA.service.tillId]],
        shown(settled),
      );
      assert.equal(
        (await cardAccount(card.id)).credits,
        40,
        'the voided payout gave its credits back',
      );
      const payout = await call(tillB, '/dischargecard');
      assert.equal(payout.status, 200, shown(payout));
      assert.deepEqual(withoutReceipt(payout.json), {
        cardId: card.id,
        dischargedCredits: 40,
        dischargedAmount: 20,
      });
    } finally {
      await tillB.takeAway();
    }
    // Till A, back, learns its payout was decided elsewhere and leaves it.
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'till A settled');
    await waitUntil(() => tillB.service.unconfirmedMovements === 0, 30_000, 'till B settled');
    assert.equal(await pendingMovements(rig.ledger.url), 0);
  });

  test("when an operator voids till A's payout as the card lost, without the card, and the card holds the payout, then till B's next recharge of it first sets the books right from the card, and nothing is paid twice", async () => {
    const card = new VirtualCard({ uid: Buffer.from([0x04, 0x7a, 0x11, 0x03]) });
    await tillA.present(card);
    assert.equal((await call(tillA, '/writecard', { credits: 40 })).status, 200);
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'the recharge posted');
    card.failAt('write', 'pull-after');
    const torn = await call(tillA, '/dischargecard');
    assert.equal(errorOf(torn), 'CardRemovedDuringWrite', shown(torn));
    await tillA.takeAway();
    assert.equal(walletBalance(card), 0, 'pulled after the write took effect: paid out');

    // The customer reports the card lost; the provider voids the payout without the card.
    const pending = await fetch(`${rig.ledger.url}/v1/movements?state=pending`, {
      headers: { 'X-Api-Key': TEST_API_KEY },
    });
    const { movements } = (await pending.json()) as { movements: { id: string; cardId: string }[] };
    const payout = movements.find((movement) => movement.cardId === card.id);
    assert.ok(payout, JSON.stringify(movements));
    const voided = await fetch(`${rig.ledger.url}/v1/movements/${payout.id}/void`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ evidence: 'the customer reported the card lost' }),
    });
    const voidedBody = (await voided.json()) as { awaitsCard: boolean };
    assert.equal(voidedBody.awaitsCard, true, JSON.stringify(voidedBody));
    assert.equal((await cardAccount(card.id)).credits, 40, 'the void gave the account back');

    // The card turns up at till B.
    await tillB.present(card);
    try {
      const recharge = await call(tillB, '/writecard', { credits: 10 });
      assert.equal(recharge.status, 200, shown(recharge));
      assert.deepEqual(withoutReceipt(recharge.json), {
        cardId: card.id,
        credits: 10,
        rechargeAmount: 5,
      });
      await waitUntil(() => tillB.service.unconfirmedMovements === 0, 30_000, 'B posted');
      assert.equal((await cardAccount(card.id)).credits, 10, 'the books match the card: 10');
    } finally {
      await tillB.takeAway();
    }
    // Till A, back with the card, learns the void and finds it compensated already.
    await tillA.present(card);
    try {
      await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'till A settled');
      const payoutAtA = await call(tillA, '/dischargecard');
      assert.equal(payoutAtA.status, 200, shown(payoutAtA));
      assert.deepEqual(withoutReceipt(payoutAtA.json), {
        cardId: card.id,
        dischargedCredits: 10,
        dischargedAmount: 5,
      });
      await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'A posted');
      assert.equal((await cardAccount(card.id)).credits, 0);
    } finally {
      await tillA.takeAway();
    }
    assert.equal(await pendingMovements(rig.ledger.url), 0);
  });
});
