/**
 * Lost cards, refunds and corrections of contract v1 (docs/cloud-api.md, "Lost cards, refunds
 * and bonuses") end to end over HTTP: part of the ledger suite (ledger-suite.ts), so they run
 * on PostgreSQL, on PGlite, and with every statement recorded (ledger-one-customer.test.ts).
 */
import assert from 'node:assert/strict';
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import type { Database } from '../../cloud/db/database.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { canonicalJson } from '../../common/canonical-json.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import { call, type Answer, type LedgerClient } from './ledger-client.ts';

export interface CardRulesSuiteContext {
  db: Database;
  /** A new shop with its own pool and key. */
  newShop(credits: number, creditCost?: string): Promise<LedgerClient>;
}

/** A shop no ledger holds: the blocklist feed's 404 (named, so the sharding test knows it). */
export const UNKNOWN_SHOP = '6f1c1c8e-0f5b-4c7e-9a52-00000000dead';

let serial = 0x500;
/** A card no other test moved. */
export const freshCard = () => `07${(serial++).toString(16).toUpperCase().padStart(6, '0')}`;

export const ok = (answer: Answer, status = 200) =>
  assert.equal(answer.status, status, `${answer.status} ${JSON.stringify(answer.body)}`);

export const refused = (answer: Answer, status: number, error: string) => {
  assert.equal(answer.status, status, `${answer.status} ${JSON.stringify(answer.body)}`);
  assert.equal(answer.body.error, error, JSON.stringify(answer.body));
};

export async function bookHolds(db: Database): Promise<void> {
  const check = await checkLedger(db);
  assert.deepEqual(check.problems, []);
}

/** A till's recharge, created and posted (its card write proven at `occurredAt`). */
export async function recharged(
  shop: LedgerClient,
  cardId: string,
  what: { credits: number } | { amount: string },
  tillId = randomUUID(),
  occurredAt = new Date(),
): Promise<Record<string, unknown> & { id: string; credits: number; tillId: string }> {
  const id = randomUUID();
  ok(await shop.create({ id, kind: 'recharge', cardId, tillId, ...what }), 201);
  const posted = await shop.resolve(id, 'post', { tillId, occurredAt: occurredAt.toISOString() });
  ok(posted);
  return posted.body;
}

/** A till's payout of `credits`, created and posted; the movement. */
export async function paidOut(
  shop: LedgerClient,
  cardId: string,
  credits: number,
  tillId?: string,
) {
  const id = randomUUID();
  const created = await shop.create({ id, kind: 'discharge', cardId, credits, tillId });
  ok(created, 201);
  ok(await shop.resolve(id, 'post', { tillId }));
  return created.body as { id: string; amount: string; bonusCredits: number; credits: number };
}

export async function accountOf(shop: LedgerClient, cardId: string) {
  const answer = await shop.get(`/v1/cards/${cardId}`);
  ok(answer);
  return answer.body;
}

