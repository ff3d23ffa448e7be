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
// and after an outage, and decides each.
let rig: CardRig;
before(
  async () => (rig = await startCardRig({ reconcileEveryMs: 1_000, unknownPendingGraceMs: 2_000 })),
);
after(() => rig.close());

const pool = () => shopCredits(rig.ledger.url);

describe('reconciliation', () => {
  test('when the ledger holds a pending movement the journal does not know, then it is voided after the grace time and its credits go back to the pool', async () => {
    const before = await pool();
    // Straight to the ledger, as a till whose journal was lost would have left it.
    const created = await fetch(`${rig.ledger.url}/v1/movements`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: randomUUID(), kind: 'recharge', cardId: '0499AA01', credits: 9 }),
    });
    assert.equal(created.status, 201, await created.text());
    assert.equal(await pool(), before - 9);
    const deadline = Date.now() + 30_000;
    while ((await pendingMovements(rig.ledger.url)) > 0) {
      if (Date.now() > deadline) assert.fail('the unknown movement is still pending');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await pool(), before, 'the reservation was released');
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
