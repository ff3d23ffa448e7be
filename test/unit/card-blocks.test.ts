/**
 * Blocked and held cards as the use cases refuse them (docs/integrators.md, "Blocked cards"):
 * CardBlocked's words for a block the till's list knows or a refusal told, the emptying of a
 * blocked card (block-clear) with what it held as its evidence, a card unblocked meanwhile, an
 * emptying the ledger cannot record now; and CardHeldAtLedger's words for a card the ledger
 * holds. recharge-refusals.test.ts tests a block learnt from the ledger's refusal.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import { clearBlockedCard } from '../../service/wallet/block-clear.ts';
import {
  blockedDetail,
  blockedRefusal,
  refuseBlockedCard,
  type CardBlocks,
  type KnownBlock,
} from '../../service/wallet/card-blocks.ts';
import { cardHeldOffline } from '../../service/wallet/card-holds.ts';
import {
  CARD,
  KEY,
  cardList,
  cardOnReader,
  eventually,
  fingerprint,
  shopWithCard,
} from '../support/money-rig.ts';

const KEEP =
  'no till recharges or pays it out; keep it for the shop owner, who can move its account to a new card';

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, detail: error.detail }
    : { not: String(error) };

/** The list's blocks, with one block known for CARD. */
function blockedList(block: KnownBlock = { since: '2026-11-27T10:00:00Z' }) {
  const rig = cardList();
  rig.blocks.set(CARD, block);
  const unblocked: string[] = [];
  const list: CardBlocks = {
    ...rig.list,
    learntUnblocked: (cardId) => {
      unblocked.push(cardId);
      rig.list.learntUnblocked(cardId);
    },
  };
  return { ...rig, list, unblocked };
}

describe('blockedDetail and refuseBlockedCard', () => {
  test('when the list knows since when, then CardBlocked says the card, since when, and to keep it', () => {
    assert.equal(
      blockedDetail(CARD, { since: '2026-11-27T10:00:00Z' }),
      `card ${CARD} is blocked by the shop since 2026-11-27T10:00:00Z: ${KEEP}`,
    );
  });

  test("when a refusal told the block (no since), then without a time; with the ledger's words, those", () => {
    assert.equal(
      blockedDetail(CARD, { since: null }),
      `card ${CARD} is blocked by the shop: ${KEEP}`,
    );
    assert.equal(
      blockedDetail(CARD, { since: null, detail: 'blocked by owner: lost' }),
      `blocked by owner: lost; ${KEEP}`,
    );
  });

  test('when the list knows a block of the card, then CardBlocked before anything; of another card or no list, nothing', () => {
    const { list } = blockedList();
    let refused: unknown;
    try {
      refuseBlockedCard(list, CARD);
    } catch (error) {
      refused = error;
    }
    assert.deepEqual(seen(refused), {
      code: 'CardBlocked',
      status: 500,
      detail: `card ${CARD} is blocked by the shop since 2026-11-27T10:00:00Z: ${KEEP}`,
    });
    refuseBlockedCard(list, '04FFFFFF');
    refuseBlockedCard(undefined, CARD);
  });
});

describe('blockedRefusal', () => {
  test('when the ledger refuses the card as blocked, then CardBlocked with its words, and the block is noted', () => {
    const { list, blocks } = cardList();
    const said = blockedRefusal(
      new LedgerRefusal(409, 'CardBlocked', 'blocked: stolen'),
      CARD,
      list,
    );
    assert.deepEqual(seen(said), {
      code: 'CardBlocked',
      status: 500,
      detail: `blocked: stolen; ${KEEP}`,
    });
    assert.deepEqual(blocks.get(CARD), { since: null, detail: 'blocked: stolen' });
  });

  test('when it is another refusal or error, then undefined and nothing noted', () => {
    const { list, blocks } = cardList();
    assert.equal(blockedRefusal(new LedgerRefusal(409, 'CardNotBlocked'), CARD, list), undefined);
    assert.equal(blockedRefusal(errors.ledgerUnavailable(), CARD, list), undefined);
    assert.equal(blocks.size, 0);
  });
});

