// Replacements and corrections picked up at the till (docs/integrators.md, "Replacement cards
// and corrections"): a lost card's account moved onto a new card waits at the ledger; the next
// POST with the new card (/writecard, /dischargecard, POST /cards/settle) first applies it with
// its own movement, written and posted exactly once, then does what it was asked. Two tills
// reading the new card together: one applies it, the other is told it is taken and goes on.
// An operator's correction is applied the same way. Over real HTTP: tills on the card
// simulator, one real ledger.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse } from '../support/http-client.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
/** Polls the card list every second. */
let tillA: TestService;
let tillB: TestService;
/** Polls once at start, then only every minute: it learns a change from the ledger's refusal. */
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

async function place(till: TestService, uid: string): Promise<string> {
  const placed = await call(till, 'POST', '/simulator/place', { uid });
  assert.equal(placed.status, 200, shown(placed));
  const { cardId } = placed.json as { cardId: string };
  await waitUntil(() => till.readers.status.card?.cardId === cardId, 5_000, 'card seen');
  return cardId;
}

async function onCard(till: TestService): Promise<number | null> {
  const status = await call(till, 'GET', '/simulator');
  return (status.json as { card: { credits: number | null } }).card.credits;
}

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
  const account = await ledgerCall('GET', `/v1/cards/${cardId}`);
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
  const oldCard = await place(till, oldUid);
  const recharged = await call(till, 'POST', '/writecard', { credits });
  assert.equal(recharged.status, 200, shown(recharged));
  await waitUntil(() => till.unconfirmedMovements === 0, 10_000, 'the recharge posted');
  const blocked = await ledgerCall('POST', `/v1/cards/${oldCard}/block`, { reason: 'lost' });
  assert.equal(blocked.status, 200, shown(blocked));
  const changeId = randomUUID();
  const replaced = await ledgerCall('POST', `/v1/cards/${oldCard}/replace`, {
    id: changeId,
    newCardId,
    reason: 'lost at the pool',
  });
  assert.equal(replaced.status, 201, shown(replaced));
  return changeId;
}

/** Waits until the till's card list (kept in its data folder) names the change. */
async function listKnows(till: TestService, changeId: string): Promise<void> {
  const file = join(till.dataDir, 'card-list.json');
  await waitUntil(
    () => existsSync(file) && readFileSync(file, 'utf8').includes(changeId),
    10_000,
    'the till lists the change',
  );
}

describe('replacement cards and corrections', () => {
  test("when a lost card's account waits for a new card, then the next recharge with the new card picks it up first, exactly once", async () => {
    const changeId = await lostAndReplaced(tillA, '04C10D01', 20, '04C10D02');
    await listKnows(tillA, changeId);
    await place(tillA, '04C10D02');
    const res = await call(tillA, 'POST', '/writecard', { credits: 5 });
    assert.equal(res.status, 200, shown(res));
    assert.equal((res.json as { credits: number }).credits, 25, shown(res));
    assert.equal(await onCard(tillA), 25);
    await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'posted');
    const pickups = await ofKind('04C10D02', 'replacement');
    assert.deepEqual(
      pickups.map(({ credits, state, applies, tillId }) => ({ credits, state, applies, tillId })),
      [{ credits: 20, state: 'posted', applies: changeId, tillId: tillA.tillId }],
    );
    // The next call does not pick it up again.
    const again = await call(tillA, 'POST', '/writecard', { credits: 1 });
    assert.equal(again.status, 200, shown(again));
    assert.equal((again.json as { credits: number }).credits, 26);
    assert.equal((await ofKind('04C10D02', 'replacement')).length, 1);
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test("when a till's list does not know the change yet, then the ledger's CardChangeWaiting makes it fetch the list, apply the change and go on", async () => {
    const newCard = await place(slowTill, '04C10D04');
    await lostAndReplaced(tillA, '04C10D03', 12, newCard);
    // The ledger refuses the recharge (CardChangeWaiting): the till fetches its list, puts the
    // 12 credits on, and recharges.
    const recharged = await call(slowTill, 'POST', '/writecard', { credits: 3 });
    assert.equal(recharged.status, 200, shown(recharged));
    assert.equal((recharged.json as { credits: number }).credits, 15);
    assert.equal(await onCard(slowTill), 15);
    await waitUntil(() => slowTill.unconfirmedMovements === 0, 10_000, 'posted');
    assert.deepEqual(
      (await ofKind(newCard, 'replacement')).map(({ credits, state }) => ({ credits, state })),
      [{ credits: 12, state: 'posted' }],
    );
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test('when two tills read the new card together, then one picks the account up and the other is told it is taken; it is applied once', async () => {
    const changeId = await lostAndReplaced(tillA, '04C10D05', 30, '04C10D06');
    await place(tillA, '04C10D06');
    await place(tillB, '04C10D06');
    // Both lists know it: both try to apply it.
    await listKnows(tillA, changeId);
    await listKnows(tillB, changeId);
    const [atA, atB] = await Promise.all([
      call(tillA, 'POST', '/writecard', { credits: 1 }),
      call(tillB, 'POST', '/writecard', { credits: 1 }),
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
      assert.equal(await onCard(loser), 0);
    }
    const account = await accountOf('04C10D06');
    assert.equal(account.changes[0]?.state, 'applied', JSON.stringify(account.changes));
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });

  test('when an operator corrects a recharge, then the next payout of the card applies the correction first, as far as the card holds it', async () => {
    const cardId = await place(tillA, '04C10D07');
    const recharged = await call(tillA, 'POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, shown(recharged));
    await waitUntil(() => tillA.unconfirmedMovements === 0, 10_000, 'posted');
    const correctionId = randomUUID();
    const corrected = await ledgerCall('POST', `/v1/cards/${cardId}/corrections`, {
      id: correctionId,
      recharge: (recharged.json as { movementId: string }).movementId,
      credits: 4,
      reason: 'keyed 10 instead of 6',
    });
    assert.equal(corrected.status, 201, shown(corrected));
    const paidOut = await call(tillA, 'POST', '/dischargecard');
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
    await place(tillA, '04C10D09');
    await listKnows(tillA, changeId);
    const settled = await call(tillA, 'POST', '/cards/settle');
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
    assert.equal(await onCard(tillA), 7);
  });
});
