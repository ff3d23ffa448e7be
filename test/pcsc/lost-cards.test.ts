/**
 * A lost card, end to end on the real card path (docs/integrators.md, "Blocked cards" and
 * "Replacement cards and corrections"): two tills of one shop, each its own worker with its own
 * reader on one pcscd (vpcd), nfc-pcsc in the service, real HTTP, and the ledger a process of its
 * own on PostgreSQL.
 *
 * - The shop blocks a card at the ledger: both tills refuse it (`500 CardBlocked`) on
 *   /readcard, /writecard and /dischargecard. Found and presented in a POST, it is emptied for
 *   machines (MIFARE Classic: the wallet written to 0 with its keys; DESFire: the value file
 *   debited to 0; docs/card-format.md, "A blocked card at a till is emptied"), and the ledger
 *   records a `block-clear` with what the card held and its state (`cardBefore`).
 * - Its account, moved to a new card, is picked up exactly once even when both tills read the
 *   new card together (below, at the test, why a copy of the card is the same race).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { decodeWallet } from '../../service/card/wallet-format.ts';
import { waitUntil, walletBalance, type CardRig, type Till } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse } from '../support/http-client.ts';
import { callLedger, listKnows } from '../support/shop-tills.ts';
import { lockWaiters } from '../support/postgres.ts';
import { shopCredits } from '../support/test-ledger.ts';
import { startTwoTillRig } from '../support/two-till-rig.ts';
import { VirtualCard, type AnyVirtualCard } from '../support/virtual-card.ts';

let rig: CardRig;
let tillA: Till;
let tillB: Till;

before(async () => {
  // Both tills poll the shop's card list (blocks, waiting replacements) every second.
  ({ rig, tillA, tillB } = await startTwoTillRig({
    tillA: { cardListEveryMs: 1_000 },
    tillB: { cardListEveryMs: 1_000 },
  }));
});
after(() => rig?.close());

const call = (till: Till, method: string, path: string, body?: unknown) =>
  apiCaller(() => till.service.url, till.apiKey)(method, path, body);

interface LedgerMovement {
  kind: string;
  credits: number;
  state: string;
  tillId: string | null;
  cardBefore: string | null;
  applies?: string | null;
}

interface Account {
  credits: number;
  movements: LedgerMovement[];
  changes: { id: string; state: string }[];
}

async function accountOf(cardId: string): Promise<Account> {
  const account = await callLedger(rig.ledger, 'GET', `/v1/cards/${cardId}`);
  assert.equal(account.status, 200, shown(account));
  return account.json as Account;
}

const ofKind = async (cardId: string, kind: string) =>
  (await accountOf(cardId)).movements.filter((movement) => movement.kind === kind);

async function block(cardId: string): Promise<void> {
  const blocked = await callLedger(rig.ledger, 'POST', `/v1/cards/${cardId}/block`, {
    reason: 'lost',
  });
  assert.equal(blocked.status, 200, shown(blocked));
}

function assertCardBlocked(answer: HttpResponse, cardId: string): void {
  assert.equal(answer.status, 500, shown(answer));
  const body = answer.json as { error: string; detail: string };
  assert.equal(body.error, 'CardBlocked', shown(answer));
  assert.match(body.detail, new RegExp(`card ${cardId} is blocked`), shown(answer));
}

/** What a till records as the card's state before its write (docs/card-format.md). */
function stateOf(card: AnyVirtualCard): RegExp {
  if (!(card instanceof VirtualCard)) {
    return new RegExp(`^desfire:v1:${walletBalance(card)}:\\d+$`);
  }
  const wallet = decodeWallet(card.block(4), card.block(5));
  if (wallet.kind !== 'valid') throw new Error(`card ${card.id} holds no valid wallet`);
  return new RegExp(`^classic:v1:${wallet.balance}:${wallet.generation}:${wallet.activeSlot}$`);
}