export function defineCardRulesTests(context: () => CardRulesSuiteContext): void {
  const db = () => context().db;
  const reason = 'lost: reported by its holder at the counter';

  describe('blocked cards', () => {
    test('when a card is blocked with a reason, then the card list and the card show it, a second block changes nothing, and unblocking lifts it', async () => {
      const shop = await context().newShop(100);
      const card = freshCard();
      const before = await shop.get('/v1/card-list');
      ok(before);
      assert.deepEqual(before.body.blocked, []);
      assert.equal(before.etag, `"${before.body.seq}"`);

      const blocked = await shop.post(`/v1/cards/${card}/block`, { reason });
      ok(blocked);
      assert.equal(blocked.body.changed, true);
      assert.equal(blocked.body.seq, before.body.seq + 1);
      assert.equal(blocked.body.blocked.reason, reason);
      assert.match(blocked.body.blocked.by, /^key:[0-9a-f]{8}$/);
      const again = await shop.post(`/v1/cards/${card}/block`, { reason: 'again' });
      ok(again);
      assert.equal(again.body.changed, false);
      assert.equal(again.body.seq, blocked.body.seq);
      assert.equal(again.body.blocked.reason, reason, 'the first block stands');

      const list = await shop.get('/v1/card-list');
      assert.deepEqual(
        list.body.blocked.map((entry: { cardId: string }) => entry.cardId),
        [card],
      );
      assert.deepEqual((await accountOf(shop, card)).blocked, blocked.body.blocked);

      const lifted = await shop.post(`/v1/cards/${card}/unblock`, { reason: 'found in a pocket' });
      ok(lifted);
      assert.equal(lifted.body.changed, true);
      assert.equal(lifted.body.blocked, null);
      assert.equal(lifted.body.seq, blocked.body.seq + 1);
      assert.equal((await accountOf(shop, card)).blocked, null);
      const none = await shop.post(`/v1/cards/${card}/unblock`, { reason: 'again' });
      assert.equal(none.body.changed, false);
    });

    test('when a card is blocked, then its recharges and payouts are 409 CardBlocked and nothing moves, while what was under way before still resolves', async () => {
      const shop = await context().newShop(500, '0.50');
      const card = freshCard();
      const till = randomUUID();
      await recharged(shop, card, { credits: 40 }, till);
      const underWay = {
        id: randomUUID(),
        kind: 'recharge',
        cardId: card,
        credits: 5,
        tillId: till,
      };
      ok(await shop.create(underWay), 201);
      ok(await shop.post(`/v1/cards/${card}/block`, { reason }));
      const pool = (await shop.customer()).body.credits;

      for (const body of [
        { kind: 'recharge', credits: 10 },
        { kind: 'recharge', amount: '5.00' },
        { kind: 'discharge', credits: 40 },
        { kind: 'discharge', credits: 40, tillId: till },
      ]) {
        const answer = await shop.create({ id: randomUUID(), cardId: card, ...body });
        refused(answer, 409, 'CardBlocked');
        assert.match(answer.body.detail, new RegExp(`card ${card} is blocked since .*: ${reason}`));
      }
      assert.equal((await shop.customer()).body.credits, pool, 'nothing reserved');
      assert.equal((await accountOf(shop, card)).credits, 40, 'nothing taken');

      // The movement created before the block is replayed, and posted: its write is on the card.
      ok(await shop.create(underWay));
      ok(await shop.resolve(underWay.id, 'post', { tillId: till }));
      assert.equal((await accountOf(shop, card)).credits, 45);
      await bookHolds(db());
    });

    test('when the card list is polled with its ETag, then it is 304 without a body until the list changes', async () => {
      const shop = await context().newShop(10);
      const first = await shop.get('/v1/card-list');
      ok(first);
      const same = await shop.get('/v1/card-list', {
        headers: { 'if-none-match': first.etag ?? '' },
      });
      assert.equal(same.status, 304);
      assert.equal(same.body, undefined);
      assert.equal(same.etag, first.etag);
      ok(await shop.post(`/v1/cards/${freshCard()}/block`, { reason }));
      const changed = await shop.get('/v1/card-list', {
        headers: { 'if-none-match': first.etag ?? '' },
      });
      ok(changed);
      assert.equal(changed.body.blocked.length, 1);
      assert.notEqual(changed.etag, first.etag);
      const weak = await shop.get('/v1/card-list', {
        headers: { 'if-none-match': `W/${changed.etag}` },
      });
      assert.equal(weak.status, 304);
    });

    test('when a block is asked for without a reason, with another field or for a malformed card, then it is 400 and nothing is blocked', async () => {
      const shop = await context().newShop(10);
      const card = freshCard();
      for (const [path, body] of [
        [`/v1/cards/${card}/block`, {}],
        [`/v1/cards/${card}/block`, { reason: '   ' }],
        [`/v1/cards/${card}/block`, { reason: 'x'.repeat(501) }],
        [`/v1/cards/${card}/block`, { reason, until: 'tomorrow' }],
        [`/v1/cards/${card}/block`, 'lost'],
      ] as const) {
        const answer = await shop.post(path, body);
        refused(answer, 400, 'InvalidRequest');
      }
      refused(await shop.post('/v1/cards/04a1b2c3/block', { reason }), 400, 'InvalidCardId');
      assert.equal((await accountOf(shop, card)).blocked, null);
    });

    test('when a till empties a blocked card, then a block-clear records what the card held and its state, moves no credits, and needs the block', async () => {
      const shop = await context().newShop(500, '0.50');
      const card = freshCard();
      const till = randomUUID();
      await recharged(shop, card, { credits: 60 }, till);
      const clear = {
        id: randomUUID(),
        kind: 'block-clear',
        cardId: card,
        tillId: till,
        cardCredits: 37,
        cardBefore: 'classic:v1:37:4:1',
      };
      refused(await shop.create(clear), 409, 'CardNotBlocked');
      ok(await shop.post(`/v1/cards/${card}/block`, { reason }));
      const pool = (await shop.customer()).body.credits;
      const made = await shop.create(clear);
      ok(made, 201);
      assert.equal(made.body.kind, 'block-clear');
      assert.equal(made.body.credits, 37);
      assert.equal(made.body.amount, '0.00');
      assert.equal(made.body.cardBefore, 'classic:v1:37:4:1');
      ok(await shop.create(clear), 200);
      ok(await shop.resolve(clear.id, 'post', { tillId: till }));
      assert.equal((await shop.customer()).body.credits, pool);
      assert.equal((await accountOf(shop, card)).credits, 60, 'a replacement moves the account');

      const empty = { ...clear, id: randomUUID(), cardCredits: 0, cardBefore: 'classic:v1:0:5:0' };
      ok(await shop.create(empty), 201);
      for (const bad of [
        { ...clear, id: randomUUID(), cardCredits: undefined },
        { ...clear, id: randomUUID(), tillId: undefined },
        { ...clear, id: randomUUID(), credits: 3 },
      ]) {
        refused(await shop.create(bad), 400, 'InvalidMovement');
      }
      await bookHolds(db());
    });

    test('when a till reports a float recharge of a card blocked since, then it is recorded and flagged card-blocked', async () => {
      const shop = await context().newShop(1000, '0.50');
      const { customerId } = (await shop.customer()).body;
      await setFloatSettings(db(), customerId, { size: 300 });
      const tillId = randomUUID();
      const float = await shop.post('/v1/floats', { tillId, requestId: randomUUID(), ids: 5 });
      ok(float, 201);
      const card = freshCard();
      ok(await shop.post(`/v1/cards/${card}/block`, { reason }));
      const report = await shop.post('/v1/float-reports', {
        tillId,
        movements: [
          {
            id: floatMovementId(float.body.idPrefix, 1),
            cardId: card,
            credits: 20,
            card: 'written',
            creditCost: '0.50',
          },
        ],
      });
      ok(report);
      assert.deepEqual(report.body.results[0].outcome, 'recorded');
      assert.deepEqual(report.body.results[0].flags, ['card-blocked']);
      assert.equal((await accountOf(shop, card)).credits, 20);
      await bookHolds(db());
    });
  });

  describe('the blocklist feed for machines', () => {
    test('when a machine fetches a shop blocklist, then it is canonical JSON of the blocked cards, sorted, signed with the shop key it can fetch too, and cheap to poll', async () => {
      const shop = await context().newShop(10);
      const { customerId } = (await shop.customer()).body;
      const base = shop.baseUrl;
      const keyAnswer = await call('GET', `${base}/blocklists/${customerId}/key`);
      ok(keyAnswer);
      assert.equal(keyAnswer.body.algorithm, 'Ed25519');
      assert.match(keyAnswer.body.publicKey, /^[0-9a-f]{64}$/);
      assert.match(keyAnswer.body.keyId, /^[0-9a-f]{16}$/);
      const publicKey = createPublicKey(keyAnswer.body.publicKeyPem);

      const cards = ['04A1B2C3D4E5F6', freshCard(), '04A1B2C3'];
      for (const card of cards) ok(await shop.post(`/v1/cards/${card}/block`, { reason }));
      const feed = await fetchRaw(`${base}/blocklists/${customerId}`);
      assert.equal(feed.status, 200);
      const document = JSON.parse(feed.text) as {
        blocklist: Record<string, unknown>;
        signature: string;
      };
      assert.equal(feed.text, canonicalJson(document), 'the document is canonical');
      const signed = feed.text.slice('{"blocklist":'.length, feed.text.indexOf(',"signature":'));
      assert.equal(signed, canonicalJson(document.blocklist));
      assert.ok(
        verify(null, Buffer.from(signed), publicKey, Buffer.from(document.signature, 'hex')),
        'the signature verifies',
      );
      const list = (await shop.get('/v1/card-list')).body;
      assert.deepEqual(document.blocklist, {
        type: 'card-wallet-blocklist',
        version: 1,
        customerId,
        keyId: keyAnswer.body.keyId,
        seq: list.seq,
        updatedAt: list.changedAt,
        blocked: [...cards].sort(),
      });
      assert.equal(feed.etag, `"${list.seq}"`);

      const unchanged = await fetchRaw(`${base}/blocklists/${customerId}`, feed.etag);
      assert.equal(unchanged.status, 304);
      ok(await shop.post(`/v1/cards/${cards[0]}/unblock`, { reason: 'found' }));
      const after = await fetchRaw(`${base}/blocklists/${customerId}`, feed.etag);
      assert.equal(after.status, 200);
      const next = JSON.parse(after.text);
      assert.equal(next.blocklist.seq, list.seq + 1);
      assert.equal(next.blocklist.blocked.length, 2);
      // A forged copy (a card taken off the list) does not verify.
      const forged = canonicalJson({ ...next.blocklist, blocked: [] });
      assert.equal(
        verify(null, Buffer.from(forged), publicKey, Buffer.from(next.signature, 'hex')),
        false,
      );
      for (const path of [`/blocklists/${UNKNOWN_SHOP}`, '/blocklists/not-a-shop']) {
        refused(await call('GET', `${base}${path}`), 404, 'NotFound');
      }
    });
  });

  describe('replacements', () => {
    /** A shop, a card with an account there, blocked, and the two tills. */
    async function lostCard(credits = 50) {
      const shop = await context().newShop(1000, '0.50');
      const old = freshCard();
      const fresh = freshCard();
      const [tillA, tillB] = [randomUUID(), randomUUID()];
      await recharged(shop, old, { credits }, tillA);
      ok(await shop.post(`/v1/cards/${old}/block`, { reason }));
      return { shop, old, fresh, tillA, tillB };
    }
    const pickup = (cardId: string, applies: string, tillId: string) => ({
      id: randomUUID(),
      kind: 'replacement',
      cardId,
      applies,
      tillId,
      cardBefore: `classic:v1:0:${Math.floor(Math.random() * 255)}:0`,
    });

    test('when a blocked card is replaced, then its account waits for the new card, which its next till movement picks up once, and the books hold all along', async () => {
      const { shop, old, fresh, tillA, tillB } = await lostCard(50);
      const id = randomUUID();
      const replaced = await shop.post(`/v1/cards/${old}/replace`, {
        id,
        newCardId: fresh,
        reason,
      });
      ok(replaced, 201);
      const change = replaced.body.change;
      assert.deepEqual(
        {
          kind: change.kind,
          cardId: change.cardId,
          fromCard: change.fromCard,
          credits: change.credits,
          paidAmount: change.paidAmount,
          state: change.state,
        },
        {
          kind: 'replacement',
          cardId: fresh,
          fromCard: old,
          credits: 50,
          paidAmount: '25.00',
          state: 'waiting',
        },
      );
      ok(await shop.post(`/v1/cards/${old}/replace`, { id, newCardId: fresh, reason }), 200);
      refused(
        await shop.post(`/v1/cards/${old}/replace`, { id, newCardId: freshCard(), reason }),
        409,
        'CardChangeConflict',
      );
      assert.equal((await accountOf(shop, old)).credits, 0);
      const list = (await shop.get('/v1/card-list')).body;
      assert.deepEqual(list.waiting, [
        { id, kind: 'replacement', cardId: fresh, credits: 50, bonusCredits: 0 },
      ]);
      await bookHolds(db());

      // Any other movement of the new card waits for the pickup.
      const recharge = {
        id: randomUUID(),
        kind: 'recharge',
        cardId: fresh,
        credits: 5,
        tillId: tillB,
      };
      refused(await shop.create(recharge), 409, 'CardChangeWaiting');
      const pickedUp = pickup(fresh, id, tillA);
      const made = await shop.create(pickedUp);
      ok(made, 201);
      assert.equal(made.body.credits, 50);
      assert.equal(made.body.applies, id);
      // Till B sees the card too: another pickup is refused, and so is its own movement.
      refused(await shop.create(pickup(fresh, id, tillB)), 409, 'CardChangeTaken');
      refused(await shop.create(recharge), 409, 'CardMovementPending');
      ok(await shop.resolve(pickedUp.id, 'post', { tillId: tillA }));
      const account = await accountOf(shop, fresh);
      assert.equal(account.credits, 50);
      assert.equal(account.paidAmount, '25.00');
      assert.equal(account.changes[0].state, 'applied');
      assert.equal(account.changes[0].movementId, pickedUp.id);
      refused(await shop.create(pickup(fresh, id, tillA)), 409, 'CardChangeTaken');
      assert.deepEqual((await shop.get('/v1/card-list')).body.waiting, []);
      ok(await shop.create(recharge), 201);
      await bookHolds(db());
    });

    test('when two tills pick the same replacement up at once, then exactly one of them does', async () => {
      const { shop, old, fresh, tillA, tillB } = await lostCard(30);
      const id = randomUUID();
      ok(await shop.post(`/v1/cards/${old}/replace`, { id, newCardId: fresh, reason }), 201);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => shop.create(pickup(fresh, id, i % 2 ? tillA : tillB))),
      );
      const made = answers.filter((answer) => answer.status === 201);
      assert.equal(made.length, 1, JSON.stringify(answers.map((answer) => answer.body)));
      for (const answer of answers.filter((one) => one.status !== 201)) {
        assert.equal(answer.status, 409, JSON.stringify(answer.body));
        assert.ok(['CardChangeTaken', 'CardMovementPending'].includes(answer.body.error));
      }
      await bookHolds(db());
    });

    test('when a pickup is voided (its write did not land), then the replacement waits again; a waiting one can be cancelled, its credits back on the old card', async () => {
      const { shop, old, fresh, tillA } = await lostCard(20);
      const id = randomUUID();
      ok(await shop.post(`/v1/cards/${old}/replace`, { id, newCardId: fresh, reason }), 201);
      const first = pickup(fresh, id, tillA);
      ok(await shop.create(first), 201);
      refused(
        await shop.post(`/v1/card-changes/${id}/cancel`, { reason: 'wrong card' }),
        409,
        'CardMovementPending',
      );
      ok(await shop.resolve(first.id, 'void', { tillId: tillA }));
      assert.equal((await shop.get('/v1/card-list')).body.waiting.length, 1);
      const cancelled = await shop.post(`/v1/card-changes/${id}/cancel`, { reason: 'wrong card' });
      ok(cancelled);
      assert.equal(cancelled.body.changed, true);
      assert.equal(cancelled.body.change.state, 'cancelled');
      assert.equal(cancelled.body.change.cancelReason, 'wrong card');
      assert.equal((await accountOf(shop, old)).credits, 20);
      assert.equal(
        (await shop.post(`/v1/card-changes/${id}/cancel`, { reason: 'again' })).body.changed,
        false,
      );
      refused(await shop.create(pickup(fresh, id, tillA)), 409, 'CardChangeTaken');
      refused(
        await shop.post(`/v1/card-changes/${randomUUID()}/cancel`, { reason }),
        404,
        'CardChangeNotFound',
      );
      await bookHolds(db());
    });

    test('when a replacement is asked for a card that is not blocked, onto a blocked card, of an empty account or while a movement is pending, then it is refused and nothing moves', async () => {
      const { shop, old, fresh, tillA } = await lostCard(20);
      const other = freshCard();
      await recharged(shop, other, { credits: 5 });
      const ask = (from: string, to: string) =>
        shop.post(`/v1/cards/${from}/replace`, { id: randomUUID(), newCardId: to, reason });
      refused(await ask(other, fresh), 409, 'CardNotBlocked');
      ok(await shop.post(`/v1/cards/${other}/block`, { reason }));
      refused(await ask(old, other), 409, 'CardBlocked');
      const empty = freshCard();
      ok(await shop.post(`/v1/cards/${empty}/block`, { reason }));
      refused(await ask(empty, fresh), 422, 'NothingToReplace');
      const clear = {
        id: randomUUID(),
        kind: 'block-clear',
        cardId: old,
        tillId: tillA,
        cardCredits: 20,
      };
      ok(await shop.create(clear), 201);
      refused(await ask(old, fresh), 409, 'CardMovementPending');
      ok(await shop.resolve(clear.id, 'post', { tillId: tillA }));
      refused(
        await shop.post(`/v1/cards/${old}/replace`, { newCardId: fresh, reason }),
        400,
        'InvalidRequest',
      );
      refused(
        await shop.post(`/v1/cards/${old}/replace`, { id: randomUUID(), newCardId: old, reason }),
        400,
        'InvalidRequest',
      );
      assert.equal((await accountOf(shop, old)).credits, 20);
      ok(await ask(old, fresh), 201);
      await bookHolds(db());
    });
  });

  describe('refunds: the cashier undo', () => {
    async function shopWithRecharge(credits = 50) {
      const shop = await context().newShop(1000, '0.50');
      const card = freshCard();
      const till = randomUUID();
      const at = new Date('2026-03-01T10:00:00.000Z');
      const recharge = await recharged(shop, card, { credits }, till, at);
      return { shop, card, till, recharge, at };
    }
    const undo = (
      cardId: string,
      refunds: string,
      tillId: string,
      tillTime: Date,
      cardCredits: number,
    ) => ({
      id: randomUUID(),
      kind: 'refund',
      cardId,
      refunds,
      tillId,
      cardCredits,
      tillTime: tillTime.toISOString(),
    });
    const minutes = (at: Date, n: number) => new Date(at.getTime() + n * 60_000);

    test('when a cashier undoes the newest recharge within the window, then it takes back what it put on at its price, once, and the pool gets it back', async () => {
      const { shop, card, till, recharge, at } = await shopWithRecharge(50);
      const pool = (await shop.customer()).body.credits;
      const refund = undo(card, recharge.id, till, minutes(at, 9.9), 50);
      const made = await shop.create(refund);
      ok(made, 201);
      assert.deepEqual(
        { credits: made.body.credits, amount: made.body.amount, refunds: made.body.refunds },
        { credits: 50, amount: '25.00', refunds: recharge.id },
      );
      assert.equal((await accountOf(shop, card)).credits, 0, 'taken from the account at once');
      ok(await shop.create(refund), 200);
      ok(await shop.resolve(refund.id, 'post', { tillId: till }));
      assert.equal((await shop.customer()).body.credits, pool + 50);
      refused(
        await shop.create(undo(card, recharge.id, till, minutes(at, 1), 50)),
        409,
        'AlreadyRefunded',
      );
      await bookHolds(db());
    });

    test('when the undo comes after the window, from another till, for another card, after a later write or with nothing left on the card, then it is refused and nothing moves', async () => {
      const { shop, card, till, recharge, at } = await shopWithRecharge(50);
      refused(
        await shop.create(undo(card, recharge.id, till, minutes(at, 10.1), 50)),
        409,
        'UndoWindowPassed',
      );
      refused(
        await shop.create(undo(card, recharge.id, randomUUID(), minutes(at, 1), 50)),
        409,
        'MovementOfAnotherTill',
      );
      const otherCard = freshCard();
      refused(
        await shop.create(undo(otherCard, recharge.id, till, minutes(at, 1), 50)),
        422,
        'InvalidRefund',
      );
      refused(
        await shop.create(undo(card, recharge.id, till, minutes(at, 1), 0)),
        422,
        'NothingToRefund',
      );
      const { customerId } = (await shop.customer()).body;
      await setCardRules(db(), customerId, { undoWindowSeconds: 0 });
      refused(
        await shop.create(undo(card, recharge.id, till, minutes(at, 1), 50)),
        409,
        'UndoWindowPassed',
      );
      await setCardRules(db(), customerId, { undoWindowSeconds: 600 });
      // A later write of the card, by any till: the recharge is no longer the newest.
      await recharged(shop, card, { credits: 1 }, randomUUID(), minutes(at, 2));
      refused(
        await shop.create(undo(card, recharge.id, till, minutes(at, 3), 51)),
        409,
        'UndoNotNewest',
      );
      assert.equal((await accountOf(shop, card)).credits, 51);
      for (const bad of [
        { ...undo(card, recharge.id, till, minutes(at, 1), 50), tillTime: undefined },
        { ...undo(card, recharge.id, till, minutes(at, 1), 50), credits: 50 },
        { ...undo(card, recharge.id, till, minutes(at, 1), 50), refunds: 'yesterday' },
      ]) {
        refused(await shop.create(bad), 400, 'InvalidMovement');
      }
      await bookHolds(db());
    });

    test('when an undo arrives whose id was voided before, then it is 409 MovementAlreadyVoided for the shop that voided it, every time, MovementIdConflict for another, and nothing moves', async () => {
      const { shop, card, till, recharge, at } = await shopWithRecharge(50);
      const refund = undo(card, recharge.id, till, minutes(at, 1), 50);
      refused(await shop.resolve(refund.id, 'void', { tillId: till }), 404, 'MovementNotFound');
      for (const attempt of [1, 2]) {
        refused(await shop.create(refund), 409, 'MovementAlreadyVoided');
        assert.equal((await accountOf(shop, card)).credits, 50, `attempt ${attempt}`);
      }
      const other = await context().newShop(1000, '0.50');
      const otherRecharge = await recharged(other, card, { credits: 5 }, till, at);
      refused(
        await other.create({ ...refund, refunds: otherRecharge.id }),
        409,
        'MovementIdConflict',
      );
      assert.equal((await accountOf(other, card)).credits, 5);
      await bookHolds(db());
    });

    test('when machines spent some of the recharge, then the undo takes back what is left, bonus first, and refunds the euros pro rata', async () => {
      const shop = await context().newShop(1000, '0.50');
      const { customerId } = (await shop.customer()).body;
      await setCardRules(db(), customerId, {
        bonusTiers: [{ minAmount: '20.00', bonusCredits: 4 }],
      });
      const card = freshCard();
      const till = randomUUID();
      const at = new Date('2026-03-01T10:00:00.000Z');
      const recharge = await recharged(shop, card, { amount: '20.00' }, till, at);
      assert.equal(recharge.credits, 44);
      assert.equal(recharge.bonusCredits, 4);
      // The card shows 30: machines spent 14. Back: the 4 bonus credits, then 26 paid at 0.50.
      const refund = undo(card, recharge.id, till, minutes(at, 2), 30);
      const made = await shop.create(refund);
      ok(made, 201);
      assert.deepEqual(
        { credits: made.body.credits, bonus: made.body.bonusCredits, amount: made.body.amount },
        { credits: 30, bonus: 4, amount: '13.00' },
      );
      const account = await accountOf(shop, card);
      assert.deepEqual(
        { credits: account.credits, bonus: account.bonusCredits, paid: account.paidAmount },
        { credits: 14, bonus: 0, paid: '7.00' },
      );
      // Voided (the card write did not land): everything back, and it may be undone again.
      ok(await shop.resolve(refund.id, 'void', { tillId: till }));
      assert.equal((await accountOf(shop, card)).credits, 44);
      ok(await shop.create(undo(card, recharge.id, till, minutes(at, 3), 44)), 201);
      await bookHolds(db());
    });

    test('when two undos of one recharge race, then one is taken', async () => {
      const { shop, card, till, recharge, at } = await shopWithRecharge(20);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          shop.create(undo(card, recharge.id, till, minutes(at, 1), 20)),
        ),
      );
      assert.equal(
        answers.filter((answer) => answer.status === 201).length,
        1,
        JSON.stringify(answers.map((answer) => answer.body)),
      );
      assert.equal((await accountOf(shop, card)).credits, 0);
      await bookHolds(db());
    });
  });

  describe("an operator's correction", () => {
    test('when an operator corrects a recharge, then the correction waits for its card, whose next till movement applies it once, taking back what the card still holds of it', async () => {
      const shop = await context().newShop(1000, '0.50');
      const card = freshCard();
      const till = randomUUID();
      const recharge = await recharged(shop, card, { credits: 50 }, till);
      const id = randomUUID();
      const asked = await shop.post(`/v1/cards/${card}/corrections`, {
        id,
        recharge: recharge.id,
        credits: 45,
        reason: 'keyed 50 for 5',
      });
      ok(asked, 201);
      assert.equal(asked.body.change.kind, 'correction');
      assert.equal(asked.body.change.corrects, recharge.id);
      refused(
        await shop.post(`/v1/cards/${card}/corrections`, {
          id: randomUUID(),
          recharge: recharge.id,
          credits: 6,
          reason: 'again',
        }),
        422,
        'NothingToRefund',
      );
      refused(
        await shop.create({
          id: randomUUID(),
          kind: 'discharge',
          cardId: card,
          credits: 50,
          tillId: till,
        }),
        409,
        'CardChangeWaiting',
      );
      const apply = {
        id: randomUUID(),
        kind: 'correction',
        cardId: card,
        applies: id,
        tillId: randomUUID(),
        cardCredits: 42,
      };
      const made = await shop.create(apply);
      ok(made, 201);
      assert.deepEqual(
        { credits: made.body.credits, amount: made.body.amount, refunds: made.body.refunds },
        { credits: 42, amount: '21.00', refunds: recharge.id },
      );
      ok(await shop.resolve(apply.id, 'post', { tillId: apply.tillId }));
      const account = await accountOf(shop, card);
      assert.equal(account.credits, 8);
      assert.equal(account.changes[0].state, 'applied');
      refused(await shop.create({ ...apply, id: randomUUID() }), 409, 'CardChangeTaken');
      await bookHolds(db());
    });

    test('when a correction names no posted recharge of the card, or a blocked card, then it is refused', async () => {
      const shop = await context().newShop(1000, '0.50');
      const card = freshCard();
      const payout = await (async () => {
        await recharged(shop, card, { credits: 10 });
        return paidOut(shop, card, 10);
      })();
      const ask = (body: Record<string, unknown>) =>
        shop.post(`/v1/cards/${card}/corrections`, {
          id: randomUUID(),
          credits: 1,
          reason: 'x',
          ...body,
        });
      refused(await ask({ recharge: payout.id }), 422, 'InvalidRefund');
      refused(await ask({ recharge: randomUUID() }), 422, 'InvalidRefund');
      refused(await ask({ recharge: randomUUID(), credits: 0 }), 400, 'InvalidRequest');
      const recharge = await recharged(shop, card, { credits: 3 });
      ok(await shop.post(`/v1/cards/${card}/block`, { reason }));
      refused(await ask({ recharge: recharge.id }), 409, 'CardBlocked');
    });
  });

  describe('holder labels', () => {
    const holder = (shop: LedgerClient, card: string, method: 'PUT' | 'DELETE', body?: unknown) =>
      call(method, `${shop.baseUrl}/v1/cards/${card}/holder`, { apiKey: shop.apiKey, body });

    test('when a shop puts a holder label on a card, then the card shows it, another label replaces it, and deleting it removes it from the ledger, the audit log saying only that it was set and deleted', async () => {
      const shop = await context().newShop(100);
      const card = freshCard();
      assert.equal((await accountOf(shop, card)).holderLabel, null);
      const set = await holder(shop, card, 'PUT', { label: '  Marie, 0470 12 34 56 ' });
      ok(set);
      assert.deepEqual(set.body, {
        changed: true,
        cardId: card,
        holderLabel: 'Marie, 0470 12 34 56',
      });
      assert.equal((await accountOf(shop, card)).holderLabel, 'Marie, 0470 12 34 56');
      ok(await holder(shop, card, 'PUT', { label: 'Marie, 0470 12 34 56' }));
      assert.equal(
        (await holder(shop, card, 'PUT', { label: 'Marie, 0470 12 34 56' })).body.changed,
        false,
      );
      ok(await holder(shop, card, 'PUT', { label: 'Marie D.' }));
      assert.equal((await accountOf(shop, card)).holderLabel, 'Marie D.');
      const other = await context().newShop(100);
      assert.equal((await accountOf(other, card)).holderLabel, null, "one shop's label only");

      const deleted = await holder(shop, card, 'DELETE');
      ok(deleted);
      assert.deepEqual(deleted.body, { changed: true, cardId: card, holderLabel: null });
      assert.equal((await accountOf(shop, card)).holderLabel, null);
      assert.equal((await holder(shop, card, 'DELETE')).body.changed, false);
      const customerId = (await shop.customer()).body.customerId as string;
      const { rows } = await db().query<{ action: string; detail: string }>(
        `SELECT action, detail::text AS detail FROM audit_log
         WHERE customer_id = $1 AND subject = $2 ORDER BY seq`,
        [customerId, card],
      );
      assert.deepEqual(
        rows.map((row) => [row.action, JSON.parse(row.detail)]),
        [
          ['card.holder-label', { label: 'set' }],
          ['card.holder-label', { label: 'set' }],
          ['card.holder-label', { label: 'deleted' }],
        ],
      );
      assert.ok(!JSON.stringify(rows).includes('Marie'), 'no label kept in the audit log');
      const kept = await db().query('SELECT 1 FROM card_holders WHERE card_id = $1', [card]);
      assert.equal(kept.rows.length, 0);
    });

    test('when a holder label is empty, too long, on two lines or with other fields, or the card id is bad, then it is 400 and nothing is kept', async () => {
      const shop = await context().newShop(100);
      const card = freshCard();
      for (const body of [
        { label: '   ' },
        { label: 'x'.repeat(101) },
        { label: 'Marie\n0470' },
        { label: 7 },
        { label: 'Marie', phone: '0470' },
        {},
      ]) {
        refused(await holder(shop, card, 'PUT', body), 400, 'InvalidRequest');
      }
      refused(await holder(shop, '04a1b2c3', 'PUT', { label: 'Marie' }), 400, 'InvalidCardId');
      assert.equal((await accountOf(shop, card)).holderLabel, null);
    });
  });
}

async function fetchRaw(url: string, etag?: string | null) {
  const response = await fetch(url, { headers: etag ? { 'if-none-match': etag } : {} });
  return {
    status: response.status,
    text: await response.text(),
    etag: response.headers.get('etag'),
  };
}
