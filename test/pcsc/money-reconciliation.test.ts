import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { emptySnapshot, type StatusSnapshot } from '../../main/status-model.ts';
import { followService } from '../../main/status-feed.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard } from '../support/virtual-card.ts';

// Reconciliation over the real card path and a real ledger: the worker compares the ledger's
// pending movements of its shop with its journal at start, every reconcileEveryMs (1 s here)
// and after an outage; it decides its own, shows the other tills' and never voids on a timer.
let rig: CardRig;
before(async () => (rig = await startCardRig({ reconcileEveryMs: 1_000 })));
after(() => rig.close());

const pool = () => shopCredits(rig.ledger.url);

/** A movement made straight at the ledger, as another till (or a lost journal) left it. */
async function pendingAtLedger(body: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  const created = await fetch(`${rig.ledger.url}/v1/movements`, {
    method: 'POST',
    headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ id, kind: 'recharge', ...body }),
  });
  assert.equal(created.status, 201, await created.text());
  return id;
}

async function movementAtLedger(id: string): Promise<Record<string, unknown>> {
  const answer = await fetch(`${rig.ledger.url}/v1/movements/${id}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  assert.equal(answer.status, 200);
  return (await answer.json()) as Record<string, unknown>;
}

const post = (path: string, body?: unknown) =>
  httpRequest(`${rig.service.url}${path}`, {
    method: 'POST',
    headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });

describe('reconciliation', () => {
  test("when another till's movement of a card is pending, then this till lists it and never voids it, refuses that card (MovementPendingAtOtherTill), and an operator's POST /cards/settle decides it from the card with evidence", async () => {
    const otherTill = randomUUID();
    const card = new VirtualCard({ uid: Buffer.from([0x04, 0x61, 0x62, 0x63]) });
    const before = await pool();
    const id = await pendingAtLedger({
      cardId: card.id,
      credits: 9,
      tillId: otherTill,
      cardBefore: 'classic:v1:blank',
    });
    await waitUntil(
      () => rig.service.movementsWaitingForCard.some((entry) => entry.id === id),
      30_000,
      "the other till's movement listed",
    );
    const listed = rig.service.movementsWaitingForCard.find((entry) => entry.id === id);
    assert.equal(listed?.owner, 'other-till');
    // Several reconciliations later it is still pending: no timer of this till voids it.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal((await movementAtLedger(id)).state, 'pending');

    await rig.present(card);
    try {
      const refused = await post('/writecard', { credits: 5 });
      assert.equal(refused.status, 500, shown(refused));
      assert.equal(
        (refused.json as { error?: string }).error,
        'MovementPendingAtOtherTill',
        shown(refused),
      );
      assert.equal(walletBalance(card), 0, 'the card is not written');

      const settled = await post('/cards/settle');
      assert.equal(settled.status, 200, shown(settled));
      assert.deepEqual(settled.json, {
        cardId: card.id,
        settled: [{ id, tillId: otherTill, kind: 'recharge', credits: 9, state: 'voided' }],
        undecided: [],
      });
      const atLedger = await movementAtLedger(id);
      assert.equal(atLedger.state, 'voided');
      assert.equal(atLedger.resolvedByTill, rig.service.tillId);
      assert.match(String(atLedger.evidence), new RegExp(`card ${card.id} read at till`));
      assert.equal(await pool(), before, 'the reservation went back to the pool');

      const recharged = await post('/writecard', { credits: 5 });
      assert.equal(recharged.status, 200, shown(recharged));
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });

  test('when the ledger holds a movement of this till that the journal does not know (a lost journal), then it is adopted and the card decides it, never a timer', async () => {
    const card = new VirtualCard({
      uid: Buffer.from([0x04, 0x64, 0x65, 0x66]),
      // The write that movement planned (20 -> 25, slot 1 at generation 2) had landed.
      blocks: { 4: encodeValueBlock(20, 1), 5: encodeValueBlock(25, 2) },
    });
    const before = await pool();
    const id = await pendingAtLedger({
      cardId: card.id,
      credits: 5,
      tillId: rig.service.tillId,
      cardBefore: 'classic:v1:20:1:0',
    });
    await waitUntil(
      () => rig.service.movementsWaitingForCard.some((entry) => entry.id === id),
      30_000,
      'the adopted movement listed as waiting for its card',
    );
    assert.equal(
      rig.service.movementsWaitingForCard.find((entry) => entry.id === id)?.owner,
      'this-till',
    );
    await rig.present(card);
    try {
      await waitUntil(
        async () => (await movementAtLedger(id)).state !== 'pending',
        30_000,
        'decided',
      );
      assert.equal((await movementAtLedger(id)).state, 'posted');
      assert.equal(await pool(), before - 5);
      assert.equal(walletBalance(card), 25);
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });

  test('when a write is left uncertain and its card stays away, then the movement is listed as waiting for its card, and settled once the card is back', async () => {
    const card = new VirtualCard({
      uid: Buffer.from([0x04, 0x71, 0x72, 0x73]),
      blocks: { 4: encodeValueBlock(20, 1) },
    });
    await rig.present(card);
    // The tray's status feed, as main/ runs it: the waiting movement must show there too.
    let status: StatusSnapshot = emptySnapshot();
    const feed = followService(rig.service, status, (next) => (status = next));
    const before = await pool();
    card.failAt('write', 'pull-after');
    const torn = await httpRequest(`${rig.service.url}/writecard`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ credits: 6 }),
    });
    assert.deepEqual(torn.json, { error: 'CardRemovedDuringWrite' }, shown(torn));
    await waitUntil(
      () => rig.service.movementsWaitingForCard.length === 1,
      30_000,
      'the movement listed as waiting for its card',
    );
    const [waiting] = rig.service.movementsWaitingForCard;
    assert.deepEqual(
      { kind: waiting?.kind, cardId: waiting?.cardId, credits: waiting?.credits },
      { kind: 'recharge', cardId: card.id, credits: 6 },
    );
    assert.equal(await pendingMovements(rig.ledger.url), 1, 'it waits, pending, for the card');
    assert.deepEqual(
      status.ledger.waitingForCard.map(({ kind, cardId, credits }) => ({ kind, cardId, credits })),
      [{ kind: 'recharge', cardId: card.id, credits: 6 }],
      'the tray status lists it',
    );

    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await rig.present(card);
    try {
      await waitUntil(() => rig.service.unconfirmedMovements === 0, 30_000, 'settled');
      await waitUntil(
        () => rig.service.movementsWaitingForCard.length === 0,
        30_000,
        'no longer listed',
      );
      assert.deepEqual(status.ledger.waitingForCard, [], 'nor in the tray status');
      assert.equal(await pendingMovements(rig.ledger.url), 0);
      assert.equal(walletBalance(card), 26, 'pull-after: the write had landed');
      assert.equal(await pool(), before - 6);
    } finally {
      feed.stop();
      await rig.takeAway();
    }
  });
});