/** Whatever an earlier test left (a failed one): no card on either reader. */
async function readersEmpty(): Promise<void> {
  await tillA.takeAway();
  await tillB.takeAway();
}

const settled = () =>
  waitUntil(
    () => tillA.service.unconfirmedMovements === 0 && tillB.service.unconfirmedMovements === 0,
    30_000,
    'both tills settled',
  );

describe('a lost card at two tills', () => {
  for (const type of ['mifare-classic', 'desfire'] as const) {
    test(`when the shop blocks a ${type} card at the ledger, then both tills refuse it in every card call, and found and presented in a POST it is emptied for machines and recorded with what it held`, async () => {
      await readersEmpty();
      const card =
        type === 'desfire' ? await rig.desfireCardHolding(20) : await rig.cardHolding(20);
      await block(card.id);
      const pool = await shopCredits(rig.ledger.url);

      // Each till learns the block from its card list; a GET refuses the card, never writes it.
      for (const till of [tillA, tillB]) {
        await till.present(card);
        await waitUntil(
          async () => (await call(till, 'GET', '/readcard')).status === 500,
          10_000,
          'the till learns the block from its card list',
        );
        assertCardBlocked(await call(till, 'GET', '/readcard'), card.id);
        assert.equal(walletBalance(card), 20, 'a GET never writes the card');
        await till.takeAway();
      }

      // Found, at till B: the first POST empties it, and is refused all the same.
      const evidence = stateOf(card);
      await tillB.present(card);
      const emptied = await call(tillB, 'POST', '/writecard', { credits: 5 });
      assertCardBlocked(emptied, card.id);
      assert.match(
        (emptied.json as { detail: string }).detail,
        /the 20 credits it held were cleared from it/,
        shown(emptied),
      );
      assert.equal(walletBalance(card), 0, 'emptied: a machine finds nothing to spend');
      assertCardBlocked(await call(tillB, 'POST', '/dischargecard'), card.id);
      await tillB.takeAway();

      // At till A, emptied, it is refused in every call, and nothing more is written.
      await tillA.present(card);
      assertCardBlocked(await call(tillA, 'GET', '/readcard'), card.id);
      assertCardBlocked(await call(tillA, 'POST', '/writecard', { amount: 5 }), card.id);
      assertCardBlocked(await call(tillA, 'POST', '/dischargecard'), card.id);
      await tillA.takeAway();
      assert.equal(walletBalance(card), 0);

      await settled();
      const clears = await ofKind(card.id, 'block-clear');
      assert.deepEqual(
        clears.map(({ credits, state, tillId }) => ({ credits, state, tillId })),
        [{ credits: 20, state: 'posted', tillId: tillB.service.tillId }],
        JSON.stringify(clears),
      );
      assert.match(clears[0]?.cardBefore ?? '', evidence, JSON.stringify(clears));
      // No credits moved: the pool as it was, the card's account kept for a replacement.
      assert.equal(await shopCredits(rig.ledger.url), pool);
      assert.equal((await accountOf(card.id)).credits, 20);
      const check = await checkLedger(rig.ledger.db);
      assert.deepEqual(check.problems, [], check.problems.join('; '));
    });
  }

  // One virtual card is on one reader at a time (a vpcd port is one reader slot), so "both
  // tills read the new card together" is played by till B reading a copy of it: the same UID,
  // the same blocks. What the two tills do with it is what they would do with one card in both
  // fields: each reads it, finds the replacement waiting for that card id in its card list, and
  // asks the ledger for the pickup. The test makes the two pickups meet inside the ledger: it
  // locks the ledger's movements table against inserts (reads go on) until both wait there,
  // each past its checks or waiting for the other's lock on the change, then lets both go.
  // Only the ledger can make one of them lose. The copy also shows what one card could not:
  // had both pickups been granted, each card would hold the lost card's 30 credits.
  test('when a lost card is replaced and both tills read the new card together, then the account is picked up once: one pickup at the ledger, its credits on one card, and each answer says what its card holds', async () => {
    await readersEmpty();
    const lost = await rig.cardHolding(30);
    await block(lost.id);
    const newCard = await rig.cardHolding(null);
    const changeId = randomUUID();
    const replaced = await callLedger(rig.ledger, 'POST', `/v1/cards/${lost.id}/replace`, {
      id: changeId,
      newCardId: newCard.id,
      reason: 'lost at the pool',
    });
    assert.equal(replaced.status, 201, shown(replaced));
    await listKnows(tillA.service, changeId);
    await listKnows(tillB.service, changeId);
    const pool = await shopCredits(rig.ledger.url);

    const copy = VirtualCard.fromMemory(newCard.uid, newCard.dump());
    const cards = [newCard, copy];
    await tillA.present(newCard);
    await tillB.present(copy);
    const { ledger } = rig;
    let letGo!: () => void;
    const lockHeld = new Promise<void>((resolve) => (letGo = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = ledger.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE movements IN SHARE MODE');
      locked();
      await lockHeld;
    });
    await isLocked;
    const asked = Promise.all(
      [tillA, tillB].map((till) => call(till, 'POST', '/writecard', { credits: 1 })),
    );
    try {
      await waitUntil(
        async () => (await lockWaiters(ledger.db, 'ledger_create_card_movement')) === 2,
        30_000,
        "both tills' pickups waiting at the ledger",
      );
    } finally {
      letGo();
      await holding;
    }
    const answers = await asked;
    await settled();
    const shownAll = answers.map(shown).join('\n');

    const pickups = (await ofKind(newCard.id, 'replacement')).filter(
      (movement) => movement.state !== 'voided',
    );
    assert.deepEqual(
      pickups.map(({ credits, state, applies }) => ({ credits, state, applies })),
      [{ credits: 30, state: 'posted', applies: changeId }],
      `${JSON.stringify(pickups)}\n${shownAll}`,
    );
    const winner = pickups[0]?.tillId === tillA.service.tillId ? 0 : 1;
    const loser = 1 - winner;
    // The winner picked the account up before its own recharge: 30 + 1.
    const won = answers[winner] as HttpResponse;
    assert.equal(won.status, 200, shownAll);
    assert.equal((won.json as { credits: number }).credits, 31, shownAll);
    assert.equal(walletBalance(cards[winner] as VirtualCard), 31);
    // The loser was told the pickup is taken and went on with its own recharge: written (its
    // card holds just that), or refused while the winner's pickup held the card or was written
    // from the same card state (its card untouched). Never the 30 a second time.
    const lostAnswer = answers[loser] as HttpResponse;
    const loserCard = cards[loser] as VirtualCard;
    if (lostAnswer.status === 200) {
      assert.equal((lostAnswer.json as { credits: number }).credits, 1, shownAll);
      assert.equal(walletBalance(loserCard), 1);
    } else {
      assert.equal(lostAnswer.status, 500, shownAll);
      assert.ok(
        ['MovementPendingAtOtherTill', 'MovementVoided'].includes(
          (lostAnswer.json as { error: string }).error,
        ),
        shownAll,
      );
      assert.equal(walletBalance(loserCard), 0);
    }
    // The ledger agrees with the cards: the account is the 30 picked up and each recharge that
    // was written; only the recharges left the pool.
    const recharged = answers.filter((answer) => answer.status === 200).length;
    const account = await accountOf(newCard.id);
    assert.equal(account.credits, 30 + recharged);
    assert.equal(walletBalance(newCard) + walletBalance(copy), 30 + recharged);
    assert.equal(await shopCredits(rig.ledger.url), pool - recharged);
    assert.equal(
      account.changes.find((change) => change.id === changeId)?.state,
      'applied',
      JSON.stringify(account.changes),
    );
    const check = await checkLedger(rig.ledger.db);
    assert.deepEqual(check.problems, [], check.problems.join('; '));
    await tillA.takeAway();
    await tillB.takeAway();
  });
});
