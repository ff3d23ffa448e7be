// Bonus tiers and holder labels at the till over real HTTP, on the card simulator and the
// reference ledger (behind a fault proxy): GET /quote says what an amount buys; /writecard by
// amount answers the bonus the ledger gave (bonusCredits) and writes paid + bonus on the card;
// with tiers off every price rule holds as before; a float sale uses the ledger's tiers online
// and the tiers last learnt offline, and the ledger records (and flags) what the card holds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { checkLedger } from '../../cloud/check.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { waitUntil } from '../support/card-rig.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { apiCaller, shown, type HttpResponse } from '../support/http-client.ts';
import { startProxiedShop, type ProxiedShop } from '../support/proxied-shop.ts';
import { TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';

let shop: ProxiedShop;
let ledger: TestLedger;
let proxy: FaultProxy;
let service: TestService;
let customerId: string;

before(async () => {
  shop = await startProxiedShop();
  ({ ledger, proxy, service, customerId } = shop);
});
after(() => shop?.close());

const call = apiCaller(() => service.url, TEST_API_KEY);

async function ledgerMovement(id: string) {
  const res = await fetch(`${ledger.url}/v1/movements/${id}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  return (await res.json()) as {
    state: string;
    credits: number;
    amount: string;
    bonusCredits: number;
    reportFlags?: string[];
    holderLabel?: string;
  };
}

async function placeCard(): Promise<string> {
  const placed = await call('POST', '/simulator/place', { credits: 0 });
  assert.equal(placed.status, 200, shown(placed));
  return (placed.json as { cardId: string }).cardId;
}

/** Sets the shop's tiers at the ledger; the till learns them at its next fresh read (/info). */
async function setTiers(tiers: { minAmount: string; bonusCredits: number }[], learn = true) {
  await setCardRules(ledger.db, customerId, { bonusTiers: tiers });
  if (learn) assert.equal((await call('GET', '/info')).status, 200);
}

function ok(answer: HttpResponse): Record<string, unknown> {
  assert.equal(answer.status, 200, shown(answer));
  return answer.json as Record<string, unknown>;
}

function assertInvalidAmount(answer: HttpResponse, detail: RegExp): void {
  assert.equal(answer.status, 400, shown(answer));
  const body = answer.json as { error: string; detail: string };
  assert.equal(body.error, 'Invalid credits or amount value', shown(answer));
  assert.match(body.detail, detail, shown(answer));
}

describe('bonus tiers at the till', () => {
  test('when the shop has no tiers, then every documented price rule holds and no bonus is said', async () => {
    const cardId = await placeCard();
    const quote = ok(await call('GET', '/quote?amount=12.34'));
    assert.deepEqual(quote, {
      amount: '12.34',
      paidCredits: 24,
      bonusCredits: 0,
      credits: 24,
      rechargeAmount: '12.00',
      creditCost: '0.50',
      offline: false,
    });
    const recharged = ok(await call('POST', '/writecard', { amount: 12.34 }));
    assert.deepEqual(
      { cardId: recharged.cardId, credits: recharged.credits, paid: recharged.rechargeAmount },
      { cardId, credits: 24, paid: 12 },
    );
    assert.equal('bonusCredits' in recharged, false, 'no bonus field without a bonus');
    const movement = await ledgerMovement(String(recharged.movementId));
    assert.deepEqual([movement.credits, movement.amount, movement.bonusCredits], [24, '12.00', 0]);
  });

  test('when the quote is malformed, then it is 400 Invalid credits or amount value with a detail, and nothing is asked', async () => {
    const cases: [string, RegExp][] = [
      ['/quote', /needs amount/],
      ['/quote?amount=abc', /must be a number of euros/],
      ['/quote?amount=20.001', /at most 2 decimals/],
      ['/quote?amount=0', /0\.01 to 10000\.00/],
      ['/quote?amount=10000.01', /0\.01 to 10000\.00/],
      ['/quote?amount=1&amount=2', /once/],
      ['/quote?amout=20', /not a parameter of \/quote.*did you mean amount/],
      ['/quote?amount=0.49', /below one credit/],
    ];
    const asked = proxy.requests.length;
    for (const [path, detail] of cases) assertInvalidAmount(await call('GET', path), detail);
    assert.equal(
      proxy.requests.slice(asked).filter((request) => request.path.includes('bonus-quote')).length,
      0,
    );
  });

  test('when the shop has tiers, then a recharge by amount writes paid + bonus, answers the bonus, and the ledger movement agrees; by credits gets no bonus', async () => {
    await setTiers([
      { minAmount: '20.00', bonusCredits: 2 },
      { minAmount: '50.00', bonusCredits: 8 },
    ]);
    await placeCard();
    const quote = ok(await call('GET', '/quote?amount=20.00'));
    assert.deepEqual(
      [quote.paidCredits, quote.bonusCredits, quote.credits, quote.rechargeAmount],
      [40, 2, 42, '20.00'],
    );
    const recharged = ok(await call('POST', '/writecard', { amount: 20 }));
    assert.deepEqual(
      [recharged.credits, recharged.rechargeAmount, recharged.bonusCredits],
      [42, 20, 2],
    );
    const onCard = ok(await call('GET', '/readcard'));
    assert.equal(onCard.credits, 42);
    const movement = await ledgerMovement(String(recharged.movementId));
    assert.deepEqual([movement.credits, movement.amount, movement.bonusCredits], [42, '20.00', 2]);

    const byCredits = ok(await call('POST', '/writecard', { credits: 40 }));
    assert.deepEqual([byCredits.credits, byCredits.rechargeAmount], [82, 20]);
    assert.equal('bonusCredits' in byCredits, false, JSON.stringify(byCredits));
  });

  test('when the tiers change at the ledger between the quote and the recharge, then the recharge answers (and writes) what the ledger actually gave', async () => {
    await placeCard();
    const quote = ok(await call('GET', '/quote?amount=50.00'));
    assert.equal(quote.bonusCredits, 8);
    // Changed at the ledger; the till's cached shop still says +8.
    await setTiers([{ minAmount: '50.00', bonusCredits: 20 }], false);
    const recharged = ok(await call('POST', '/writecard', { amount: 50 }));
    assert.deepEqual([recharged.credits, recharged.bonusCredits], [120, 20]);
    assert.equal(ok(await call('GET', '/readcard')).credits, 120);
    const movement = await ledgerMovement(String(recharged.movementId));
    assert.deepEqual([movement.credits, movement.bonusCredits], [120, 20]);
  });
});

describe('bonus tiers with a till float', () => {
  test('when the till sells from its float online, then the bonus is the ledger’s word at the time of the sale, and the report carries it', async () => {
    await setFloatSettings(ledger.db, customerId, { size: 300, lowWater: 10, offlineCap: null });
    await setTiers([{ minAmount: '20.00', bonusCredits: 2 }]);
    await waitUntil(() => service.float.state === 'online', 30_000, 'the float is open');
    await placeCard();
    // Changed at the ledger after the till last read the shop: the sale asks the ledger.
    await setTiers([{ minAmount: '20.00', bonusCredits: 3 }], false);
    const recharged = ok(await call('POST', '/writecard', { amount: 20 }));
    assert.match(String(recharged.movementId), /-8000-8000-/, 'sold from the float');
    assert.deepEqual([recharged.credits, recharged.bonusCredits], [43, 3]);
    const id = String(recharged.movementId);
    await waitUntil(
      async () => (await ledgerMovement(id)).state === 'posted',
      30_000,
      'the float sale is reported',
    );
    const movement = await ledgerMovement(id);
    assert.deepEqual(
      [movement.credits, movement.amount, movement.bonusCredits, movement.reportFlags ?? []],
      [43, '20.00', 3, []],
    );
  });

  test('when the tiers change while the till is offline, then its float gives the bonus of the tiers it learnt last, and the ledger records it and flags it', async () => {
    await setTiers([{ minAmount: '20.00', bonusCredits: 5 }]);
    await placeCard();
    proxy.setMode({ kind: 'refuse' });
    assert.equal((await call('GET', '/info')).status, 400);
    await waitUntil(() => !service.float.online, 30_000, 'the till sees the ledger down');
    await setTiers([{ minAmount: '20.00', bonusCredits: 1 }], false);

    const quote = ok(await call('GET', '/quote?amount=20.00'));
    assert.deepEqual([quote.credits, quote.bonusCredits, quote.offline], [45, 5, true]);
    const recharged = ok(await call('POST', '/writecard', { amount: 20 }));
    assert.deepEqual([recharged.credits, recharged.bonusCredits], [45, 5]);
    assert.equal(ok(await call('GET', '/readcard')).credits, 45);

    proxy.setMode({ kind: 'pass' });
    const id = String(recharged.movementId);
    await waitUntil(
      async () => (await ledgerMovement(id)).state === 'posted',
      30_000,
      'the offline sale is reported',
    );
    const movement = await ledgerMovement(id);
    // The card holds it: recorded as sold, the bonus above today's tiers flagged.
    assert.deepEqual(
      [movement.credits, movement.amount, movement.bonusCredits, movement.reportFlags],
      [45, '20.00', 5, ['bonus-above-tiers']],
    );
    assert.deepEqual((await checkLedger(ledger.db)).problems, []);
  });
});

describe('the holder label at the till', () => {
  test('when the POS sets and deletes the label of the card on the reader, then the ledger keeps it, trimmed, and forgets it', async () => {
    const cardId = await placeCard();
    const account = async () =>
      (
        (await (
          await fetch(`${ledger.url}/v1/cards/${cardId}`, {
            headers: { 'X-Api-Key': TEST_API_KEY },
          })
        ).json()) as { holderLabel: string | null }
      ).holderLabel;
    const set = ok(await call('POST', '/cards/holder', { label: '  Ann 0612345678 ' }));
    assert.deepEqual(set, { changed: true, cardId, holderLabel: 'Ann 0612345678' });
    assert.equal(await account(), 'Ann 0612345678');
    const again = ok(await call('POST', '/cards/holder', { label: 'Ann 0612345678' }));
    assert.equal(again.changed, false);
    const deleted = ok(await call('POST', '/cards/holder', { label: null }));
    assert.deepEqual(deleted, { changed: true, cardId, holderLabel: null });
    assert.equal(await account(), null);
  });

  test('when the label is bad, then it is 400 InvalidBody with a detail and the ledger keeps what it had', async () => {
    await placeCard();
    assert.equal(ok(await call('POST', '/cards/holder', { label: 'Bo' })).holderLabel, 'Bo');
    const bodies: [unknown, RegExp][] = [
      [{}, /label: required/],
      [{ label: '   ' }, /1 to 100 characters/],
      [{ label: 'x'.repeat(101) }, /1 to 100 characters/],
      [{ label: 'a\nb' }, /on one line/],
      [{ label: 5 }, /1 to 100 characters/],
      [{ lable: 'Bo' }, /not a field of \/cards\/holder/],
      [[], /the body must be/],
    ];
    for (const [body, detail] of bodies) {
      const answer = await call('POST', '/cards/holder', body);
      assert.equal(answer.status, 400, shown(answer));
      assert.equal((answer.json as { error: string }).error, 'InvalidBody', shown(answer));
      assert.match((answer.json as { detail: string }).detail, detail, shown(answer));
    }
    const same = ok(await call('POST', '/cards/holder', { label: 'Bo' }));
    assert.equal(same.changed, false, 'still labelled Bo');
  });

  test('when the ledger cannot be reached, then setting a label is 500 LedgerUnavailable', async () => {
    await placeCard();
    proxy.setMode({ kind: 'refuse' });
    try {
      const answer = await call('POST', '/cards/holder', { label: 'Cy' });
      assert.equal(answer.status, 500, shown(answer));
      assert.equal((answer.json as { error: string }).error, 'LedgerUnavailable', shown(answer));
    } finally {
      proxy.setMode({ kind: 'pass' });
    }
  });
});