describe('clearBlockedCard', () => {
  /** A till with CARD holding `balance` on its reader, the card blocked at the ledger. */
  async function till(balance: number) {
    const shop = await shopWithCard(balance);
    shop.sim.cardRules.block(KEY, CARD, true, 'owner', 'lost');
    return shop;
  }
  const cleared = (run: Promise<void>) => run.then(() => ({ returned: true }), seen);
  const keyFingerprint = fingerprint(KEY);

  test('when the card is blocked and holds credits, then it is emptied by a block-clear carrying what it held, and refused', async () => {
    const { sim, engine, card } = await till(30);
    const { list } = blockedList();
    const failure = await cleared(
      clearBlockedCard(card.card, engine, { blocks: list, keyFingerprint }),
    );
    await eventually(() => engine.unconfirmed === 0, 'the block-clear posted');
    await engine.close();
    const [clear] = [...sim.movements.values()];
    assert.match(
      String((failure as { detail?: string }).detail),
      new RegExp(
        `^card ${CARD} is blocked by the shop since 2026-11-27T10:00:00Z: ${KEEP}; the 30 credits it held were cleared from it \\(movement ${clear?.id}\\)$`,
      ),
      JSON.stringify(failure),
    );
    assert.equal(card.held(), 0);
    assert.deepEqual(
      { kind: clear?.kind, credits: clear?.credits, state: clear?.state },
      { kind: 'block-clear', credits: 30, state: 'posted' },
    );
  });

  test('when the blocked card holds nothing, then it is refused without a write or a movement', async () => {
    const { sim, ledger, engine } = await till(0);
    const card = cardOnReader(0);
    const calls = ledger.calls.length;
    const failure = await cleared(
      clearBlockedCard(card.card, engine, { blocks: blockedList().list, keyFingerprint }),
    );
    await engine.close();
    assert.equal((failure as { code?: string }).code, 'CardBlocked', JSON.stringify(failure));
    assert.deepEqual([card.writes, ledger.calls.slice(calls), sim.movements.size], [0, [], 0]);
  });

  test('when the card is not blocked, or there is no list, then it returns and nothing moves', async () => {
    const { ledger, engine, card } = await till(30);
    const none = await cleared(
      clearBlockedCard(card.card, engine, { blocks: cardList().list, keyFingerprint }),
    );
    const noList = await cleared(
      clearBlockedCard(card.card, engine, { blocks: undefined, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(
      [none, noList, card.writes, ledger.calls],
      [{ returned: true }, { returned: true }, 0, []],
    );
  });

  test('when the ledger says the card is no longer blocked, then the block is forgotten and the request goes on', async () => {
    const { sim, engine, card } = await till(30);
    sim.cardRules.block(KEY, CARD, false, 'owner', 'found');
    const { list, unblocked } = blockedList();
    const outcome = await cleared(
      clearBlockedCard(card.card, engine, { blocks: list, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(
      { outcome, unblocked, held: card.held() },
      { outcome: { returned: true }, unblocked: [CARD], held: 30 },
    );
  });

  test('when the ledger cannot record the emptying now, then CardBlocked saying so, the card keeps its credits', async () => {
    const { ledger, engine, card } = await till(30);
    ledger.createMovement = () => Promise.reject(errors.ledgerUnavailable());
    const { list, unblocked } = blockedList();
    const failure = await cleared(
      clearBlockedCard(card.card, engine, { blocks: list, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(failure, {
      code: 'CardBlocked',
      status: 500,
      detail: `card ${CARD} is blocked by the shop since 2026-11-27T10:00:00Z: ${KEEP}; it could not be emptied now (${errors.ledgerUnavailable().message})`,
    });
    assert.deepEqual(
      { unblocked, held: card.held(), writes: card.writes },
      { unblocked: [], held: 30, writes: 0 },
    );
  });

  test("when the ledger refuses the emptying otherwise (another till's movement open), then CardBlocked saying so, the block kept", async () => {
    const { ledger, engine, card } = await till(30);
    const refusal = new LedgerRefusal(409, 'CardMovementPending', 'movement m of another till');
    ledger.createMovement = () => Promise.reject(refusal);
    const { list, unblocked, blocks } = blockedList();
    const failure = await cleared(
      clearBlockedCard(card.card, engine, { blocks: list, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(failure, {
      code: 'CardBlocked',
      status: 500,
      detail: `card ${CARD} is blocked by the shop since 2026-11-27T10:00:00Z: ${KEEP}; it could not be emptied now (${refusal.message})`,
    });
    assert.deepEqual(
      { unblocked, known: blocks.has(CARD), held: card.held() },
      { unblocked: [], known: true, held: 30 },
    );
  });
});

describe('cardHeldOffline', () => {
  test('when the ledger holds the card for movements decided without it, then CardHeldAtLedger names each and its state', () => {
    const error = cardHeldOffline(CARD, [
      { cardId: CARD, movementId: 'm1', state: 'posted' },
      { cardId: CARD, movementId: 'm2', state: 'voided' },
    ]);
    assert.deepEqual(seen(error), {
      code: 'CardHeldAtLedger',
      status: 500,
      detail: `card ${CARD} awaits a till that reads it online: an operator decided m1 (posted), m2 (voided) without it, and this till is offline, so its float does not recharge it; nothing moved. Retry once the till is online`,
    });
  });
});
