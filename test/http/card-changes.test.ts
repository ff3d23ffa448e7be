// Replacements and corrections picked up at the till (docs/integrators.md, "Replacement cards
// and corrections"): a lost card's account moved onto a new card waits at the ledger; the next
// POST with the new card (/writecard, /dischargecard, POST /cards/settle) first applies it with
// its own movement, written and posted exactly once, then does what it was asked. Two tills
// reading the new card together: one applies it, the other is told it is taken and goes on.
// An operator's correction is applied the same way. Over real HTTP: tills on the card
// simulator, one real ledger.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { waitUntil } from '../support/card-rig.ts';
import { shown } from '../support/http-client.ts';
import type { TestLedger } from '../support/test-ledger.ts';
import {
  callLedger,
  callTill,
  creditsOnCard,
  listKnows,
  placeCard,
  startShopTills,
  type ShopTills,
} from '../support/shop-tills.ts';
import type { TestService } from '../support/test-service.ts';

let shop: ShopTills;
let ledger: TestLedger;
let tillA: TestService;
let tillB: TestService;
/** Polls once at start, then only every minute: it learns a change from the ledger's refusal. */
let slowTill: TestService;

before(async () => {
  shop = await startShopTills();
  ({ ledger, tillA, tillB, slowTill } = shop);
});
after(() => shop?.close());

interface LedgerMovement {
  id: string;
  kind: string;
  credits: number;
  state: string;
  tillId: string | null;
  applies?: string | null;
}

interface Account {
  credits: number;
  movements: LedgerMovement[];
  changes: { id: string; state: string; movementId: string | null }[];
}

