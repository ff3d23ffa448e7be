import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import type { Float, FloatMovementReport } from '../../common/ledger-contract.ts';
import { waitUntil, walletBalance, type CardRig, type Till } from '../support/card-rig.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { httpRequest, shown, type HttpResponse } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { startTwoTillRig } from '../support/two-till-rig.ts';

// The till float over real HTTP (docs/operators.md, "When the internet drops"): a shop with two
// tills, each its own worker with its own reader on one pcscd, the ledger a process of its own
// on PostgreSQL. Each till reaches the ledger through a fault proxy of its own: refusing every
// connection is the ledger down (or the shop's internet gone) for that till.
let rig: CardRig;
let tillA: Till;
let tillB: Till;
let proxyB: FaultProxy;
let customerId: string;
let poolAtStart: number;
/** Cards left holding credits by an earlier test. */
const cardsLeft: string[] = [];

before(async () => {
  ({ rig, tillA, tillB } = await startTwoTillRig({
    ledgerReady: async (ledger) => {
      customerId = await ledger.ledger.authenticate(TEST_API_KEY);
      await setFloatSettings(ledger.db, customerId, { size: 200, lowWater: 50, offlineCap: 40 });
      // The pool before any till opens its float: what the pool, floats and cards add up to.
      poolAtStart = await shopCredits(ledger.url);
    },
    tillB: async ({ ledger }) => {
      proxyB = await startFaultProxy(ledger.url);
      return { cloudUrl: proxyB.url };
    },
  }));
  for (const till of [tillA, tillB]) {
    await waitUntil(() => till.service.float.state === 'online', 30_000, 'the float is open');
  }
});
after(async () => {
  await rig?.close();
  await proxyB?.close();
});

function call(till: Till, method: string, path: string, body?: unknown) {
  return httpRequest(`${till.service.url}${path}`, {
    method,
    headers: { 'X-Api-Key': till.apiKey, 'Content-Type': 'application/json' },
    ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
  });
}
const recharge = (till: Till, credits: number) => call(till, 'POST', '/writecard', { credits });
const errorOf = (answer: HttpResponse) => (answer.json as { error?: string } | undefined)?.error;
const detailOf = (answer: HttpResponse) => (answer.json as { detail?: string } | undefined)?.detail;

async function floatOf(till: Till): Promise<Float> {
  const float = (await new Floats(rig.ledger.db).till(customerId, till.service.tillId)).float;
  assert.ok(float, `till ${till.service.tillId} holds no float at the ledger`);
  return float;
}

