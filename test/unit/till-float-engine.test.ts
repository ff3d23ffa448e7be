/**
 * The till float through the money engine and its use cases, in memory (float-rig.ts): a
 * recharge the float covers is answered without a ledger call and reported afterwards, online
 * and offline; offline, its bounds refuse with a detail and a payout is refused; an undecided
 * float write is reported so, then decided on its card; what a card shows of another till's
 * float is reported as found; a till whose journal lost its float sells nothing from it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { encodeFloatReference } from '../../service/card/float-reference.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { AppError, errors } from '../../service/errors.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { SETTINGS } from '../support/float-fixtures.ts';
import { floatLedgerOf, floatRig } from '../support/float-rig.ts';
import {
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  idempotency,
  KEY,
  ManualClock,
  MemoryStore,
  SHOP,
  settled,
  TILL,
} from '../support/money-rig.ts';
import { SimLedger } from '../simulation/sim-ledger.ts';
import { MAX_CARD_BALANCE } from '../../service/card/wallet-format.ts';

const engines: MovementEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

/** A rig started, its float as it first syncs (open, unless the ledger holds one it lost). */
async function started(options: Parameters<typeof floatRig>[0] = {}, state = 'online') {
  const rig = floatRig(options);
  engines.push(rig.engine);
  await rig.open();
  rig.customer();
  rig.engine.start();
  await rig.clock.advance(0);
  await eventually(() => rig.floats.status().state === state, `the float ${state}`);
  const recharge = (
    access: ReturnType<typeof cardOnReader>['access'],
    credits: number,
    key?: string,
  ) =>
    rechargeCard(access, rig.engine, {
      request: { credits },
      customer: rig.customer(),
      keyFingerprint: fingerprint(KEY),
      ...(key ? { idempotency: idempotency(key, `credits ${credits}`) } : {}),
    });
  return { ...rig, recharge };
}

const opened = (options: Parameters<typeof floatRig>[0] = {}) => started(options);

/** The error a promise fails with. */
async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  assert.fail('it did not fail');
}

