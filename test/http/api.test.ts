import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CustomerDirectory } from '../../service/cloud/customer-directory.ts';
import { LedgerClient } from '../../service/cloud/ledger-client.ts';
import type { ConfigInput } from '../../service/config.ts';
import { AppError } from '../../service/errors.ts';
import { HttpActivity } from '../../service/http/activity.ts';
import { CardEventStream } from '../../service/http/card-events.ts';
import { keyFingerprint } from '../../service/http/api-key.ts';
import { createApp } from '../../service/http/create-app.ts';
import { listen, type RunningServer } from '../../common/listen.ts';
import { silentLogger, type Logger } from '../../service/logger.ts';
import type { CardAccess } from '../../service/wallet/card-access.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementEngine } from '../../service/wallet/movement-engine.ts';
import { CardPersonalizer } from '../../service/wallet/personalize-card.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpRequest, shown } from '../support/http-client.ts';
import { memoryLogger } from '../support/memory-logger.ts';
import { openEventStream } from '../support/sse-client.ts';
import { startTestLedger, type TestLedger } from '../support/test-ledger.ts';
import { startTestService, TEST_API_KEY, type TestService } from '../support/test-service.ts';

const ALLOWED = 'https://pos.example.com';

let ledger: TestLedger;
before(async () => (ledger = await startTestLedger()));
after(() => ledger.close());

const startService = (overrides: Partial<ConfigInput> = {}) =>
  startTestService({ cloudUrl: ledger.url, ...overrides });

/** The app alone over real HTTP, with the given card access, for failures hard to cause. */
async function startAppWith(cards: CardAccess, log: Logger = silentLogger): Promise<RunningServer> {
  const client = new LedgerClient({ baseUrl: ledger.url });
  const journal = new MovementJournal(mkdtempSync(join(tmpdir(), 'cww-app-')));
  await journal.open();
  const listening: { server?: RunningServer } = {};
  const movements = new MovementEngine({
    journal,
    ledger: client,
    keys: new KeyRing(() => TEST_API_KEY, keyFingerprint),
    tillId: randomUUID(),
    log: silentLogger,
  });
  const app = createApp({
    settings: () => ({ apiKey: TEST_API_KEY, allowedOrigins: [] }),
    port: () => listening.server?.port ?? 0,
    cards,
    ledger: client,
    customers: new CustomerDirectory(client),
    events: new CardEventStream({
      status: { pcsc: 'stopped', readers: [], reader: null, card: null, problem: null },
      on: () => undefined,
    }),
    movements,
    personalizer: new CardPersonalizer({
      journal,
      movements,
      perCardKeys: false,
      autoPersonalize: false,
      log: silentLogger,
    }),
    refuseCardsAboveAccount: false,
    activity: new HttpActivity(),
    log,
  });
  const server = await listen(app, 0);
  listening.server = server;
  return {
    ...server,
    async close() {
      await server.close();
      await journal.close();
    },
  };
}

describe('GET /ping', () => {
  let service: TestService;
  before(async () => (service = await startService()));
  after(() => service.close());

  test('when pinged without a key, then it answers the JSON string "pong"', async () => {
    const res = await httpRequest(`${service.url}/ping`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.text, '"pong"');
  });

  test('when pinged 30 times at once, then none is rate limited', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => httpRequest(`${service.url}/ping`)),
    );
    assert.deepEqual(new Set(answers.map((res) => res.status)), new Set([200]));
  });

  test('when the Host is localhost with our port, then it is served', async () => {
    const res = await httpRequest(`${service.url}/ping`, {
      headers: { Host: `localhost:${service.port}` },
    });
    assert.equal(res.status, 200);
  });
});

