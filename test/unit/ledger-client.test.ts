/**
 * The worker's ledger client over real HTTP against a scripted ledger: what each call sends,
 * which answers are retried, how refusals map to the spec's errors, and whether a failed call
 * may nonetheless have been carried out (mayHaveLanded), which decides whether a refused
 * create can still land.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import axios, { type InternalAxiosRequestConfig } from 'axios';
import {
  LedgerClient,
  LedgerRefusal,
  mayHaveLanded,
  type LedgerClientOptions,
  type LedgerReachability,
} from '../../service/cloud/ledger-client.ts';
import type { AppError } from '../../service/errors.ts';

const KEY = 'ledger-client-test-key-01';

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
  accept: string | undefined;
  ifNoneMatch: string | undefined;
  body: unknown;
}

/** One scripted answer: a status and body (and headers), or no answer at all ('hang'). */
type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang';

/** A ledger that answers each request with the next scripted answer (then 200 {}). */
async function scriptedLedger() {
  const seen: Seen[] = [];
  const script: Answer[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        apiKey: req.headers['x-api-key'] as string | undefined,
        accept: req.headers.accept,
        ifNoneMatch: req.headers['if-none-match'],
        body: text === '' ? undefined : JSON.parse(text),
      });
      const answer = script.shift() ?? { status: 200, body: {} };
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    script,
    client: (options: Partial<LedgerClientOptions> = {}) =>
      new LedgerClient({ baseUrl: url, timeoutMs: 2_000, retries: 2, backoffMs: 1, ...options }),
    close: async () => {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let ledger: Awaited<ReturnType<typeof scriptedLedger>>;
before(async () => {
  ledger = await scriptedLedger();
});
after(() => ledger.close());

/** Runs `call` against a fresh script; returns what it threw and the requests it made. */
async function failing(
  answers: Answer[],
  call: (client: LedgerClient) => Promise<unknown>,
  options = {},
) {
  ledger.seen.length = 0;
  ledger.script.splice(0, ledger.script.length, ...answers);
  const error = await call(ledger.client(options)).then(
    (value) => assert.fail(`expected a failure, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
  return { error: error as Error, attempts: ledger.seen.length };
}

const movement = { id: 'm-1', kind: 'recharge' as const, cardId: '04A1B2C3', credits: 5 };

describe('LedgerClient: what each call sends', () => {
  test('when each call is made, then it goes to its path with the API key, JSON accepted, and its body', async () => {
    ledger.seen.length = 0;
    ledger.script.length = 0;
    ledger.script.push(
      { status: 200, body: { customerId: 'c' } },
      { status: 201, body: { id: 'm-1' } },
      { status: 200, body: { id: 'a/b', state: 'posted' } },
      { status: 200, body: { id: 'a/b', state: 'voided' } },
      { status: 200, body: { cardId: '04A1B2C3' } },
      { status: 200, body: { movements: [{ id: 'p' }] } },
      { status: 200, body: { id: 'a/b' } },
    );
    // A base URL with trailing slashes is the same ledger.
    const client = new LedgerClient({ baseUrl: `${ledger.url}//` });
    const by = { tillId: 't-1', evidence: 'card read' };
    assert.deepEqual(await client.getCustomer(KEY), { customerId: 'c' });
    assert.deepEqual(await client.createMovement(KEY, movement), { id: 'm-1' });
    assert.deepEqual(await client.postMovement(KEY, 'a/b', by), { id: 'a/b', state: 'posted' });
    assert.deepEqual(await client.voidMovement(KEY, 'a/b'), { id: 'a/b', state: 'voided' });
    assert.deepEqual(await client.getCardAccount(KEY, '04 A1'), { cardId: '04A1B2C3' });
    assert.deepEqual(await client.listPendingMovements(KEY), [{ id: 'p' }]);
    assert.deepEqual(await client.getMovement(KEY, 'a/b'), { id: 'a/b' });
    assert.deepEqual(
      ledger.seen.map(({ method, url, body }) => ({ method, url, body })),
      [
        { method: 'GET', url: '/v1/customer', body: undefined },
        { method: 'POST', url: '/v1/movements', body: movement },
        { method: 'POST', url: '/v1/movements/a%2Fb/post', body: by },
        { method: 'POST', url: '/v1/movements/a%2Fb/void', body: undefined },
        { method: 'GET', url: '/v1/cards/04%20A1', body: undefined },
        { method: 'GET', url: '/v1/movements?state=pending&limit=1000', body: undefined },
        { method: 'GET', url: '/v1/movements/a%2Fb', body: undefined },
      ],
    );
    for (const request of ledger.seen) {
      assert.equal(request.apiKey, KEY);
      assert.equal(request.accept, 'application/json');
    }
  });

  test("when the card list is polled with the seq held, then it is sent as If-None-Match and a 304 answers null, not 'not a ledger'", async () => {
    ledger.seen.length = 0;
    ledger.script.length = 0;
    const list = { seq: 7, changedAt: null, blocked: [], waiting: [] };
    ledger.script.push({ status: 200, body: list }, { status: 304 });
    const client = ledger.client({ retries: 0 });
    assert.deepEqual(await client.getCardList(KEY), list);
    assert.equal(await client.getCardList(KEY, 7), null);
    assert.deepEqual(
      ledger.seen.map(({ url, ifNoneMatch }) => ({ url, ifNoneMatch })),
      [
        { url: '/v1/card-list', ifNoneMatch: undefined },
        { url: '/v1/card-list', ifNoneMatch: '"7"' },
      ],
    );
    assert.equal(client.reachability.reachable, true);
  });

  test('when a proxy is set in the environment, then the ledger is still called directly', async () => {
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = 'http://127.0.0.1:9';
    try {
      ledger.script.length = 0;
      assert.deepEqual(await ledger.client().getCustomer(KEY), {});
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });
});

describe('LedgerClient: refusals', () => {
  test('when the ledger refuses with its error code and detail, then LedgerRefusal after one attempt, certainly not carried out', async () => {
    const { error, attempts } = await failing(
      [{ status: 422, body: { error: 'NoCredits', detail: 'pool has 3' } }],
      (client) => client.createMovement(KEY, movement),
    );
    assert.ok(error instanceof LedgerRefusal);
    assert.equal(error.status, 422);
    assert.equal(error.code, 'NoCredits');
    assert.equal(error.detail, 'pool has 3');
    assert.equal(error.name, 'LedgerRefusal');
    assert.equal(error.message, 'ledger refused: 422 NoCredits (pool has 3)');
    assert.equal(attempts, 1);
    assert.equal(mayHaveLanded(error), false);
  });

  test('when a 4xx has no error code (not the ledger answering), then LedgerUnavailable naming the URL, after one attempt, certainly not carried out', async () => {
    const { error, attempts } = await failing([{ status: 404, body: { detail: 7 } }], (client) =>
      client.getMovement(KEY, 'm'),
    );
    assert.equal((error as AppError).code, 'LedgerUnavailable', String(error));
    assert.match((error as AppError).detail ?? '', /is not a card wallet ledger/);
    assert.equal(attempts, 1);
    assert.equal(mayHaveLanded(error), false);
  });

  test("when the ledger refuses the key, then the spec's authentication errors", async () => {
    const cases: [Answer, string][] = [
      [
        { status: 401, body: { error: 'Unauthorized: missing api key' } },
        'Unauthorized: missing api key',
      ],
      [{ status: 401, body: { error: 'Revoked' } }, 'Unauthorized: invalid api key'],
      [{ status: 403, body: { error: 'KeyNotAssigned' } }, 'Missing customerId from auth flow'],
    ];
    for (const [answer, code] of cases) {
      const { error, attempts } = await failing([answer], (client) => client.getCustomer(KEY));
      assert.equal((error as AppError).code, code);
      assert.equal(attempts, 1);
      assert.equal(mayHaveLanded(error), false);
    }
    const { error } = await failing([{ status: 403, body: { error: 'Forbidden' } }], (client) =>
      client.getCustomer(KEY),
    );
    assert.ok(error instanceof LedgerRefusal);
    assert.equal(error.code, 'Forbidden');
  });

  test('when the URL redirects, then it is not followed: LedgerUnavailable naming the URL, after one attempt', async () => {
    const { error, attempts } = await failing(
      [{ status: 302, headers: { Location: '/v1/customer' } }],
      (client) => client.getCustomer(KEY),
    );
    assert.equal((error as AppError).code, 'LedgerUnavailable', String(error));
    assert.match((error as AppError).detail ?? '', /answered GET \/v1\/customer with 302/);
    assert.equal(attempts, 1);
  });
});

describe('LedgerClient: retries', () => {
  test('when the ledger answers 5xx and then succeeds, then the call succeeds on a retry', async () => {
    ledger.seen.length = 0;
    ledger.script.splice(
      0,
      ledger.script.length,
      { status: 503 },
      { status: 201, body: { id: 'm-1' } },
    );
    assert.deepEqual(await ledger.client().createMovement(KEY, movement), { id: 'm-1' });
    assert.equal(ledger.seen.length, 2);
  });

  test('when every attempt is a 5xx, then LedgerUnavailable after 1 + retries attempts, possibly carried out', async () => {
    for (const retries of [0, 2]) {
      const { error, attempts } = await failing(
        [{ status: 500 }, { status: 502 }, { status: 503 }],
        (client) => client.createMovement(KEY, movement),
        { retries },
      );
      assert.equal((error as AppError).code, 'LedgerUnavailable');
      assert.equal(attempts, retries + 1);
      assert.equal(mayHaveLanded(error), true);
    }
  });

  test('when every attempt is a 429, then LedgerUnavailable, certainly not carried out; once a 5xx came, possibly', async () => {
    const refused = await failing([{ status: 429 }, { status: 429 }, { status: 429 }], (client) =>
      client.createMovement(KEY, movement),
    );
    assert.equal((refused.error as AppError).code, 'LedgerUnavailable');
    assert.equal(refused.attempts, 3);
    assert.equal(mayHaveLanded(refused.error), false);
    for (const answers of [
      [{ status: 503 }, { status: 429 }, { status: 429 }],
      [{ status: 429 }, { status: 429 }, { status: 503 }],
    ]) {
      const { error } = await failing(answers, (client) => client.createMovement(KEY, movement));
      assert.equal(mayHaveLanded(error), true, JSON.stringify(answers));
    }
  });

  test('when an attempt went unanswered and a later one is refused, then the refusal is the answer but the call may have been carried out', async () => {
    const { error, attempts } = await failing(
      [{ status: 500 }, { status: 422, body: { error: 'NoCredits' } }],
      (client) => client.createMovement(KEY, movement),
    );
    assert.ok(error instanceof LedgerRefusal);
    assert.equal(attempts, 2);
    assert.equal(mayHaveLanded(error), true);
  });

  test('when an attempt times out, then it is retried, and giving up says it may have been carried out', async () => {
    // Attempts are counted where the client sends them: on a busy machine an attempt can time
    // out before the scripted ledger has read it, so the ledger may see fewer.
    const http = axios.getAdapter('http');
    let sent = 0;
    const { error, attempts } = await failing(
      ['hang', 'hang'],
      (client) => client.createMovement(KEY, movement),
      {
        timeoutMs: 50,
        retries: 1,
        adapter: (config: InternalAxiosRequestConfig) => ((sent += 1), http(config)),
      },
    );
    assert.equal((error as AppError).code, 'LedgerUnavailable');
    assert.equal(sent, 2, `attempts sent (the ledger saw ${attempts})`);
    assert.ok(attempts <= 2, `the ledger saw ${attempts} attempts`);
    assert.equal(mayHaveLanded(error), true);
  });

  test('when the ledger cannot be connected to, then LedgerUnavailable after every attempt, possibly carried out', async () => {
    const closed = await scriptedLedger();
    await closed.close();
    const client = new LedgerClient({ baseUrl: closed.url, retries: 1, backoffMs: 1 });
    const error = await client.getCustomer(KEY).catch((failure: unknown) => failure);
    assert.equal((error as AppError).code, 'LedgerUnavailable');
    assert.equal(mayHaveLanded(error), true);
  });

  test('when a 429 asks to retry after a while within the limit (seconds or a date), then it is retried; beyond the limit, the client gives up at once', async () => {
    const past = new Date(Date.now() - 60_000).toUTCString();
    for (const retryAfter of ['0', past, 'soon']) {
      ledger.seen.length = 0;
      ledger.script.splice(
        0,
        ledger.script.length,
        { status: 429, headers: { 'Retry-After': retryAfter } },
        { status: 200, body: { ok: retryAfter } },
      );
      assert.deepEqual(await ledger.client().getCustomer(KEY), { ok: retryAfter });
      assert.equal(ledger.seen.length, 2, `Retry-After: ${retryAfter}`);
    }
    const future = new Date(Date.now() + 3_600_000).toUTCString();
    for (const retryAfter of ['6', future]) {
      const { error, attempts } = await failing(
        [{ status: 429, headers: { 'Retry-After': retryAfter } }],
        (client) => client.getCustomer(KEY),
        { maxRetryAfterMs: 5_000 },
      );
      assert.equal((error as AppError).code, 'LedgerUnavailable');
      assert.equal(attempts, 1, `Retry-After: ${retryAfter}`);
      assert.equal(mayHaveLanded(error), false);
    }
  });

  test('when no options are given, then two retries after the first attempt', async () => {
    const { attempts } = await failing(
      [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }],
      () => new LedgerClient({ baseUrl: ledger.url, backoffMs: 1 }).getCustomer(KEY),
    );
    assert.equal(attempts, 3);
  });
});