describe('a recharge paid from the float', () => {
  test('when the float covers a recharge, then it is written with its reference and answered without a ledger call, then reported once', async () => {
    const rig = await opened();
    const floatId = rig.floats.status().floatId as string;
    const card = cardOnReader(10, '04E1E2E3', { spare: true });
    const { access, held } = card;
    const creates = rig.ledger.calls.length;
    const answer = await rig.recharge(access, 30);
    assert.equal(answer.credits, 40);
    assert.equal(answer.rechargeAmount, 15);
    assert.equal(held(), 40);
    const float = rig.sim.floats.floats.get(floatId);
    const id = floatMovementId(float?.prefix as string, 1);
    assert.equal(answer.movementId, id);
    assert.deepEqual(rig.ledger.calls.slice(creates), [], 'no pool movement');
    // The card names the recharge: its reference, at the generation of the slot written with it.
    assert.equal(
      card.spareBlock.toString('hex'),
      encodeFloatReference({ generation: 2, movementId: id, credits: 30 }).toString('hex'),
    );
    await rig.clock.advance(0);
    await eventually(() => rig.journal.movements.get(id)?.resolved === 'posted', 'reported');
    assert.equal(rig.sim.movements.get(id)?.state, 'posted');
    assert.equal(rig.sim.cardAccount(rig.sim.customer(KEY).customerId, '04E1E2E3'), 30);
    assert.equal(rig.floats.status().left, 170);
    assert.equal(rig.ledger.floatCalls.filter((call) => call.startsWith('report')).length, 1);
  });

  test("when a float recharge carries the POS's reference, then its report brings it to the ledger; one without none", async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    const sell = (reference?: string) =>
      rechargeCard(card.access, rig.engine, {
        request: { credits: 5 },
        customer: rig.customer(),
        keyFingerprint: fingerprint(KEY),
        ...(reference === undefined ? {} : { reference }),
      });
    const withReference = await sell('till-7/receipt-42');
    const without = await sell();
    await rig.clock.advance(0);
    await eventually(() => rig.floats.status().toReport === 0, 'reported');
    assert.equal(
      rig.sim.movements.get(withReference.movementId as string)?.reference,
      'till-7/receipt-42',
    );
    assert.equal(rig.sim.movements.get(without.movementId as string)?.reference, null);
  });

  test('when the ledger is down, then a recharge within the cap still sells, one beyond it or past the offline limit is NoCredits saying why, and nothing moves', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    rig.ledger.down = true;
    // A failed call tells the till it is offline.
    await rig.engine.floats?.keeper.sync();
    assert.equal(rig.floats.keeper.online, false);
    const sold = await rig.recharge(card.access, 40);
    assert.equal(sold.credits, 40);
    const capped = await failure(rig.recharge(card.access, 41));
    assert.deepEqual(
      [capped.code, capped.detail],
      ['NoCredits', 'offline: at most 40 credits per recharge while the ledger cannot be reached'],
    );
    assert.equal(card.held(), 40);
    // An hour on, at once: the retry timers then due run once each, not once per 20 ms.
    rig.clock.time += 3600 * 1000;
    await rig.clock.advance(0);
    const late = await failure(rig.recharge(card.access, 5));
    assert.equal(late.code, 'NoCredits');
    assert.match(late.detail ?? '', /^offline: the offline time limit passed at /);
    assert.equal(card.held(), 40);
    assert.equal(rig.floats.status().state, 'stopped');

    rig.ledger.down = false;
    await rig.floats.keeper.sync();
    await eventually(() => rig.floats.reporter.pending === 0, 'reported');
    assert.equal(rig.sim.cardAccount(rig.sim.customer(KEY).customerId, '04E1E2E3'), 40);
  });

  test('when a float recharge is asked again with its Idempotency-Key while offline, then the journal answers it, card untouched', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    const first = await rig.recharge(card.access, 25, 'sale-1');
    const writes = card.writes;
    const again = await rig.recharge(card.access, 25, 'sale-1');
    assert.deepEqual(again, first);
    assert.equal(card.writes, writes);
    assert.equal(card.held(), 25);
  });

  test('when a payout is asked while offline, then it is ErrorTrackingDischargeMovement saying why, the card untouched', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    await rig.recharge(card.access, 20);
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    const refused = await failure(
      dischargeCard(card.access, rig.engine, { keyFingerprint: fingerprint(KEY) }),
    );
    assert.equal(refused.code, 'ErrorTrackingDischargeMovement');
    assert.match(refused.detail ?? '', /a payout needs it/);
    assert.equal(card.held(), 20);
  });

  test('when a payout follows an unreported float recharge, then the recharge is reported first, so the card is within its account', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    // Reports go unanswered: the recharge stays unreported.
    rig.ledger.down = true;
    await rig.recharge(card.access, 20);
    rig.ledger.down = false;
    const paid = await dischargeCard(card.access, rig.engine, { keyFingerprint: fingerprint(KEY) });
    assert.equal(paid.dischargedCredits, 20);
    assert.equal(card.held(), 0);
  });

  test("when a float recharge's card leaves mid-write, then it is reported undecided, and its card decides it when seen", async () => {
    const rig = await opened();
    const card = cardOnReader(10, '04E1E2E3', { spare: true });
    card.nextWrite = 'lost';
    const torn = await failure(rig.recharge(card.access, 15));
    assert.equal(torn.code, 'CardRemovedDuringWrite');
    const [movement] = [...rig.journal.movements.values()].filter((m) => m.float);
    const id = movement?.id as string;
    await rig.clock.advance(0);
    await eventually(() => rig.sim.movements.get(id)?.state === 'pending', 'reported undecided');
    assert.equal(rig.journal.movements.get(id)?.reportedUndecided, true);
    // The float counts it spent meanwhile: it may be on the card.
    assert.equal(rig.floats.status().left, 185);
    await rig.engine.settle(card.card);
    await rig.clock.advance(0);
    await eventually(() => rig.sim.movements.get(id)?.state === 'posted', 'decided and reported');
    assert.equal(rig.sim.cardAccount(rig.sim.customer(KEY).customerId, '04E1E2E3'), 15);
  });

  test('when an operator voids an undecided float recharge without its card and the card turns up holding it, then its till compensates it once, and the books add up', async () => {
    const rig = await opened();
    const card = cardOnReader(10, '04E1E2E3', { spare: true });
    card.nextWrite = 'lost';
    await failure(rig.recharge(card.access, 15));
    const [movement] = [...rig.journal.movements.values()].filter((m) => m.float);
    const id = movement?.id as string;
    await rig.clock.advance(0);
    await eventually(() => rig.sim.movements.get(id)?.state === 'pending', 'reported undecided');
    rig.sim.decide(id, 'voided', 'operator: the card was reported lost');
    // The card turns up at its till, holding the write.
    await rig.engine.settle(card.card);
    await rig.clock.advance(0);
    const shop = rig.sim.customer(KEY).customerId;
    await eventually(
      () => rig.sim.cardAccount(shop, '04E1E2E3') === 15,
      'the voided recharge compensated',
    );
    await settled();
    const fixes = [...rig.sim.movements.values()].filter((m) => m.compensates === id);
    assert.deepEqual(
      fixes.map((fix) => [fix.kind, fix.credits, fix.state]),
      [['recharge', 15, 'posted']],
    );
    assert.equal(rig.sim.movements.get(id)?.awaitsCard, false, 'the card is held no more');
    assert.equal(card.held(), 25);
  });

  test("when a card shows another till's float recharge, then it is reported as found, once", async () => {
    const rig = await opened();
    // Another till's float of the same shop, and a recharge of it the card shows.
    const other = rig.sim.floats.open(KEY, {
      tillId: '00000000-0000-4000-8000-0000000000ff',
      requestId: '00000000-0000-4000-8000-0000000000fe',
      ids: 10,
    }).float;
    const id = floatMovementId(other.idPrefix, 3);
    const card = cardOnReader(30, '04E1E2E3', { spare: true });
    card.spareBlock = encodeFloatReference({ generation: 1, movementId: id, credits: 30 });
    await rig.recharge(card.access, 5);
    await rig.clock.advance(0);
    await eventually(() => rig.sim.movements.get(id)?.state === 'posted', 'found');
    assert.equal(rig.sim.movements.get(id)?.reportedAs, 'found');
    assert.equal(rig.journal.floats.found.get(id)?.reportedAt !== undefined, true);
    const reports = rig.ledger.floatCalls.filter((call) => call.startsWith('report')).length;
    await rig.recharge(card.access, 5);
    await rig.clock.advance(0);
    await settled();
    // Seen again: nothing new to report of it (its own recharges only).
    assert.equal(rig.sim.cardAccount(rig.sim.customer(KEY).customerId, '04E1E2E3'), 40);
    assert.ok(rig.ledger.floatCalls.filter((call) => call.startsWith('report')).length >= reports);
  });

  test("when a card shows another till's float recharge that an operator voided without it, and this till's card list did not name it held yet, then its float sale over the card compensates that recharge: the card showed it landed", async () => {
    // The Classic race of seed 769750810: till A's float recharge of 20 landed as the card left
    // (undecided at A), an operator voided it (the card reported lost), and this till, its card
    // list older than that hold, sold the card 5 credits from its float. Its slot write replaced
    // the reference that named A's recharge: nobody could tell afterwards that it had landed.
    const rig = await opened();
    const { card, id, account } = await voidedFoundOnCard(rig, 'undecided');
    rig.sim.decide(id, 'voided', 'operator: the card was reported lost');
    assert.equal(rig.sim.movements.get(id)?.awaitsCard, true);

    const answer = await rig.recharge(card.access, 5);
    assert.equal(answer.credits, 35);
    await rig.clock.advance(0);
    await eventually(() => account() === 25, 'the voided recharge compensated');
    await settled();
    const fixes = [...rig.sim.movements.values()].filter((m) => m.compensates === id);
    assert.deepEqual(
      fixes.map((fix) => [fix.kind, fix.credits, fix.state, fix.tillId]),
      [['recharge', 20, 'posted', TILL]],
    );
    assert.equal(rig.sim.movements.get(id)?.awaitsCard, false, 'the card is held no more');
    assert.equal(rig.journal.floats.found.get(id)?.reportedAt !== undefined, true);
    assert.equal(account(), 25, 'the card account: this sale and the compensation');
  });

  test('when the ledger does not answer the look-up of a found recharge it voided, then the found report is sent again, and the recharge is compensated once', async () => {
    const rig = await opened();
    const { card, id, account } = await voidedFoundOnCard(rig, 'undecided');
    rig.sim.decide(id, 'voided', 'operator: the card was reported lost');
    const getMovement = rig.ledger.getMovement;
    const asked: string[] = [];
    rig.ledger.getMovement = async (apiKey, movementId) => {
      asked.push(movementId);
      throw errors.ledgerUnavailable();
    };
    await rig.recharge(card.access, 5);
    await rig.clock.advance(0);
    await eventually(() => asked.length > 0, 'the voided recharge looked up');
    await settled();
    assert.equal(rig.journal.floats.found.get(id)?.reportedAt, undefined, 'not settled yet');
    assert.equal(account(), 5);
    rig.ledger.getMovement = getMovement;
    await rig.clock.advance(1_000);
    await eventually(() => account() === 25, 'the voided recharge compensated');
    await settled();
    assert.equal([...rig.sim.movements.values()].filter((m) => m.compensates === id).length, 1);
    assert.equal(rig.journal.floats.found.get(id)?.reportedAt !== undefined, true);
  });

  test("when a card shows another till's float recharge that its till reported not written (from the card), then the finder compensates nothing: the two disagree, for an operator", async () => {
    const rig = await opened();
    const { card, id, account } = await voidedFoundOnCard(rig, 'not-written');
    await rig.recharge(card.access, 5);
    await rig.clock.advance(0);
    await eventually(
      () => rig.journal.floats.found.get(id)?.reportedAt !== undefined,
      'the found recharge reported',
    );
    await settled();
    assert.deepEqual(
      [...rig.sim.movements.values()].filter((m) => m.compensates === id),
      [],
    );
    assert.equal(account(), 5);
  });
});

