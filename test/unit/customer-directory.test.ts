/**
 * Resolving the shop behind a key while the ledger is known to be unreachable: what an error
 * would be answered with (the cached shop within stale-if-error, or the shop the till float
 * learnt) is answered at once, not after the ledger client's attempts; the lookup goes on in the
 * background, and a refusal it brings still wins. While the ledger answers, nothing past fresh is
 * answered before the ledger confirms it (a revoked or moved key sells nothing), and a key in use
 * is refreshed ahead so steady traffic does not wait.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CustomerDirectory } from '../../service/cloud/customer-directory.ts';
import {
  type LedgerClient,
  type LedgerCustomer,
  type LedgerReachability,
} from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';

const KEY = 'directory-test-key-0123456789';
const SHOP: LedgerCustomer = {
  customerId: '00000000-0000-4000-8000-0000000000b1',
  name: 'B',
  credits: 300,
  creditCost: '0.50',
};

/** A ledger whose GET /v1/customer calls wait until the test settles them. */
function heldLedger() {
  const pending: { resolve: (c: LedgerCustomer) => void; reject: (e: Error) => void }[] = [];
  const ledger = {
    reachability: { reachable: true, at: null } as LedgerReachability,
    calls: 0,
    getCustomer: () => {
      ledger.calls += 1;
      return new Promise<LedgerCustomer>((resolve, reject) => pending.push({ resolve, reject }));
    },
    /** Settles the oldest call still waiting. */
    answer(with_: LedgerCustomer | Error) {
      const call = pending.shift();
      assert.ok(call, 'no ledger call is waiting');
      if (with_ instanceof Error) call.reject(with_);
      else call.resolve(with_);
    },
    get waiting() {
      return pending.length;
    },
  };
  return ledger;
}

function directory(ledger: ReturnType<typeof heldLedger>, learnt?: LedgerCustomer) {
  let now = 1_000_000;
  const customers = new CustomerDirectory(ledger as unknown as LedgerClient, {
    freshMs: 30_000,
    staleIfErrorMs: 600_000,
    now: () => now,
    ...(learnt ? { learnt: () => learnt } : {}),
  });
  return { customers, later: (ms: number) => (now += ms) };
}

async function cached(ledger: ReturnType<typeof heldLedger>, customers: CustomerDirectory) {
  const first = customers.resolve(KEY);
  ledger.answer(SHOP);
  assert.deepEqual(await first, SHOP);
}

/**
 * A directory whose shop was looked up `ageMs` ago; `learnt`: the shop the till float learnt;
 * `reachable`: what the ledger client knows of the ledger now (unchanged when not given).
 */
async function cachedAgo(
  ageMs: number,
  options: { learnt?: LedgerCustomer; reachable?: boolean | null } = {},
) {
  const ledger = heldLedger();
  const { customers, later } = directory(ledger, options.learnt);
  await cached(ledger, customers);
  later(ageMs);
  const { reachable } = options;
  if (reachable !== undefined) {
    ledger.reachability = { reachable, at: reachable === false ? new Date() : null };
  }
  return { ledger, customers, later };
}

