/**
 * Recharge and discharge as the routes call them, over the money engine, one Classic card in
 * memory and the simulated ledger: what the caller is told, what the card and the ledger hold
 * afterwards, and what is refused before anything moves. Idempotency-Key replays too.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { MAX_CARD_BALANCE, encodeValueBlock } from '../../service/card/wallet-format.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { errors, type AppError } from '../../service/errors.ts';
import { ANSWER_RETENTION_MS } from '../../service/wallet/journal-entries.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { rechargeCard, type RechargeInput } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  ManualClock,
  OTHER_TILL,
  SHOP,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  idempotency,
  ledgerOf,
  settled,
  simWithShops,
} from '../support/money-rig.ts';
import { withoutReceipt } from '../support/http-client.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };
const keyFingerprint = fingerprint(KEY);

async function setUp(
  balance: number | 'blank' = 30,
  options: Parameters<typeof engineWith>[1] = {},
) {
  const sim = simWithShops();
  if (typeof balance === 'number' && balance > 0) sim.importCard(SHOP, CARD, balance);
  const ledger = ledgerOf(sim);
  const rig = engineWith(ledger, options);
  await rig.open();
  const card = cardOnReader(balance);
  const recharge = (fields: Partial<RechargeInput> = {}) =>
    rechargeCard(card.access, rig.engine, {
      request: { credits: 10 },
      customer,
      keyFingerprint,
      ...fields,
    });
  const discharge = (fields: Partial<Parameters<typeof dischargeCard>[2]> = {}) =>
    dischargeCard(card.access, rig.engine, { keyFingerprint, ...fields });
  const movements = () => [...sim.movements.values()];
  const pool = () => sim.shops.get(SHOP)?.credits;
  return { sim, ledger, ...rig, card, recharge, discharge, movements, pool };
}

const rejectsWith = (code: string) => (error: AppError) => {
  assert.equal(error.code, code, `${error.code}: ${error.message}`);
  return true;
};

describe('recharge', () => {
  test('when credits are asked, then the card holds them, the shop pays for them, and the answer says the new balance and its price', async () => {
    const { recharge, card, movements, pool, engine } = await setUp(30);
    assert.deepEqual(withoutReceipt(await recharge()), {
      cardId: CARD,
      credits: 40,
      rechargeAmount: 5,
    });
    assert.equal(card.held(), 40);
    await eventually(() => movements()[0]?.state === 'posted', 'the post');
    assert.equal(pool(), 990);
    await engine.close();
  });

  test('when an amount is asked, then the ledger converts it at its credit cost and the answer is the price of the credits', async () => {
    const { recharge, card, movements, engine } = await setUp('blank');
    const answer = await recharge({ request: { amount: '5.25' } });
    assert.deepEqual(withoutReceipt(answer), { cardId: CARD, credits: 10, rechargeAmount: 5 });
    assert.equal(card.held(), 10);
    assert.equal(movements()[0]?.credits, 10);
    await engine.close();
  });

  test('when the amount buys less than one credit, then 400 before the card or the ledger is asked', async () => {
    const { recharge, card, ledger, engine } = await setUp(30);
    await assert.rejects(
      async () => recharge({ request: { amount: '0.49' } }),
      (error: AppError) => {
        assert.equal(error.code, 'Invalid credits or amount value');
        assert.equal(error.message, 'amount below one credit');
        return true;
      },
    );
    assert.deepEqual(ledger.calls, []);
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test('when the card holds a negative balance, then NegativeCredits and nothing is reserved', async () => {
    const { recharge, card, ledger, engine } = await setUp(30);
    card.slots[0] = encodeValueBlock(-5, 1);
    await assert.rejects(recharge(), rejectsWith('NegativeCredits'));
    assert.deepEqual(ledger.calls, []);
    await engine.close();
  });

  test('when the credits would not fit on the card, then CardBalanceOverflow: before the ledger is asked, or, when the ledger converted an amount, with its movement voided', async () => {
    const { recharge, card, ledger, movements, pool, engine } = await setUp(30);
    card.slots[0] = encodeValueBlock(MAX_CARD_BALANCE - 9, 1);
    await assert.rejects(recharge(), rejectsWith('CardBalanceOverflow'));
    assert.deepEqual(ledger.calls, []);
    assert.deepEqual(withoutReceipt(await recharge({ request: { credits: 9 } })), {
      cardId: CARD,
      credits: MAX_CARD_BALANCE,
      rechargeAmount: 4.5,
    });
    card.slots[1] = encodeValueBlock(MAX_CARD_BALANCE - 9, 3);
    await assert.rejects(
      recharge({ request: { amount: '5.00' } }),
      rejectsWith('CardBalanceOverflow'),
    );
    await eventually(() => movements()[1]?.state === 'voided', 'the void');
    assert.equal(pool(), 1_000 - 9);
    assert.equal(card.writes, 1);
    await engine.close();
  });

  test("when the ledger refuses, then the spec's error for it and the card is not written", async () => {
    const cases: [string, string][] = [
      ['NoCredits', 'NoCredits'],
      ['AmountBelowOneCredit', 'Invalid credits or amount value'],
      ['CardMovementPending', 'MovementPendingAtOtherTill'],
      ['MovementIdConflict', 'MovementIdConflict'],
    ];
    for (const [refusal, code] of cases) {
      const { recharge, card, ledger, engine } = await setUp(30);
      ledger.createMovement = async () => {
        throw new LedgerRefusal(422, refusal);
      };
      await assert.rejects(recharge(), rejectsWith(code));
      assert.equal(card.writes, 0, refusal);
      await engine.close();
    }
  });

  test("when another till's movement of the card is pending, then MovementPendingAtOtherTill, saying so", async () => {
    const { recharge, sim, card, engine } = await setUp(30);
    sim.create(KEY, {
      id: randomUUID(),
      kind: 'recharge',
      cardId: CARD,
      credits: 1,
      tillId: OTHER_TILL,
    });
    await assert.rejects(recharge(), rejectsWith('MovementPendingAtOtherTill'));
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test('when the card holds more than its account and the shop refuses such cards, then CardAccountExceeded and the card is flagged; otherwise it is recharged', async () => {
    const { recharge, card, engine, sim } = await setUp(30);
    card.slots[0] = encodeValueBlock(80, 1);
    const flagged: [string, number][] = [];
    await assert.rejects(
      recharge({
        refuseAboveAccount: true,
        onFlagged: (id, credits) => flagged.push([id, credits]),
      }),
      rejectsWith('CardAccountExceeded'),
    );
    assert.deepEqual(flagged, [[CARD, 80]]);
    assert.equal(card.writes, 0);
    assert.equal(
      (await recharge({ onFlagged: (id, credits) => flagged.push([id, credits]) })).credits,
      90,
    );
    assert.equal(flagged.length, 1, 'flagged at the ledger only');
    assert.equal(sim.flagged.size, 2);
    await engine.close();
  });

  test('when the card is personalized before a recharge, then before its wallet is read', async () => {
    const { recharge, card, engine } = await setUp(30);
    const steps: string[] = [];
    const read = card.card.readWallet;
    card.card.readWallet = async (proof) => {
      steps.push('read');
      return read(proof);
    };
    await recharge({
      personalizer: { beforeRecharge: async () => void steps.push('personalize') },
    });
    assert.deepEqual(steps.slice(0, 2), ['personalize', 'read']);
    await engine.close();
  });

  test("when the card write certainly failed, then the card's error and the movement is voided, the shop's credits back", async () => {
    const { recharge, card, movements, pool, engine } = await setUp(30);
    card.nextWrite = 'fails';
    await assert.rejects(recharge(), rejectsWith('NoCard'));
    await eventually(() => movements()[0]?.state === 'voided', 'the void');
    assert.equal(pool(), 1_000);
    assert.equal(card.held(), 30);
    await engine.close();
  });

  test('when the card left mid-write, then CardRemovedDuringWrite; presented again, the write it holds is posted and the request goes on from there', async () => {
    const { recharge, card, movements, engine } = await setUp(30);
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    assert.equal(movements()[0]?.state, 'pending');
    assert.deepEqual(engine.uncertainCards, new Set([CARD]));
    assert.equal((await recharge()).credits, 50);
    assert.deepEqual(
      movements().map((movement) => movement.state),
      ['posted', engine.unconfirmed === 0 ? 'posted' : 'pending'],
    );
    assert.deepEqual(engine.uncertainCards, new Set());
    await engine.close();
  });

  test('when the answer is to wait for the post, then it comes only once the ledger posted; by default it does not wait', async () => {
    for (const postBeforeAnswer of [true, false]) {
      const { recharge, ledger, movements, engine } = await setUp(30, { postBeforeAnswer });
      let release: (() => void) | undefined;
      const post = ledger.postMovement;
      ledger.postMovement = async (...args) => {
        await new Promise<void>((resolve) => (release = resolve));
        return post(...args);
      };
      let answered = false;
      const answer = recharge().then(() => (answered = true));
      await eventually(() => release !== undefined, 'the post asked');
      await settled();
      assert.equal(answered, !postBeforeAnswer, `postBeforeAnswer ${postBeforeAnswer}`);
      release?.();
      await answer;
      await eventually(() => movements()[0]?.state === 'posted', 'the post done');
      await engine.close();
    }
  });
});

describe('discharge', () => {
  test('when the card holds credits, then it is cleared and the answer is what it held and its price', async () => {
    const { discharge, card, movements, pool, engine } = await setUp(30);
    assert.deepEqual(withoutReceipt(await discharge()), {
      cardId: CARD,
      dischargedCredits: 30,
      dischargedAmount: 15,
    });
    assert.equal(card.held(), 0);
    await eventually(() => movements()[0]?.state === 'posted', 'the post');
    assert.equal(pool(), 1_030);
    await engine.close();
  });

  test('when the card holds nothing, then zeros and nothing is written or recorded', async () => {
    for (const balance of [0, 'blank'] as const) {
      const { discharge, card, ledger, engine } = await setUp(balance);
      assert.deepEqual(withoutReceipt(await discharge()), {
        cardId: CARD,
        dischargedCredits: 0,
        dischargedAmount: 0,
      });
      assert.equal(card.writes, 0);
      assert.deepEqual(ledger.calls, []);
      await engine.close();
    }
  });

  test('when the card holds a negative balance, then NegativeCredits and nothing is recorded', async () => {
    const { discharge, card, ledger, engine } = await setUp(30);
    card.slots[0] = encodeValueBlock(-1, 1);
    await assert.rejects(discharge(), rejectsWith('NegativeCredits'));
    assert.deepEqual(ledger.calls, []);
    await engine.close();
  });

  test('when the card holds more than the shop put on it, then CardAccountExceeded, the card flagged, and not written', async () => {
    const { discharge, card, engine } = await setUp(30);
    card.slots[0] = encodeValueBlock(31, 1);
    const flagged: [string, number][] = [];
    await assert.rejects(
      discharge({ onFlagged: (id, credits) => flagged.push([id, credits]) }),
      rejectsWith('CardAccountExceeded'),
    );
    assert.deepEqual(flagged, [[CARD, 31]]);
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test("when the ledger cannot record the payout, then ErrorTrackingDischargeMovement, the card not flagged; its refusals of the caller's key or of another till's card are their own errors", async () => {
    const cases: [unknown, string][] = [
      [errors.ledgerUnavailable(), 'ErrorTrackingDischargeMovement'],
      [new Error('socket hang up'), 'ErrorTrackingDischargeMovement'],
      [errors.invalidApiKey(), 'Unauthorized: invalid api key'],
    ];
    for (const [failure, code] of cases) {
      const { discharge, ledger, card, engine } = await setUp(30);
      ledger.createMovement = async () => {
        throw failure;
      };
      const flagged: [string, number][] = [];
      await assert.rejects(
        discharge({ onFlagged: (id, credits) => flagged.push([id, credits]) }),
        rejectsWith(code),
      );
      assert.equal(card.writes, 0);
      assert.deepEqual(flagged, [], 'only CardAccountExceeded flags the card');
      await engine.close();
    }
    const { discharge, sim, engine } = await setUp(30);
    sim.create(KEY, {
      id: randomUUID(),
      kind: 'recharge',
      cardId: CARD,
      credits: 1,
      tillId: OTHER_TILL,
    });
    await assert.rejects(discharge(), rejectsWith('MovementPendingAtOtherTill'));
    await engine.close();
  });
});

describe('Idempotency-Key', () => {
  test('when the same key comes again, then the first answer without touching the card; with another body, 422', async () => {
    const { recharge, discharge, card, engine } = await setUp(30);
    const key = idempotency('k-1', '{"credits":10}');
    const first = await recharge({ idempotency: key });
    await eventually(() => engine.unconfirmed === 0, 'the post');
    const writes = card.writes;
    assert.deepEqual(await recharge({ idempotency: key }), first);
    assert.equal(card.writes, writes);
    await assert.rejects(
      discharge({ idempotency: { ...key, requestHash: 'another body' } }),
      (error: AppError) => error.code === 'IdempotencyKeyReused' && error.status === 422,
    );
    await engine.close();
  });

  test('when the same key comes while the first request runs, then 409; once it ended, it is free again', async () => {
    const { recharge, card, engine } = await setUp(30);
    const key = idempotency('k-2', '{"credits":10}');
    let release = () => {};
    const read = card.card.readWallet;
    card.card.readWallet = async (proof) => {
      await new Promise<void>((resolve) => (release = resolve));
      card.card.readWallet = read;
      return read(proof);
    };
    const first = recharge({ idempotency: key });
    await settled();
    await assert.rejects(
      recharge({ idempotency: key }),
      (error: AppError) => error.code === 'IdempotencyKeyInUse' && error.status === 409,
    );
    release();
    const answer = await first;
    assert.deepEqual(await recharge({ idempotency: key }), answer);
    await engine.close();
  });

  test('when the first attempt failed, then the same key runs the request again', async () => {
    const { recharge, card, engine } = await setUp(30);
    const key = idempotency('k-3', '{"credits":10}');
    card.nextWrite = 'fails';
    await assert.rejects(recharge({ idempotency: key }), rejectsWith('NoCard'));
    assert.equal((await recharge({ idempotency: key })).credits, 40);
    assert.equal(card.held(), 40);
    await engine.close();
  });

  test('when the key comes with another card on the reader, then IdempotencyKeyOtherCard; an earlier attempt undecided on another card, MovementUnsettled', async () => {
    const { recharge, card, engine } = await setUp(30);
    const key = idempotency('k-4', '{"credits":10}');
    await recharge({ idempotency: key });
    const other = cardOnReader(5, '04BBBBBB');
    const input = { request: { credits: 10 }, customer, keyFingerprint, idempotency: key };
    await assert.rejects(
      rechargeCard(other.access, engine, input),
      rejectsWith('IdempotencyKeyOtherCard'),
    );
    const undecided = idempotency('k-5', '{"credits":10}');
    card.nextWrite = 'lost';
    await assert.rejects(
      recharge({ idempotency: undecided }),
      rejectsWith('CardRemovedDuringWrite'),
    );
    await assert.rejects(
      rechargeCard(other.access, engine, { ...input, idempotency: undecided }),
      rejectsWith('MovementUnsettled'),
    );
    assert.equal(other.writes, 0);
    await engine.close();
  });

  test('when the answer is 24 h old, then the key starts a new movement', async () => {
    const clock = new ManualClock();
    clock.time = Date.parse('2024-01-01T00:00:00.000Z');
    const { recharge, card, engine } = await setUp(30, { clock });
    const key = idempotency('k-6', '{"credits":10}');
    await recharge({ idempotency: key });
    await eventually(() => engine.unconfirmed === 0, 'the post');
    await clock.advance(ANSWER_RETENTION_MS - 1);
    assert.equal((await recharge({ idempotency: key })).credits, 40, 'replayed within 24 h');
    await clock.advance(1);
    assert.equal((await recharge({ idempotency: key })).credits, 50, 'a new movement');
    assert.equal(card.held(), 50);
    await engine.close();
  });
});