/**
 * A card showing another till's float recharge of 20 (10 at generation 1 -> 30 at generation
 * 2, its reference first), which that till reported as `report` ('undecided': the card left
 * mid-write; 'not-written': voided on its till's word). `account`: the card's account.
 */
async function voidedFoundOnCard(
  rig: Awaited<ReturnType<typeof opened>>,
  report: 'undecided' | 'not-written',
) {
  const tillA = '00000000-0000-4000-8000-0000000000ff';
  const other = rig.sim.floats.open(KEY, {
    tillId: tillA,
    requestId: '00000000-0000-4000-8000-0000000000fe',
    ids: 10,
  }).float;
  const id = floatMovementId(other.idPrefix, 1);
  const card = cardOnReader(10, '04E1E2E3', { spare: true });
  const { before } = await rig.engine.readWallet(card.card);
  card.slots[1] = encodeValueBlock(30, 2);
  card.spareBlock = encodeFloatReference({ generation: 2, movementId: id, credits: 20 });
  const [reported] = rig.sim.floats.report(KEY, tillA, [
    { id, cardId: '04E1E2E3', credits: 20, card: report, creditCost: '0.50', cardBefore: before },
  ]).results;
  assert.equal(reported?.state, report === 'undecided' ? 'pending' : 'voided');
  const shop = rig.sim.customer(KEY).customerId;
  return { card, id, account: () => rig.sim.cardAccount(shop, '04E1E2E3') };
}