async function accountOf(cardId: string): Promise<Account> {
  const account = await callLedger(ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return account.json as Account;
}

const ofKind = async (cardId: string, kind: string) =>
  (await accountOf(cardId)).movements.filter((movement) => movement.kind === kind);

/** A card of `credits` recharged at `till`, then lost: blocked and replaced by `newCardId`. */
async function lostAndReplaced(
  till: TestService,
  oldUid: string,
  credits: number,
  newCardId: string,
): Promise<string> {
  const oldCard = await placeCard(till, oldUid);
  const recharged = await callTill(till, 'POST', '/writecard', { credits });
  assert.equal(recharged.status, 200, shown(recharged));
  await waitUntil(() => till.unconfirmedMovements === 0, 10_000, 'the recharge posted');
  const blocked = await callLedger(ledger, 'POST', `/v1/cards/${oldCard}/block`, {
    reason: 'lost',
  });
  assert.equal(blocked.status, 200, shown(blocked));
  const changeId = randomUUID();
  const replaced = await callLedger(ledger, 'POST', `/v1/cards/${oldCard}/replace`, {
    id: changeId,
    newCardId,
    reason: 'lost at the pool',
  });
  assert.equal(replaced.status, 201, shown(replaced));
  return changeId;
}

describe('replacement cards and corrections', () => {
  test("when a lost card's account waits for a new card, then the next recharge with the new card picks it up first, exactly once", async () => {
    const changeId = await lostAndReplaced(tillA, '04C10D01', 20, '04C10D02');
    await listKnows(tillA, changeId);
    await placeCard(tillA, '04C10D02');
    const res = await callTill(tillA, 'POST', '/writecard', { credits: 5 });
    assert.equal(res.status, 200, shown(res));
    assert.equal((res.json as { credits: number }).credits, 25, shown(res));
    assert.equal(await creditsOnCard(tillA), 25);
    await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'posted');
    const pickups = await ofKind('04C10D02', 'replacement');
    assert.deepEqual(
      pickups.map(({ credits, state, applies, tillId }) => ({ credits, state, applies, tillId })),
      [{ credits: 20, state: 'posted', applies: changeId, tillId: tillA.tillId }],
    );
    // The next call does not pick it up again.
    const again = await callTill(tillA, 'POST', '/writecard', { credits: 1 });
    assert.equal(again.status, 200, shown(again));
    assert.equal((again.json as { credits: number }).credits, 26);
    assert.equal((await ofKind('04C10D02', 'replacement')).length, 1);
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test("when a till's list does not know the change yet, then the ledger's CardChangeWaiting makes it fetch the list, apply the change and go on", async () => {
    const newCard = await placeCard(slowTill, '04C10D04');
    await lostAndReplaced(tillA, '04C10D03', 12, newCard);
    // The ledger refuses the recharge (CardChangeWaiting): the till fetches its list, puts the
    // 12 credits on, and recharges.
    const recharged = await callTill(slowTill, 'POST', '/writecard', { credits: 3 });
    assert.equal(recharged.status, 200, shown(recharged));
    assert.equal((recharged.json as { credits: number }).credits, 15);
    assert.equal(await creditsOnCard(slowTill), 15);
    await waitUntil(() => slowTill.unconfirmedMovements === 0, 10_000, 'posted');
    assert.deepEqual(
      (await ofKind(newCard, 'replacement')).map(({ credits, state }) => ({ credits, state })),
      [{ credits: 12, state: 'posted' }],
    );
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test('when two tills read the new card together, then one picks the account up and the other is told it is taken; it is applied once', async () => {
    const changeId = await lostAndReplaced(tillA, '04C10D05', 30, '04C10D06');
    await placeCard(tillA, '04C10D06');
    await placeCard(tillB, '04C10D06');
    // Both lists know it: both try to apply it.
    await listKnows(tillA, changeId);
    await listKnows(tillB, changeId);
    const [atA, atB] = await Promise.all([
      callTill(tillA, 'POST', '/writecard', { credits: 1 }),
      callTill(tillB, 'POST', '/writecard', { credits: 1 }),
    ]);
    await waitUntil(
      () => tillA.unconfirmedMovements === 0 && tillB.unconfirmedMovements === 0,
      10_000,
      'settled',
    );
    const pickups = (await ofKind('04C10D06', 'replacement')).filter(
      (movement) => movement.state !== 'voided',
    );
    assert.equal(pickups.length, 1, JSON.stringify(pickups));
    assert.equal(pickups[0]?.applies, changeId);
    const winner = pickups[0]?.tillId === tillA.tillId ? tillA : tillB;
    const [won, lost] = winner === tillA ? [atA, atB] : [atB, atA];
    assert.equal(won.status, 200, shown(won));
    assert.equal((won.json as { credits: number }).credits, 31);
    // The other till went on with its own recharge: it landed, or the ledger held the card for
    // the winner's pickup (pending, or from the same card state): nothing moved there.
    const loser = winner === tillA ? tillB : tillA;
    if (lost.status === 200) {
      assert.equal((lost.json as { credits: number }).credits, 1, shown(lost));
    } else {
      assert.equal(lost.status, 500, shown(lost));
      assert.ok(
        ['MovementPendingAtOtherTill', 'MovementVoided'].includes(
          (lost.json as { error: string }).error,
        ),
        shown(lost),
      );
      assert.equal(await creditsOnCard(loser), 0);
    }
    const account = await accountOf('04C10D06');
    assert.equal(account.changes[0]?.state, 'applied', JSON.stringify(account.changes));
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test('when an operator corrects a recharge, then the next payout of the card applies the correction first, as far as the card holds it', async () => {
    const cardId = await placeCard(tillA, '04C10D07');
    const recharged = await callTill(tillA, 'POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, shown(recharged));
    await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'posted');
    const correctionId = randomUUID();
    const corrected = await callLedger(ledger, 'POST', `/v1/cards/${cardId}/corrections`, {
      id: correctionId,
      recharge: (recharged.json as { movementId: string }).movementId,
      credits: 4,
      reason: 'keyed 10 instead of 6',
    });
    assert.equal(corrected.status, 201, shown(corrected));
    const paidOut = await callTill(tillA, 'POST', '/dischargecard');
    assert.equal(paidOut.status, 200, shown(paidOut));
    assert.equal((paidOut.json as { dischargedCredits: number }).dischargedCredits, 6);
    await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'posted');
    assert.deepEqual(
      (await ofKind(cardId, 'correction')).map(({ credits, state, applies }) => ({
        credits,
        state,
        applies,
      })),
      [{ credits: 4, state: 'posted', applies: correctionId }],
    );
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test('when a replacement waits for the card, then POST /cards/settle applies it and lists it', async () => {
    const changeId = await lostAndReplaced(tillA, '04C10D08', 7, '04C10D09');
    await placeCard(tillA, '04C10D09');
    await listKnows(tillA, changeId);
    const settled = await callTill(tillA, 'POST', '/cards/settle');
    assert.equal(settled.status, 200, shown(settled));
    const applied = (settled.json as { cardChanges?: unknown[] }).cardChanges;
    assert.deepEqual(
      applied?.map((change) => {
        const { movementId, ...rest } = change as { movementId: string };
        assert.match(movementId, /^[0-9a-f-]{36}$/);
        return rest;
      }),
      [{ kind: 'replacement', changeId, credits: 7 }],
      shown(settled),
    );
    assert.equal(await creditsOnCard(tillA), 7);
  });
});