describe('authentication', () => {
  let service: TestService;
  before(async () => (service = await startService()));
  after(() => service.close());

  test('when X-Api-Key is missing, then 401 with the exact JSON text', async () => {
    const res = await httpRequest(`${service.url}/readcard`);
    assert.equal(res.status, 401);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json, { error: 'Unauthorized: missing api key' });
  });

  test('when the key is wrong, then 401 invalid api key', async () => {
    const res = await httpRequest(`${service.url}/readcard`, {
      headers: { 'X-Api-Key': `${TEST_API_KEY}x` },
    });
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, { error: 'Unauthorized: invalid api key' });
  });

  test('when the caller prefers text/plain, then the 401 is plain text with the same words', async () => {
    const res = await httpRequest(`${service.url}/readcard`, {
      headers: { Accept: 'text/plain' },
    });
    assert.equal(res.status, 401);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    assert.equal(res.text, 'Unauthorized: missing api key');
  });

  test('when the key is in the query string, then it is ignored (401 missing)', async () => {
    const res = await httpRequest(`${service.url}/readcard?api_key=${TEST_API_KEY}`);
    assert.deepEqual(res.json, { error: 'Unauthorized: missing api key' });
  });

  test('when the key is in a cookie, then it is ignored (401 missing)', async () => {
    const res = await httpRequest(`${service.url}/readcard`, {
      headers: { Cookie: `X-Api-Key=${TEST_API_KEY}; apiKey=${TEST_API_KEY}` },
    });
    assert.deepEqual(res.json, { error: 'Unauthorized: missing api key' });
  });

  test('when the key is right but no reader is connected, then 500 NoReader', async () => {
    const res = await httpRequest(`${service.url}/readcard`, {
      headers: { 'X-Api-Key': TEST_API_KEY },
    });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { error: 'NoReader' });
  });
});