/**
 * A card the ledger holds: another till's recharge of it, which did not land, voided by an
 * operator without the card (it was reported lost). `holds` is the till's card list as the
 * simulated ledger lists it; `read` the cards the till learnt it read.
 */
async function heldByOperator(rig: Awaited<ReturnType<typeof opened>>) {
  const card = cardOnReader(10, '04E1E2E3', { spare: true });
  const { before } = await rig.engine.readWallet(card.card);
  const voided = randomUUID();
  rig.sim.create(KEY, {
    id: voided,
    kind: 'recharge',
    cardId: '04E1E2E3',
    credits: 5,
    tillId: '00000000-0000-4000-8000-0000000000ff',
    cardBefore: before,
  });
  rig.sim.decide(voided, 'voided', 'operator: the card was reported lost');
  const read: string[] = [];
  const holds = {
    heldFor: (cardId: string) =>
      (rig.sim.cardRules.list(KEY).held ?? []).filter((held) => held.cardId === cardId),
    learntRead: (cardId: string) => void read.push(cardId),
  };
  const recharge = (credits: number) =>
    rechargeCard(card.access, rig.engine, {
      request: { credits },
      customer: rig.customer(),
      keyFingerprint: fingerprint(KEY),
      holds,
    });
  return { card, voided, read, recharge };
}