/** One turn of the event loop: what a settled lookup sets in motion has run. */
const aTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('CustomerDirectory while the ledger is known unreachable', () => {
  test('when the cached shop is past fresh but within stale-if-error, then it is answered without waiting for the ledger, which is asked in the background', async () => {
    const { ledger, customers } = await cachedAgo(31_000, { reachable: false });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.equal(ledger.calls, 2, 'one background lookup shared by both, besides the first');
    assert.equal(ledger.waiting, 1);
    // The background lookup answers: the shop is fresh again, no further call.
    ledger.answer({ ...SHOP, credits: 250 });
    await aTurn();
    assert.equal((await customers.resolve(KEY)).credits, 250);
    assert.equal(ledger.calls, 2);
  });

  test('when the background lookup brings a refusal (a revoked key), then the next resolve waits for the ledger and gets the refusal', async () => {
    const { ledger, customers } = await cachedAgo(31_000, { reachable: false });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    ledger.answer(errors.invalidApiKey());
    await aTurn();
    const next = customers.resolve(KEY);
    ledger.answer(errors.invalidApiKey());
    await assert.rejects(next, /invalid api key/);
  });

  test('when nothing recent is cached but the till float learnt the shop, then that is answered at once', async () => {
    const ledger = heldLedger();
    const { customers } = directory(ledger, SHOP);
    ledger.reachability = { reachable: false, at: new Date() };
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.equal(ledger.waiting, 1, 'the lookup goes on');
    ledger.answer(errors.ledgerUnavailable());
  });

  test('when the ledger answers and the till float sells for the key, then a shop past fresh still waits for the ledger, so a revoked or moved key sells nothing', async () => {
    const moved: LedgerCustomer = { ...SHOP, customerId: '00000000-0000-4000-8000-0000000000c2' };
    for (const [refusal, expected] of [
      [errors.invalidApiKey(), /invalid api key/],
      [moved, moved],
    ] as const) {
      const { ledger, customers } = await cachedAgo(31_000, { learnt: SHOP });
      let settled = false;
      const next = customers.resolve(KEY).finally(() => (settled = true));
      await aTurn();
      assert.equal(settled, false, 'it waits for the ledger, not answering the learnt shop');
      ledger.answer(refusal);
      if (expected instanceof RegExp) await assert.rejects(next, expected);
      else assert.deepEqual(await next, expected);
    }
  });

  test('when the ledger answers and the till float sells for the key, and the lookup finds the ledger gone, then the learnt shop is the answer', async () => {
    const { ledger, customers } = await cachedAgo(601_000, { learnt: SHOP });
    const next = customers.resolve(KEY);
    ledger.answer(errors.ledgerUnavailable());
    assert.deepEqual(await next, SHOP);
  });

  test('when the ledger is reachable (or not known yet) and no float sells for the key, then a shop past fresh waits for the ledger, so a refusal wins at once', async () => {
    for (const reachable of [true, null]) {
      const { ledger, customers } = await cachedAgo(31_000, { reachable });
      let settled = false;
      const next = customers.resolve(KEY).finally(() => (settled = true));
      await aTurn();
      assert.equal(settled, false, `reachable ${String(reachable)}: it waits for the ledger`);
      ledger.answer(errors.invalidApiKey());
      await assert.rejects(next, /invalid api key/);
    }
  });

  test('when the ledger is unreachable and nothing was ever cached or learnt, then the lookup is waited for and its error is the answer', async () => {
    const ledger = heldLedger();
    const { customers } = directory(ledger);
    ledger.reachability = { reachable: false, at: new Date() };
    const next = customers.resolve(KEY);
    ledger.answer(errors.ledgerUnavailable());
    await assert.rejects(next, { code: 'LedgerUnavailable' });
  });
});

describe('CustomerDirectory refreshing ahead', () => {
  test('when a key is used with its entry younger than half of fresh, then it is answered from the cache and the ledger is not asked', async () => {
    const { ledger, customers } = await cachedAgo(14_000, { learnt: SHOP });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.equal(ledger.calls, 1);
  });

  test('when a key is used with its entry past half of fresh, then it is answered at once and one background lookup renews it, so a use past fresh does not wait', async () => {
    const { ledger, customers, later } = await cachedAgo(16_000, { learnt: SHOP });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.equal(ledger.calls, 2, 'one background lookup shared by both uses');
    ledger.answer({ ...SHOP, credits: 250 });
    await aTurn();
    later(14_500); // past fresh of the first lookup, not half of it since the renewal
    assert.equal((await customers.resolve(KEY)).credits, 250);
    assert.equal(ledger.calls, 2, 'renewed: fresh again without waiting');
  });

  test('when the background lookup brings a refusal (a revoked key), then the next use waits for the ledger and is refused, the learnt shop no longer counting even offline', async () => {
    const { ledger, customers } = await cachedAgo(16_000, { learnt: SHOP });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    ledger.answer(errors.invalidApiKey());
    await aTurn();
    const next = customers.resolve(KEY);
    ledger.answer(errors.invalidApiKey());
    await assert.rejects(next, /invalid api key/);
    ledger.reachability = { reachable: false, at: new Date() };
    const offline = customers.resolve(KEY);
    ledger.answer(errors.ledgerUnavailable());
    await assert.rejects(offline, { code: 'LedgerUnavailable' });
  });

  test('when the background lookup brings another shop (the key moved), then the next use answers that shop', async () => {
    const { ledger, customers } = await cachedAgo(16_000, { learnt: SHOP });
    await customers.resolve(KEY);
    const moved: LedgerCustomer = { ...SHOP, customerId: '00000000-0000-4000-8000-0000000000c2' };
    ledger.answer(moved);
    await aTurn();
    assert.deepEqual(await customers.resolve(KEY), moved);
  });
});