async function cardAccount(cardId: string): Promise<number> {
  const answer = await fetch(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  return ((await answer.json()) as { credits: number }).credits;
}

/** A check's report as text (its sums are bigints). */
const shownCheck = (check: unknown) =>
  JSON.stringify(check, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );

async function ledgerDown(till: Till, proxy: FaultProxy) {
  proxy.setMode({ kind: 'refuse' });
  // A ledger call that fails tells the till it is offline.
  const info = await call(till, 'GET', '/info');
  assert.equal(info.status, 400, shown(info));
  await waitUntil(() => !till.service.float.online, 30_000, 'the till sees the ledger down');
}

describe('the till float, two tills, the ledger on PostgreSQL', () => {
  test('when the ledger goes down, then both tills keep recharging from their floats, a payout is refused, and once it is back every recharge is reported once and the books add up', async () => {
    const cardA = await rig.cardHolding(0);
    const cardB = await rig.cardHolding(0);
    await tillA.present(cardA);
    await tillB.present(cardB);
    for (const till of [tillA, tillB]) {
      const online = await recharge(till, 30);
      assert.equal(online.status, 200, shown(online));
    }

    await ledgerDown(tillA, rig.ledgerProxy);
    await ledgerDown(tillB, proxyB);
    for (const till of [tillA, tillB]) {
      const offline = await recharge(till, 20);
      assert.equal(offline.status, 200, shown(offline));
      assert.equal((offline.json as { credits: number }).credits, 50, shown(offline));
      const capped = await recharge(till, 41);
      assert.deepEqual([capped.status, errorOf(capped)], [500, 'NoCredits'], shown(capped));
      assert.match(detailOf(capped) ?? '', /at most 40 credits per recharge/, shown(capped));
    }
    const payout = await call(tillA, 'POST', '/dischargecard');
    assert.equal(payout.status, 500, shown(payout));
    assert.equal(errorOf(payout), 'ErrorTrackingDischargeMovement', shown(payout));
    assert.match(detailOf(payout) ?? '', /a payout needs it/, shown(payout));
    assert.equal(walletBalance(cardA), 50, 'the refused payout left the card alone');
    assert.match(tillA.service.float.line, /^offline since \d\d:\d\d: 1 recharge to report, /);

    rig.ledgerProxy.setMode({ kind: 'pass' });
    proxyB.setMode({ kind: 'pass' });
    for (const till of [tillA, tillB]) {
      await waitUntil(() => till.service.float.toReport === 0, 60_000, 'everything reported');
      const float = await floatOf(till);
      assert.deepEqual(float.reported, { count: 2, credits: 50 }, JSON.stringify(float));
    }
    assert.equal(await cardAccount(cardA.id), 50);
    assert.equal(await cardAccount(cardB.id), 50);
    const check = await checkLedger(rig.ledger.db);
    assert.deepEqual(check.problems, [], shownCheck(check));

    const paid = await call(tillA, 'POST', '/dischargecard');
    assert.equal(paid.status, 200, shown(paid));
    assert.equal((paid.json as { dischargedCredits: number }).dischargedCredits, 50);
    cardsLeft.push(cardB.id);
    await tillA.takeAway();
    await tillB.takeAway();
  });

  test('when a till dies with unreported float recharges, then its card read at the other till is reported as found, an operator closes its float with the report, and nothing counts twice', async () => {
    // Whatever the first test left: no card on either reader, the ledger reachable from A.
    await tillA.takeAway();
    await tillB.takeAway();
    rig.ledgerProxy.setMode({ kind: 'pass' });
    const card = await rig.cardHolding(0);
    await ledgerDown(tillB, proxyB);
    await tillB.present(card);
    const sales: FloatMovementReport[] = [];
    for (const credits of [25, 15]) {
      const sold = await recharge(tillB, credits);
      assert.equal(sold.status, 200, shown(sold));
      const { movementId, occurredAt } = sold.json as { movementId: string; occurredAt: string };
      sales.push({ id: movementId, cardId: card.id, credits, card: 'written', occurredAt });
    }
    const floatB = await floatOf(tillB);
    assert.equal(tillB.service.float.toReport, 2);
    // Till B dies, its ledger link still down: neither recharge reached the ledger.
    await tillB.takeAway();
    const closeB = tillB.service.close;
    await closeB();
    // Dead: the rig's close must not stop it again.
    tillB.service.close = async () => {};
    assert.deepEqual((await floatOf(tillB)).reported, floatB.reported);

    // The card at till A shows B's newest recharge (15 credits): reported as found, once.
    await tillA.present(card);
    const read = await call(tillA, 'GET', '/readcard');
    assert.equal(read.status, 200, shown(read));
    await waitUntil(async () => (await floatOf(tillB)).found.count === 1, 30_000, 'found');
    const found = await floatOf(tillB);
    assert.deepEqual(found.found, { count: 1, credits: 15 }, JSON.stringify(found));
    assert.equal(found.unaccountedIds > 0, true, JSON.stringify(found));
    assert.equal(await cardAccount(card.id), 15);

    // The operator closes B's float with the final report of B's journal (its data folder
    // survived): both recharges, the found one again, which changes nothing.
    const closing = await new Floats(rig.ledger.db).closeByOperator(customerId, floatB.id, {
      movements: sales,
      writeOff: 0,
      reason: null,
    });
    assert.equal(closing.float.state, 'closed', JSON.stringify(closing));
    assert.equal(closing.float.closedBy, 'operator');
    assert.deepEqual(closing.float.found, { count: 1, credits: 15 }, JSON.stringify(closing));
    assert.equal(closing.float.reported.credits - floatB.reported.credits, 25);
    assert.equal(await cardAccount(card.id), 40, 'each recharge counted once');
    const check = await checkLedger(rig.ledger.db);
    assert.deepEqual(check.problems, [], shownCheck(check));

    const paid = await call(tillA, 'POST', '/dischargecard');
    assert.equal(paid.status, 200, shown(paid));
    assert.equal((paid.json as { dischargedCredits: number }).dischargedCredits, 40);
    await waitUntil(() => tillA.service.unconfirmedMovements === 0, 30_000, 'payout posted');
    // The pool, A's float and what the cards still hold at the ledger add up to the start.
    const pool = await shopCredits(rig.ledger.url);
    const held = (await cardAccount(card.id)) + (await cardAccount(cardsLeft[0] as string));
    const floatA = await floatOf(tillA);
    assert.equal(pool + floatA.credits + held, poolAtStart, JSON.stringify({ pool, floatA }));
  });
});