describe("a card the ledger holds for an operator's word", () => {
  test("when the card list names it held, then a recharge takes the ledger's path, which settles the word from the card first, and the float sells nothing over it", async () => {
    const rig = await opened();
    const { card, voided, read, recharge } = await heldByOperator(rig);
    const available = rig.floats.status().left;
    const answer = await recharge(7);
    assert.equal(answer.credits, 17);
    assert.equal(card.held(), 17);
    // The operator's word confirmed from the card: held no more, and the till knows it.
    assert.equal(rig.sim.movements.get(voided)?.awaitsCard, false, 'the card is held no more');
    assert.deepEqual(read, ['04E1E2E3']);
    // Paid from the pool, not the float.
    const sold = rig.sim.movements.get(answer.movementId as string);
    assert.deepEqual([sold?.state, sold?.floatId], ['posted', null]);
    assert.equal(rig.floats.status().left, available);
  });

  test('when the till is offline, then a recharge of it is CardHeldAtLedger saying why, and nothing moves', async () => {
    const rig = await opened();
    const { card, voided, recharge } = await heldByOperator(rig);
    const available = rig.floats.status().left;
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    const refused = await failure(recharge(7));
    assert.equal(refused.code, 'CardHeldAtLedger', refused.detail);
    assert.match(
      refused.detail ?? '',
      new RegExp(
        `^card 04E1E2E3 awaits a till that reads it online: an operator decided ${voided} \\(voided\\) without it`,
      ),
    );
    assert.equal(card.held(), 10);
    assert.equal(rig.floats.status().left, available);
    assert.equal(rig.sim.movements.get(voided)?.awaitsCard, true);
  });
});

