import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { httpRequest } from '../support/http-client.ts';
import {
  freshPgliteFolder,
  startLedgerProcess,
  type LedgerProcess,
} from '../support/ledger-process.ts';
import { TEST_API_KEY, TEST_SHOP, UNASSIGNED_KEY, UNKNOWN_KEY } from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

// A real ledger process behind a fault proxy, so the ledger can be made down, slow or failing.
let ledger: LedgerProcess;
let proxy: FaultProxy;
before(async () => {
  ledger = await startLedgerProcess({
    database: await freshPgliteFolder(),
    seed: {
      customers: [{ ...TEST_SHOP, keys: [TEST_API_KEY] }],
      unassignedKeys: [UNASSIGNED_KEY],
    },
  });
  proxy = await startFaultProxy(ledger.url);
});
after(async () => {
  await proxy.close();
  await ledger.stop();
});
beforeEach(() => proxy.setMode({ kind: 'pass' }));

const get = (service: TestService, path: string, key: string) =>
  httpRequest(`${service.url}${path}`, { headers: { 'X-Api-Key': key } });

const customerLookups = () =>
  proxy.requests.filter((request) => request.path === '/v1/customer').length;

describe('GET /info against a real ledger process', () => {
  let service: TestService;
  before(
    async () => (service = await startTestService({ cloudUrl: proxy.url, ledgerTimeoutMs: 300 })),
  );
  after(() => service.close());

  test('when the key belongs to a shop, then its credits and credit cost come back as strings', async () => {
    const res = await get(service, '/info', TEST_API_KEY);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { credits: '1000', creditCost: '0.50' });
  });

  test('when the cloud record changes, then /info shows it at once (no cache)', async () => {
    const reserved = await fetch(`${ledger.url}/v1/movements`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: randomUUID(), kind: 'recharge', cardId: '04A1B2C3', credits: 25 }),
    });
    assert.equal(reserved.status, 201);
    const res = await get(service, '/info', TEST_API_KEY);
    assert.deepEqual(res.json, { credits: '975', creditCost: '0.50' });
  });

  test('when the ledger is down, then 400 CustomerReadError', async () => {
    proxy.setMode({ kind: 'refuse' });
    const res = await get(service, '/info', TEST_API_KEY);
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { error: 'CustomerReadError' });
  });

  test('when the ledger does not answer, then 400 CustomerReadError after the timed-out attempts, without waiting for it', async () => {
    // The ledger holds every request until the test ends: the answer can only come from the
    // worker giving up (no wall-clock bound, which a busy machine would break).
    const held: (() => void)[] = [];
    // The till's heartbeats go to the ledger too: only /info's own calls are counted.
    const customerCalls = () => proxy.requests.filter((seen) => seen.path === '/v1/customer');
    const seen = customerCalls().length;
    proxy.setMode({
      kind: 'intercept',
      before: () => new Promise<boolean>((resolve) => held.push(() => resolve(false))),
    });
    try {
      const res = await get(service, '/info', TEST_API_KEY);
      assert.deepEqual(res.json, { error: 'CustomerReadError' });
      assert.equal(customerCalls().length - seen, 3, 'an attempt and two retries, each given up');
    } finally {
      for (const release of held) release();
    }
  });

  test('when the ledger answers 500, then it is retried, then 400 CustomerReadError', async () => {
    const customerCalls = () => proxy.requests.filter((seen) => seen.path === '/v1/customer');
    const before = customerCalls().length;
    proxy.setMode({ kind: 'error500' });
    const res = await get(service, '/info', TEST_API_KEY);
    assert.deepEqual(res.json, { error: 'CustomerReadError' });
    assert.equal(customerCalls().length - before, 3, 'one call and two retries');
  });

  test('when /info is called 6 times in 10 s, then the 6th is 429', async () => {
    const other = await startTestService({ cloudUrl: proxy.url });
    try {
      const statuses = [];
      for (let i = 0; i < 6; i += 1)
        statuses.push((await get(other, '/info', TEST_API_KEY)).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    } finally {
      await other.close();
    }
  });
});

describe('customer resolution on every authenticated endpoint', () => {
  test('when the key is valid but bound to no shop, then 400 Missing customerId from auth flow', async () => {
    const service = await startTestService({ cloudUrl: proxy.url, apiKey: UNASSIGNED_KEY });
    try {
      for (const path of ['/info', '/readcard']) {
        const res = await get(service, path, UNASSIGNED_KEY);
        assert.equal(res.status, 400, path);
        assert.deepEqual(res.json, { error: 'Missing customerId from auth flow' }, path);
      }
    } finally {
      await service.close();
    }
  });

  test('when the ledger does not know the key, then 401 invalid api key', async () => {
    const service = await startTestService({ cloudUrl: proxy.url, apiKey: UNKNOWN_KEY });
    try {
      for (const path of ['/info', '/readcard']) {
        const res = await get(service, path, UNKNOWN_KEY);
        assert.equal(res.status, 401, path);
        assert.deepEqual(res.json, { error: 'Unauthorized: invalid api key' }, path);
      }
    } finally {
      await service.close();
    }
  });

  test('when calls come in a burst, then the shop is looked up once (cached)', async () => {
    const service = await startTestService({ cloudUrl: proxy.url });
    try {
      const before = customerLookups();
      const answers = await Promise.all(
        [1, 2, 3].map(() => get(service, '/readcard', TEST_API_KEY)),
      );
      assert.deepEqual(
        answers.map((res) => res.json),
        Array(3).fill({ error: 'NoReader' }),
      );
      assert.equal(customerLookups() - before, 1);
    } finally {
      await service.close();
    }
  });

  test('when the ledger goes down after the key was resolved, then card calls go on; a new key is refused', async () => {
    const service = await startTestService({ cloudUrl: proxy.url, ledgerTimeoutMs: 300 });
    try {
      assert.deepEqual((await get(service, '/readcard', TEST_API_KEY)).json, { error: 'NoReader' });
      proxy.setMode({ kind: 'refuse' });
      // Within the fresh time no lookup is made; past it, the stale entry is honoured.
      assert.deepEqual((await get(service, '/readcard', TEST_API_KEY)).json, { error: 'NoReader' });
    } finally {
      await service.close();
    }
    const fresh = await startTestService({ cloudUrl: proxy.url, ledgerTimeoutMs: 300 });
    try {
      const res = await get(fresh, '/readcard', TEST_API_KEY);
      assert.equal(res.status, 500);
      const answer = res.json as { error: string; detail: string };
      assert.equal(answer.error, 'LedgerUnavailable', res.text);
      assert.match(
        answer.detail,
        new RegExp(`^the ledger at ${proxy.url} did not answer`),
        res.text,
      );
    } finally {
      await fresh.close();
    }
  });
});