describe('mayHaveLanded', () => {
  test("when the failure is not one of the client's own answered ones, then it may have landed", () => {
    assert.equal(mayHaveLanded(new Error('socket hang up')), true);
    assert.equal(mayHaveLanded(new LedgerRefusal(422, 'NoCredits')), true);
    assert.equal(mayHaveLanded(undefined), true);
    assert.equal(mayHaveLanded(null), true);
    assert.equal(mayHaveLanded('NoCredits'), true);
  });
});

describe('LedgerClient: reachability', () => {
  test('when the ledger answers, then reachable; when it does not, unreachable; each change told once', async () => {
    const client = ledger.client({ retries: 0 });
    assert.deepEqual(client.reachability, { reachable: null, at: null });
    const told: LedgerReachability[] = [];
    client.on('reachability', (reachability) => told.push({ ...reachability }));
    ledger.script.splice(
      0,
      ledger.script.length,
      { status: 200, body: {} },
      { status: 200, body: {} },
    );
    await client.getCustomer(KEY);
    await client.getCustomer(KEY);
    const reached: LedgerReachability = client.reachability;
    assert.equal(reached.reachable, true);
    assert.ok(reached.at instanceof Date);
    // A refusal is an answer: still reachable.
    ledger.script.splice(0, ledger.script.length, { status: 404, body: { error: 'NotFound' } });
    await client.getMovement(KEY, 'm').catch(() => undefined);
    ledger.script.splice(0, ledger.script.length, { status: 503 });
    await client.getCustomer(KEY).catch(() => undefined);
    assert.equal(client.reachability.reachable, false);
    assert.deepEqual(
      told.map((reachability) => reachability.reachable),
      [true, false],
    );
  });
});