describe("the float's life", () => {
  test('when the float runs below its low-water mark, then the till tops it up, within its size', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    for (let i = 0; i < 4; i += 1) await rig.recharge(card.access, 40);
    await rig.clock.advance(0);
    await eventually(() => rig.floats.status().left === 200, 'topped up');
    assert.ok(rig.ledger.floatCalls.includes('topup'));
  });

  test('when quick sales leave the float few movement ids but credits above its low-water mark, then the till asks for more ids at once, so it can keep selling offline', async () => {
    const rig = await opened({ settings: { offlineCap: null } });
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    // 100 ids at open; 51 one-credit sales leave 49 (IDS_LOW is 50) and 149 credits of 200.
    for (let i = 0; i < 51; i += 1) await rig.recharge(card.access, 1);
    await rig.clock.advance(0);
    await eventually(() => rig.ledger.floatCalls.includes('topup'), 'more ids asked for');
    await eventually(() => rig.floats.status().toReport === 0, 'the sales reported');
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    for (let i = 0; i < 60; i += 1) await rig.recharge(card.access, 1);
    assert.equal(rig.floats.status().state, 'offline');
  });

  test('when the ledger stays down while the till sells below its low-water mark, then it probes the ledger at a steady pace', async () => {
    const rig = await opened({ settings: { lowWater: 190 } });
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    let asked = 0;
    const getCustomer = rig.ledger.getCustomer;
    rig.ledger.getCustomer = (apiKey) => {
      asked += 1;
      return getCustomer(apiKey);
    };
    // Each sale below the low-water mark asks for a sync (a top-up), a second apart.
    for (let i = 0; i < 9; i += 1) {
      await rig.recharge(card.access, 20);
      rig.clock.time += 1_000;
      await rig.clock.advance(0);
    }
    const before = asked;
    for (let step = 0; step < 600; step += 1) {
      rig.clock.time += 1_000;
      await rig.clock.advance(0);
    }
    // Ten minutes at one probe per 15 s: 40 asks, not 40 per sale that asked for a sync.
    assert.ok(asked - before <= 41, `asked ${asked - before} times in 10 minutes`);
  });

  test('when a top-up answer is lost, then it is asked again with the same id, and the float gets it once', async () => {
    const rig = await opened({ settings: { lowWater: 150 } });
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    const topUp = rig.ledger.topUpFloat;
    let lost = true;
    rig.ledger.topUpFloat = async (apiKey, floatId, request) => {
      const answer = await topUp(apiKey, floatId, request);
      if (lost) {
        lost = false;
        throw new AppError('LedgerUnavailable', 500);
      }
      return answer;
    };
    await rig.recharge(card.access, 60);
    await rig.floats.keeper.sync();
    assert.equal(rig.floats.status().left, 140, 'not counted before its answer');
    await rig.floats.keeper.sync();
    assert.equal(rig.floats.status().left, 200);
    const float = rig.sim.floats.floats.get(rig.floats.status().floatId as string);
    assert.equal(float?.granted, 260);
  });

  test('when the shop stops floats, then the till reports everything and closes its float, the rest back to the pool', async () => {
    const rig = await opened();
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    await rig.recharge(card.access, 30);
    const shop = rig.sim.shops.get(rig.sim.customer(KEY).customerId);
    if (shop?.float) shop.float = { ...shop.float, size: 0 };
    rig.customer();
    await rig.floats.keeper.sync();
    await eventually(() => rig.floats.status().state === 'off', 'closed');
    assert.equal(rig.sim.customer(KEY).credits, 970);
  });

  test('when a till comes back with an empty journal, then it sells nothing from the float the ledger holds for it, until an operator closed it', async () => {
    const rig = await opened();
    const floatId = rig.floats.status().floatId as string;
    await rig.engine.close();
    // The same till, its data folder lost: a new journal, the same ledger.
    const back = await started({ of: rig, store: new MemoryStore() }, 'held');
    assert.match(
      back.floats.status().line,
      new RegExp(`float ${floatId} awaits an operator's close`),
    );
    const card = cardOnReader(0, '04E1E2E3', { spare: true });
    const creates = back.ledger.calls.filter((call) => call.startsWith('create')).length;
    // Online, a recharge is paid from the pool instead.
    await back.recharge(card.access, 10);
    assert.equal(back.ledger.calls.filter((call) => call.startsWith('create')).length, creates + 1);
    back.ledger.down = true;
    await back.floats.keeper.sync();
    const offline = await failure(back.recharge(card.access, 10));
    assert.match(offline.detail ?? '', /awaits an operator's close/);
    back.ledger.down = false;
    rig.sim.floats.closeByOperator(rig.sim.customer(KEY).customerId, floatId, {
      movements: [],
      writeOff: 0,
      reason: null,
    });
    await back.floats.keeper.sync();
    await back.floats.keeper.sync();
    assert.equal(back.floats.status().state, 'online');
    assert.notEqual(back.floats.status().floatId, floatId);
  });
});