describe('rate limits', () => {
  let service: TestService;
  before(async () => (service = await startService()));
  after(() => service.close());

  test('when /readcard is called 6 times in 10 s, then the 6th is 429 with retry headers', async () => {
    const hits: string[] = [];
    service.activity.on('rate-limited', (hit) => hits.push(`${hit.endpoint} ${hit.scope}`));
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i += 1) {
      last = await httpRequest(`${service.url}/readcard`, {
        // A spoofed forwarding header must not make a new client.
        headers: { 'X-Api-Key': TEST_API_KEY, 'X-Forwarded-For': `10.0.0.${i}` },
      });
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [500, 500, 500, 500, 500, 429]);
    assert.ok(last);
    assert.deepEqual(last.json, { error: 'TooManyRequests' });
    const retryAfter = Number(last.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`);
    assert.match(String(last.headers['ratelimit-policy']), /"readcard"; q=5; w=10/);
    assert.match(String(last.headers.ratelimit), /"readcard"; r=0; t=\d+/);
    assert.deepEqual(hits, ['/readcard key']);
  });

  test('when a request is within the limit, then it carries the RateLimit headers', async () => {
    const other = await startService();
    try {
      const res = await httpRequest(`${other.url}/readcard`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      assert.match(String(res.headers.ratelimit), /"readcard"; r=4; t=\d+/);
    } finally {
      await other.close();
    }
  });

  test('when keys are guessed 10 times, then the 11th guess waits (429) for the window', async () => {
    const other = await startService();
    try {
      for (let i = 0; i < 10; i += 1) {
        const res = await httpRequest(`${other.url}/readcard`, {
          headers: { 'X-Api-Key': `guess-${i}-0123456789abcdef` },
        });
        assert.equal(res.status, 401, shown(res));
      }
      const res = await httpRequest(`${other.url}/readcard`, {
        headers: { 'X-Api-Key': 'guess-10-0123456789abcdef' },
      });
      assert.equal(res.status, 429, shown(res));
      assert.deepEqual(res.json, { error: 'TooManyRequests' });
      assert.ok(Number(res.headers['retry-after']) > 0);
    } finally {
      await other.close();
    }
  });

  // A hostile page's <img src="http://127.0.0.1:4178/info"> sends no Origin and no key; any
  // local program can send wrong keys. Neither may lock the till's POS out.
  for (const [failure, headers] of [
    ['without a key', {}],
    ['with a wrong key', { 'X-Api-Key': 'not-the-key-0123456789' }],
  ] as const) {
    test(`when 30 requests ${failure} come from this PC, then the valid key is still answered`, async () => {
      const other = await startService();
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 30; i += 1) {
          statuses.push((await httpRequest(`${other.url}/info`, { headers })).status);
        }
        assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
        assert.deepEqual(statuses.slice(10), Array(20).fill(429));
        const res = await httpRequest(`${other.url}/info`, {
          headers: { 'X-Api-Key': TEST_API_KEY },
        });
        assert.equal(res.status, 200, shown(res));
      } finally {
        await other.close();
      }
    });
  }
});

describe('Host and Origin checks', () => {
  let service: TestService;
  const log = memoryLogger();
  before(
    async () =>
      (service = await startTestService(
        { cloudUrl: ledger.url, allowedOrigins: [ALLOWED, 'http://127.0.0.1:8080'] },
        { log },
      )),
  );
  after(() => service.close());
  const warnings = (about: string) =>
    log.lines.filter((line) => line.startsWith('warn ') && line.includes(about));

  for (const host of ['evil.example', '127.0.0.1.nip.io', 'localhost.evil', '127.0.0.1:1']) {
    test(`when the Host is ${host}, then 403 ForbiddenHost saying what to call, logged once`, async () => {
      for (let i = 0; i < 3; i += 1) {
        const res = await httpRequest(`${service.url}/ping`, { headers: { Host: host } });
        assert.equal(res.status, 403, shown(res));
        assert.deepEqual(res.json, {
          error: 'ForbiddenHost',
          detail: `Host ${host} is not this service: call ${service.url}`,
        });
      }
      assert.equal(warnings(`refused Host ${host}:`).length, 1, log.lines.join('\n'));
      assert.match(warnings(`refused Host ${host}:`)[0] ?? '', new RegExp(`call ${service.url}$`));
    });
  }

  test('when there is no Host header, then 403 ForbiddenHost', async () => {
    const res = await httpRequest(`${service.url}/ping`, { omitHost: true });
    assert.equal(res.status, 403);
    assert.equal((res.json as { error: string }).error, 'ForbiddenHost', shown(res));
  });

  test('when the Origin is allowed, then it is echoed with Vary: Origin', async () => {
    const res = await httpRequest(`${service.url}/ping`, { headers: { Origin: ALLOWED } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    assert.match(String(res.headers.vary), /Origin/);
  });

  for (const origin of [
    'null',
    'https://pos.example.com.evil.example',
    'http://pos.example.com',
    'https://pos.example.com:8443',
    'https://evil.example',
  ]) {
    test(`when the Origin is ${origin}, then 403 and no CORS headers`, async () => {
      const res = await httpRequest(`${service.url}/readcard`, {
        headers: { Origin: origin, 'X-Api-Key': TEST_API_KEY },
      });
      assert.equal(res.status, 403);
      assert.equal((res.json as { error: string }).error, 'ForbiddenOrigin', shown(res));
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    });
  }

  test('when a page at localhost calls a till that allows it at 127.0.0.1, then the refusal is logged once, saying to open the page at 127.0.0.1', async () => {
    const origin = 'http://localhost:8080';
    for (let i = 0; i < 3; i += 1) {
      const res = await httpRequest(`${service.url}/readcard`, {
        headers: { Origin: origin, 'X-Api-Key': TEST_API_KEY },
      });
      assert.equal(res.status, 403, shown(res));
      assert.match(
        String((res.json as { detail?: string }).detail),
        /not on this till's allowlist/,
      );
    }
    const logged = warnings(`refused Origin ${origin} `);
    assert.equal(logged.length, 1, log.lines.join('\n'));
    assert.match(
      logged[0] ?? '',
      /The allowlist has http:\/\/127\.0\.0\.1:8080: open the page there, or add http:\/\/localhost:8080 too\./,
    );
    const other = warnings('refused Origin https://evil.example ');
    assert.equal(other.length, 1, log.lines.join('\n'));
    assert.match(
      other[0] ?? '',
      /add https:\/\/evil\.example in the tray app or with --allowed-origins/,
    );
  });

  test('when an allowed origin preflights, then 204 with methods, headers and private network', async () => {
    const res = await httpRequest(`${service.url}/writecard`, {
      method: 'OPTIONS',
      headers: {
        Origin: ALLOWED,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-api-key, content-type',
        'Access-Control-Request-Private-Network': 'true',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    assert.match(String(res.headers['access-control-allow-methods']), /POST/);
    assert.match(String(res.headers['access-control-allow-headers']), /X-Api-Key/);
    assert.equal(res.headers['access-control-allow-private-network'], 'true');
  });

  test('when another origin preflights, then 403 without allow headers', async () => {
    const res = await httpRequest(`${service.url}/readcard`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://evil.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Private-Network': 'true',
      },
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-private-network'], undefined);
  });
});

describe('errors', () => {
  let server: RunningServer;
  const log = memoryLogger();
  const failingCards: CardAccess = {
    withCard: () => Promise.reject(new Error('boom at /home/shop/secret.ts with key abc')),
  };
  before(async () => (server = await startAppWith(failingCards, log)));
  after(() => server.close());

  test('when a use case fails unexpectedly, then 500 UnexpectedError without stack, path or key', async () => {
    const res = await httpRequest(`${server.url}/readcard`, {
      headers: { 'X-Api-Key': TEST_API_KEY },
    });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { error: 'UnexpectedError' });
    assert.doesNotMatch(res.text, /secret|home|at |abc|test-key/);
  });

  test('when a use case fails unexpectedly, then the log has one error line, and its stack only at debug', () => {
    const errorLines = log.lines.filter((line) => line.startsWith('error '));
    assert.deepEqual(errorLines, [
      'error GET /readcard -> 500 UnexpectedError: boom at /home/shop/secret.ts with key abc',
    ]);
    const debug = log.lines.filter((line) => line.startsWith('debug '));
    assert.equal(debug.length, 1, log.lines.join('\n'));
    assert.match(
      debug[0] ?? '',
      /^debug GET \/readcard -> 500 UnexpectedError: Error: boom[^\n]*\n\s+at /,
    );
  });

  test('when a request is refused with a 4xx, then it is logged at info in one line with its detail', async () => {
    await httpRequest(`${server.url}/writecard`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: '{"amount": 0.30000000000000004}',
    });
    assert.ok(
      log.lines.includes(
        'info POST /writecard -> 400 Invalid credits or amount value: amount: at most 2 decimals (got 0.30000000000000004)',
      ),
      log.lines.join('\n'),
    );
  });

  test('when a path is unknown, then 404 NotFound in the error shape', async () => {
    const res = await httpRequest(`${server.url}/nothing-here`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, {
      error: 'NotFound',
      detail: 'no such path /nothing-here: the paths are in /openapi.json',
    });
  });

  test('when a path differs from a documented one by case or a trailing slash, then 404 names the documented one', async () => {
    for (const path of ['/readCard', '/writecard/', '/Cards/Personalize']) {
      const res = await httpRequest(`${server.url}${path}`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      assert.equal(res.status, 404, shown(res));
      assert.match(
        String((res.json as { detail?: string }).detail),
        /did you mean \/(readcard|writecard|cards\/personalize)\?/,
        shown(res),
      );
    }
  });

  test('when /readcard is POSTed, then 405 with Allow', async () => {
    const res = await httpRequest(`${server.url}/readcard`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.deepEqual(res.json, {
      error: 'MethodNotAllowed',
      detail: 'POST /readcard: this path answers GET, HEAD',
    });
  });

  test('when a card error is an AppError, then its code and status are answered', async () => {
    const other = await startAppWith({
      withCard: () => Promise.reject(new AppError('CorruptCard', 500)),
    });
    try {
      const res = await httpRequest(`${other.url}/readcard`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      assert.equal(res.status, 500);
      assert.deepEqual(res.json, { error: 'CorruptCard' });
    } finally {
      await other.close();
    }
  });
});

describe('settings applied while running', () => {
  const NEW_KEY = 'a-brand-new-key-0123456789';

  test('when a new API key is applied, then the old key gets 401 on the next request', async () => {
    const service = await startService({ apiKey: TEST_API_KEY });
    try {
      await service.applySettings({ apiKey: NEW_KEY });
      const old = await httpRequest(`${service.url}/readcard`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      assert.deepEqual(old.json, { error: 'Unauthorized: invalid api key' });
      assert.equal(service.settings.apiKey, NEW_KEY);
    } finally {
      await service.close();
    }
  });

  test('when the allowlist changes, then a newly allowed origin is served at once', async () => {
    const service = await startService();
    try {
      const before = await httpRequest(`${service.url}/ping`, { headers: { Origin: ALLOWED } });
      assert.equal(before.status, 403);
      await service.applySettings({ allowedOrigins: [ALLOWED] });
      const after = await httpRequest(`${service.url}/ping`, { headers: { Origin: ALLOWED } });
      assert.equal(after.status, 200);
    } finally {
      await service.close();
    }
  });

  test('when a new port is applied, then the service moves there and the Host check follows', async () => {
    const service = await startService();
    const oldUrl = service.url;
    try {
      const moved = new Promise((resolve) => service.once('listening', resolve));
      await service.applySettings({ port: 0 === service.port ? 1 : 0 });
      await moved;
      assert.notEqual(service.url, oldUrl);
      assert.equal((await httpRequest(`${service.url}/ping`)).text, '"pong"');
      await assert.rejects(httpRequest(`${oldUrl}/ping`), /ECONNREFUSED/);
    } finally {
      await service.close();
    }
  });

  test('when the new port is in use, then PortInUse and the service stays where it was', async () => {
    const service = await startService();
    const other = await startService();
    try {
      await assert.rejects(service.applySettings({ port: other.port }), { code: 'PortInUse' });
      assert.equal((await httpRequest(`${service.url}/ping`)).text, '"pong"');
    } finally {
      await other.close();
      await service.close();
    }
  });

  test('when a setting is invalid, then InvalidSetting names it and nothing changes', async () => {
    const service = await startService({ allowedOrigins: [ALLOWED] });
    try {
      await assert.rejects(
        service.applySettings({ apiKey: 'short', allowedOrigins: ['https://x.example/path'] }),
        (error: Error & { code?: string }) =>
          error.code === 'InvalidSetting' &&
          /apiKey/.test(error.message) &&
          /allowedOrigins/.test(error.message),
      );
      assert.equal(service.settings.apiKey, TEST_API_KEY);
      assert.deepEqual(service.settings.allowedOrigins, [ALLOWED]);
    } finally {
      await service.close();
    }
  });
});

describe('GET /openapi.json', () => {
  test('when asked without a key, then the OpenAPI document of docs/openapi.yaml is served', async () => {
    const service = await startService();
    try {
      const res = await httpRequest(`${service.url}/openapi.json`);
      assert.equal(res.status, 200);
      const document = res.json as { openapi: string; paths: Record<string, unknown> };
      assert.equal(document.openapi, '3.1.0');
      assert.deepEqual(Object.keys(document.paths).sort(), [
        '/cards/holder',
        '/cards/personalize',
        '/cards/settle',
        '/cards/undo',
        '/dischargecard',
        '/events',
        '/info',
        '/movements',
        '/movements/{id}',
        '/openapi.json',
        '/ping',
        '/quote',
        '/readcard',
        '/simulator',
        '/simulator/fault',
        '/simulator/place',
        '/simulator/put-back',
        '/simulator/rate-limits',
        '/simulator/take-away',
        '/writecard',
      ]);
    } finally {
      await service.close();
    }
  });
});

describe('GET /events without a reader', () => {
  test('when a stream opens, then it says the reader is unavailable', async () => {
    const service = await startService();
    try {
      const stream = await openEventStream(`${service.url}/events`, { 'X-Api-Key': TEST_API_KEY });
      const reader = await stream.next((event) => event.event === 'reader');
      assert.deepEqual(reader.data, { state: 'unavailable', reader: null });
      stream.close();
    } finally {
      await service.close();
    }
  });

  test('when the service stops, then open streams end at once and do not hold up the stop', async () => {
    const service = await startService();
    const stream = await openEventStream(`${service.url}/events`, { 'X-Api-Key': TEST_API_KEY });
    const started = Date.now();
    await service.close();
    await stream.ended;
    assert.ok(Date.now() - started < 5_000, `stopping took ${Date.now() - started} ms`);
  });
});

describe('rate limits of the money endpoints', () => {
  const bodies: Record<string, string | undefined> = {
    '/writecard': '{"credits":1}',
    '/dischargecard': undefined,
    '/cards/undo': '{"movementId":"5b3f8e62-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}',
  };
  for (const [path, body] of Object.entries(bodies)) {
    test(`when ${path} is called 11 times in a minute, then the 11th is 429`, async () => {
      const service = await startService();
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 11; i += 1) {
          const res = await httpRequest(`${service.url}${path}`, {
            method: 'POST',
            headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
            body,
          });
          statuses.push(res.status);
        }
        assert.deepEqual(statuses, [...Array(10).fill(500), 429]);
        const last = await httpRequest(`${service.url}${path}`, {
          method: 'POST',
          headers: { 'X-Api-Key': TEST_API_KEY },
        });
        assert.match(
          String(last.headers['ratelimit-policy']),
          new RegExp(`"${path === '/cards/undo' ? 'undo' : path.slice(1)}"; q=10; w=60`),
        );
      } finally {
        await service.close();
      }
    });
  }
});