describe('a float recharge by amount with bonus tiers', () => {
  const tiers = (bonusCredits: number) => ({
    undoWindowSeconds: 600,
    bonusSpend: 'bonus-first' as const,
    bonusTiers: [{ minAmount: '10.00', bonusCredits }],
  });

  test('when the tiers change while the till is offline, then its float gives the bonus of the tiers it learnt last, and the ledger records it and flags it', async () => {
    const rig = await opened();
    const shop = [...rig.sim.shops.values()].find((one) => one.name === 'A');
    assert.ok(shop);
    shop.cards = tiers(2);
    rig.customer(); // the till learns the shop, its tiers with it
    await rig.clock.advance(0);
    rig.ledger.down = true;
    await rig.floats.keeper.sync();
    assert.equal(rig.floats.keeper.online, false);
    shop.cards = tiers(1); // changed at the ledger while the till cannot hear it

    const card = cardOnReader(0, '04E1E2E4', { spare: true });
    const sold = await rechargeCard(card.access, rig.engine, {
      request: { amount: '10.00' },
      customer: rig.customer(), // offline: the shop as the till learnt it last
      keyFingerprint: fingerprint(KEY),
    });
    assert.deepEqual(
      [sold.credits, sold.rechargeAmount, sold.bonusCredits, card.held()],
      [22, 10, 2, 22],
      JSON.stringify(sold),
    );

    rig.ledger.down = false;
    await rig.floats.keeper.sync();
    await rig.clock.advance(0);
    const id = sold.movementId as string;
    await eventually(() => rig.journal.movements.get(id)?.resolved === 'posted', 'reported');
    const recorded = rig.sim.movements.get(id);
    assert.deepEqual(
      [recorded?.credits, recorded?.bonusCredits, recorded?.reportFlags],
      [22, 2, ['bonus-above-tiers']],
      JSON.stringify(recorded, (_key, value: unknown) =>
        typeof value === 'bigint' ? String(value) : value,
      ),
    );
  });

  test("when the till sells an amount from its float online, then the bonus is the ledger's quote of the moment, not the tiers it learnt last", async () => {
    const rig = await opened();
    const shop = [...rig.sim.shops.values()].find((one) => one.name === 'A');
    assert.ok(shop);
    shop.cards = tiers(2);
    const learnt = rig.customer(); // the till learns the shop, its tiers with it
    await rig.clock.advance(0);
    const asked: string[] = [];
    // The ledger's tiers changed since: its quote gives one bonus credit, not two.
    rig.ledger.getBonusQuote = async (_apiKey, amount) => {
      asked.push(amount);
      return {
        amount,
        paidCredits: 20,
        bonusCredits: 1,
        rechargeAmount: '10.00',
        creditCost: '0.50',
      };
    };
    const card = cardOnReader(0, '04E1E2E5', { spare: true });
    const sold = await rechargeCard(card.access, rig.engine, {
      request: { amount: '10.00' },
      customer: learnt,
      keyFingerprint: fingerprint(KEY),
    });
    assert.deepEqual(asked, ['10.00']);
    assert.deepEqual(
      [sold.credits, sold.rechargeAmount, sold.bonusCredits, card.held()],
      [21, 10, 1, 21],
      JSON.stringify(sold),
    );
    assert.equal(rig.journal.movements.get(sold.movementId as string)?.float?.credits, 21);
  });
});

/** A till selling from its shop's float with KEY, whose operator can switch it to NEW_KEY. */
async function twoKeyRig() {
  const NEW_KEY = 'engine-test-key-shop-a-02';
  const clock = new ManualClock();
  clock.time = Date.parse('2026-11-24T10:00:00Z');
  const sim = new SimLedger(() => clock.now());
  sim.addShop({ id: SHOP, name: 'A', credits: 1_000, creditCost: '0.50', float: SETTINGS }, [
    KEY,
    NEW_KEY,
  ]);
  const ledger = floatLedgerOf(sim, clock);
  const operator = { key: KEY };
  const rig = engineWith(ledger, {
    clock,
    tillId: TILL,
    floats: { ledger },
    currentKey: () => operator.key,
  });
  engines.push(rig.engine);
  const floats = rig.engine.floats;
  assert.ok(floats);
  await rig.open();
  await floats.keeper.learnShop(KEY, sim.customer(KEY));
  rig.engine.start();
  await clock.advance(0);
  await eventually(() => floats.status().state === 'online', 'the float online');
  const released: string[] = [];
  rig.keys.on('released', (key) => released.push(key));
  return { ...rig, NEW_KEY, clock, sim, floats, operator, released };
}

describe('a float sale that goes no further', () => {
  test('when only float sales wait to be reported, then the outbox leaves them to the reporter: its pass is done, and it does not run again on its own', async () => {
    const rig = await opened();
    // The ledger stops answering; the till has not noticed yet: the sale waits to be reported.
    rig.ledger.down = true;
    await rig.recharge(cardOnReader(0, '04E1E2E7', { spare: true }).access, 20);
    assert.equal(rig.floats.status().toReport, 1);
    let passes = 0;
    rig.engine.on('outboxPassed', () => (passes += 1));
    // The operator replaced a key: the outbox runs once for what it holds.
    rig.engine.retireKey('engine-test-key-shop-a-00');
    await rig.clock.advance(0);
    await eventually(() => passes === 1, 'one outbox pass');
    await rig.clock.advance(10 * 60_000);
    await settled();
    assert.equal(passes, 1, 'no retry of the outbox for a float sale');
    assert.equal(rig.floats.status().toReport, 1);
  });

  test('when a float sale fails before its journal lines (the card would overflow), then its request lets go of it: once the float is closed, the key the operator replaced is released', async () => {
    const { NEW_KEY, sim, floats, operator, released, ...rig } = await twoKeyRig();

    const card = cardOnReader(MAX_CARD_BALANCE - 5, '04E1E2E6', { spare: true });
    const refused = await failure(
      rechargeCard(card.access, rig.engine, {
        request: { amount: '10.00' },
        customer: sim.customer(KEY),
        keyFingerprint: fingerprint(KEY),
      }),
    );
    assert.equal(refused.code, 'CardBalanceOverflow', refused.message);
    assert.equal(card.writes, 0);

    // The shop stops floats: the till closes its float, and the operator replaces the key.
    const shop = sim.shops.get(SHOP);
    assert.ok(shop?.float);
    shop.float = { ...shop.float, size: 0 };
    await floats.keeper.learnShop(KEY, sim.customer(KEY));
    await floats.keeper.sync();
    await eventually(() => floats.status().state === 'off', 'the float closed');
    operator.key = NEW_KEY;
    rig.engine.retireKey(KEY);
    assert.deepEqual(released, [KEY]);
  });

  test("when the operator replaces the key while the till's float of its shop is open, then the old key is kept (closing the float needs it); another key is released at once", async () => {
    const { NEW_KEY, floats, operator, released, ...rig } = await twoKeyRig();
    operator.key = NEW_KEY;
    rig.engine.retireKey(KEY);
    rig.engine.retireKey('engine-test-key-shop-a-00');
    assert.deepEqual(released, ['engine-test-key-shop-a-00']);
    assert.equal(rig.keys.keyFor(fingerprint(KEY)), KEY, 'the old key is still held');
    assert.equal(floats.status().state, 'online');
  });
});
