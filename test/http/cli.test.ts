import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listen } from '../../common/listen.ts';
import { waitUntil } from '../support/card-rig.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { serveFolder, type StaticServer } from '../support/static-server.ts';
import {
  startTestLedger,
  TEST_API_KEY,
  UNASSIGNED_KEY,
  UNKNOWN_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { runWorker, startWorkerProcess } from '../support/worker-process.ts';

const KEY = TEST_API_KEY;
// Points libpcsclite and our probe at a socket that does not exist: no pcscd, no busy-wait.
const NO_PCSCD = { PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' };

describe('card-wallet-worker (headless host)', () => {
  let dir: string;
  let ledger: TestLedger;
  let cloud: string[];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cww-cli-'));
    ledger = await startTestLedger();
    cloud = ['--cloud-url', ledger.url];
  });
  after(async () => {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('when started, then it prints exactly one listening line on stdout and serves /ping', async () => {
    const worker = await startWorkerProcess(
      ['--port', '0', '--api-key', KEY, '--data-dir', join(dir, 'a'), ...cloud],
      NO_PCSCD,
    );
    try {
      const res = await httpRequest(`${worker.url}/ping`);
      assert.equal(res.text, '"pong"');
      const reader = await httpRequest(`${worker.url}/readcard`, { headers: { 'X-Api-Key': KEY } });
      assert.deepEqual(reader.json, { error: 'NoReader' });
    } finally {
      assert.equal(await worker.stop('SIGTERM'), 0);
    }
  });

  test('when sent SIGINT, then it stops gracefully with exit code 0', async () => {
    const worker = await startWorkerProcess(
      ['--port', '0', '--api-key', KEY, '--data-dir', join(dir, 'b'), ...cloud],
      NO_PCSCD,
    );
    assert.equal(await worker.stop('SIGINT'), 0);
  });

  test('when the key comes from CARD_WALLET_API_KEY, then that key is accepted', async () => {
    const worker = await startWorkerProcess(
      ['--port', '0', '--data-dir', join(dir, 'c'), ...cloud],
      {
        ...NO_PCSCD,
        CARD_WALLET_API_KEY: KEY,
      },
    );
    try {
      const res = await httpRequest(`${worker.url}/readcard`, { headers: { 'X-Api-Key': KEY } });
      assert.equal(res.status, 500); // past authentication: NoReader
    } finally {
      await worker.stop();
    }
  });

  test('when no key and no ledger are configured, then a key is generated, kept 0600, and the embedded ledger knows it', async () => {
    const dataDir = join(dir, 'd');
    const first = await startWorkerProcess(
      ['--port', '0', '--data-dir', dataDir],
      NO_PCSCD,
      90_000,
    );
    await first.stop();
    const keyFile = join(dataDir, 'api-key');
    const key = readFileSync(keyFile, 'utf8').trim();
    assert.match(key, /^cww_[A-Za-z0-9_-]{32}$/);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.match(first.stderr(), new RegExp(`API key: ${key} \\(generated now`));
    assert.match(first.stderr(), /curl -s -H 'X-Api-Key: cww_/);
    const second = await startWorkerProcess(
      ['--port', '0', '--data-dir', dataDir, '--simulator'],
      NO_PCSCD,
      90_000,
    );
    try {
      // Printed only when generated: later starts say where it is and how to print it.
      assert.doesNotMatch(second.stderr(), new RegExp(key));
      assert.match(
        second.stderr(),
        /API key: the API key in .*api-key; `card-wallet-worker key` prints it/,
      );
      assert.match(second.stderr(), /curl -s -H "X-Api-Key: \$KEY" /);
      const printed = await runWorker(['key', '--data-dir', dataDir]);
      assert.deepEqual([printed.code, printed.stdout], [0, `${key}\n`], printed.stderr);
      const info = await httpRequest(`${second.url}/info`, { headers: { 'X-Api-Key': key } });
      assert.deepEqual(info.json, { credits: '10000', creditCost: '0.50' });
      const res = await httpRequest(`${second.url}/readcard`, { headers: { 'X-Api-Key': key } });
      assert.deepEqual(res.json, { error: 'NoCard' }); // the simulator's reader, empty
    } finally {
      await second.stop();
    }
  });

  test('when the key is given, then no start prints it, and `key` prints the one the environment gives', async () => {
    const worker = await startWorkerProcess(
      ['--port', '0', '--data-dir', join(dir, 'k'), '--simulator', ...cloud],
      { ...NO_PCSCD, CARD_WALLET_API_KEY: KEY },
    );
    try {
      assert.doesNotMatch(worker.stderr(), new RegExp(KEY));
      assert.match(worker.stderr(), /CARD SIMULATOR ON/);
    } finally {
      await worker.stop();
    }
    const printed = await runWorker(['key'], { CARD_WALLET_API_KEY: KEY });
    assert.deepEqual([printed.code, printed.stdout], [0, `${KEY}\n`]);
    const none = await runWorker(['key', '--data-dir', join(dir, 'no-such-folder')]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no API key: .*start the service once/);
  });

  test('when settings come from --config, then flags override the file', async () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        port: 1,
        apiKey: KEY,
        dataDir: 'e',
        allowedOrigins: ['https://a.example'],
        cloudUrl: ledger.url,
      }),
    );
    const worker = await startWorkerProcess(['--config', file, '--port', '0'], NO_PCSCD);
    try {
      const res = await httpRequest(`${worker.url}/ping`, {
        headers: { Origin: 'https://a.example' },
      });
      assert.equal(res.headers['access-control-allow-origin'], 'https://a.example');
    } finally {
      await worker.stop();
    }
  });

  const invalid: [string, string[], RegExp][] = [
    ['a port that is not a number', ['--port', 'abc'], /port/],
    ['a port out of range', ['--port', '70000'], /port/],
    [
      'a port browsers and fetch refuse',
      ['--port', '4190'],
      /port: port 4190 is one that browsers and fetch refuse to call \(the Fetch standard's bad ports\)/,
    ],
    ['a short API key', ['--api-key', 'short'], /apiKey: must be at least 16/],
    ['an origin with a path', ['--allowed-origins', 'https://a.example/pos'], /allowedOrigins\.0/],
    ['a wildcard origin', ['--allowed-origins', 'https://*.example'], /wildcards/],
    ['a card key that is not 12 hex digits', ['--card-key', 'FFFF'], /cardKey/],
    ['key type C', ['--card-key-type', 'C'], /cardKeyType/],
    ['wallet sector 0', ['--wallet-sector', '0'], /walletSector/],
    ['a cloud URL that is not http', ['--cloud-url', 'ftp://x'], /cloudUrl/],
    [
      'an unknown flag',
      ['--colour', 'red'],
      /unknown option --colour \(see card-wallet-worker --help\)/,
    ],
    ['a mistyped flag', ['--simulater'], /unknown option --simulater; did you mean --simulator\?/],
    [
      'a mistyped subcommand',
      ['simulatr'],
      /unexpected argument simulatr; did you mean simulator\?/,
    ],
    ['a flag without its value', ['--port'], /option --port argument missing/],
    ['a log level that does not exist', ['--log-level', 'verbose'], /logLevel/],
  ];
  for (const [what, args, message] of invalid) {
    test(`when given ${what}, then it exits 2 naming the setting and starts nothing`, async () => {
      const result = await runWorker(
        ['--api-key', KEY, '--data-dir', join(dir, 'f'), ...args],
        NO_PCSCD,
      );
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    });
  }

  describe('the card master key is a secret', () => {
    // Two different keys, so a test can tell which one leaked; compared in both cases.
    const FLAG_KEY = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    const ENV_KEY = '0a1b2c3d4e5f60718293a4b5c6d7e8f9';
    const leaks = (text: string) =>
      [FLAG_KEY, ENV_KEY].filter((key) => text.toLowerCase().includes(key));

    /** Every kind of answer: success, auth failure, validation error, card error, 404, OpenAPI. */
    async function answers(url: string): Promise<string> {
      const calls: [string, Parameters<typeof httpRequest>[1]][] = [
        ['/ping', {}],
        ['/openapi.json', {}],
        ['/info', { headers: { 'X-Api-Key': KEY } }],
        ['/readcard', { headers: { 'X-Api-Key': KEY } }],
        ['/readcard', { headers: { 'X-Api-Key': 'wrong-key-0123456789abc' } }],
        [
          '/writecard',
          {
            method: 'POST',
            headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
            body: '{"credits": -1}',
          },
        ],
        ['/dischargecard', { method: 'POST', headers: { 'X-Api-Key': KEY } }],
        ['/no-such-path', { headers: { 'X-Api-Key': KEY } }],
      ];
      let all = '';
      for (const [path, options] of calls) {
        const res = await httpRequest(`${url}${path}`, options);
        all += `${res.status} ${JSON.stringify(res.headers)} ${res.text}\n`;
      }
      return all;
    }

    test('when it is given by flag (cloud ledger) or by environment (standalone), then it is in no log line and no answer', async () => {
      const byFlag = await startWorkerProcess(
        [
          '--port',
          '0',
          '--api-key',
          KEY,
          '--data-dir',
          join(dir, 'm1'),
          ...cloud,
          '--card-master-key',
          FLAG_KEY,
        ],
        NO_PCSCD,
      );
      let seen: string;
      try {
        seen = await answers(byFlag.url);
      } finally {
        await byFlag.stop();
      }
      seen += byFlag.stderr();

      const byEnv = await startWorkerProcess(['--port', '0', '--data-dir', join(dir, 'm2')], {
        ...NO_PCSCD,
        CARD_WALLET_CARD_MASTER_KEY: ENV_KEY.toUpperCase(),
      });
      try {
        seen += await answers(byEnv.url);
      } finally {
        await byEnv.stop();
      }
      seen += byEnv.stderr();
      assert.match(seen, /"pong"/, 'the answers were collected');
      assert.deepEqual(leaks(seen), []);
    });

    test('when it is not 32 hex digits, then it exits 2 naming cardMasterKey without echoing the value', async () => {
      const bad = FLAG_KEY.slice(0, 31);
      const result = await runWorker(
        ['--api-key', KEY, '--data-dir', join(dir, 'm3'), '--card-master-key', bad],
        NO_PCSCD,
      );
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /cardMasterKey: must be 32 hex digits/);
      assert.ok(!result.stderr.toLowerCase().includes(bad), result.stderr);
      assert.equal(result.stdout, '');
    });
  });

  test('when the config file has an unknown setting, then it exits 2 naming it', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ apiKey: KEY, dataDir: 'g', colour: 'red' }));
    const result = await runWorker(['--config', file], NO_PCSCD);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /colour/);
  });

  test('when the port is in use, then it says so and exits 1 before creating anything (no key, no ledger, no journal)', async () => {
    const first = await startWorkerProcess(
      ['--port', '0', '--api-key', KEY, '--data-dir', join(dir, 'h'), ...cloud],
      NO_PCSCD,
    );
    try {
      const port = new URL(first.url).port;
      // No key and no ledger given: a start that got further would generate a key and start
      // the embedded ledger in this folder.
      const fresh = join(dir, 'h2');
      const result = await runWorker(['--port', port, '--data-dir', fresh], NO_PCSCD);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(
        result.stderr,
        `card-wallet-worker: cannot start: port ${port} is in use (another card-wallet-worker, or the tray app?): stop it, or choose another port with --port N\n`,
      );
      assert.equal(existsSync(fresh), false, 'nothing was created');
    } finally {
      await first.stop();
    }
  });

  test('when it starts, then the banner says its version, mode, ledger, reader and allowlist, and the ledger check says the ledger works', async () => {
    const worker = await startWorkerProcess(
      [
        '--port',
        '0',
        '--api-key',
        KEY,
        '--data-dir',
        join(dir, 'banner'),
        ...cloud,
        '--allowed-origins',
        'https://a.example,http://127.0.0.1:8080',
      ],
      NO_PCSCD,
    );
    try {
      const lines = worker.stderr().split('\n');
      const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string })
        .version;
      for (const expected of [
        `card-wallet-worker ${version} on ${worker.url}`,
        "  mode: cloud (the provider's ledger)",
        `  ledger: ${ledger.url}`,
        '  reader: PC/SC, the first contactless reader',
        '  allowed origins: https://a.example, http://127.0.0.1:8080 (browser pages elsewhere are refused)',
      ]) {
        assert.ok(lines.includes(expected), `${expected}\nnot in:\n${worker.stderr()}`);
      }
      assert.match(
        worker.stderr(),
        new RegExp(
          `info ledger check: ${ledger.url} answers, accepts this till's key, shop Test shop \\(.+\\) holds \\d+ credits at 0\\.50 each`,
        ),
      );
    } finally {
      await worker.stop();
    }
  });

  describe('the ledger check at start', () => {
    let website: StaticServer;
    before(
      async () =>
        (website = await serveFolder(
          fileURLToPath(new URL('../../docs/example', import.meta.url)),
          '127.0.0.1',
        )),
    );
    after(() => website.close());

    const startWith = (cloudUrl: string, key: string, folder: string, extra: string[] = []) =>
      startWorkerProcess(
        [
          '--port',
          '0',
          '--api-key',
          key,
          '--data-dir',
          join(dir, folder),
          '--cloud-url',
          cloudUrl,
          ...extra,
        ],
        NO_PCSCD,
      );
    const checkLine = (worker: { stderr(): string }) =>
      worker
        .stderr()
        .split('\n')
        .filter((line) => line.includes(' ledger check: '));

    test('when nothing listens at the ledger URL, then one warning names the URL and the service starts anyway', async () => {
      const closed = await listen(() => undefined, 0);
      await closed.close();
      const url = `http://127.0.0.1:${closed.port}`;
      const worker = await startWith(url, KEY, 'check-down');
      try {
        const lines = checkLine(worker);
        assert.equal(lines.length, 1, worker.stderr());
        assert.match(
          lines[0] ?? '',
          new RegExp(
            `warn ledger check: the ledger at ${url} did not answer GET /v1/customer: .*ECONNREFUSED.*; until it answers, money calls answer LedgerUnavailable$`,
          ),
        );
        assert.equal((await httpRequest(`${worker.url}/ping`)).status, 200);
      } finally {
        await worker.stop();
      }
    });

    test('when the ledger does not know the key, then one warning says so', async () => {
      const worker = await startWith(ledger.url, UNKNOWN_KEY, 'check-key');
      try {
        assert.match(
          checkLine(worker).join('\n'),
          new RegExp(`warn ledger check: ${ledger.url} refuses this till's API key`),
        );
      } finally {
        await worker.stop();
      }
    });

    test('when the key is assigned to no shop, then one warning says so', async () => {
      const worker = await startWith(ledger.url, UNASSIGNED_KEY, 'check-shop');
      try {
        assert.match(
          checkLine(worker).join('\n'),
          /knows this till's API key but it is assigned to no shop/,
        );
      } finally {
        await worker.stop();
      }
    });

    test('when the URL answers like a plain web server, then the check and every call say LedgerUnavailable naming it, in one line without a stack unless --log-level debug', async () => {
      const quiet = await startWith(website.origin, KEY, 'check-web');
      const verbose = await startWith(website.origin, KEY, 'check-web-debug', [
        '--log-level',
        'debug',
      ]);
      try {
        assert.match(
          checkLine(quiet).join('\n'),
          new RegExp(
            `warn ledger check: ${website.origin} is not a card wallet ledger: it answered GET /v1/customer with 404 no content type; check --cloud-url`,
          ),
        );
        for (const worker of [quiet, verbose]) {
          const res = await httpRequest(`${worker.url}/readcard`, {
            headers: { 'X-Api-Key': KEY },
          });
          assert.equal(res.status, 500, shown(res));
          assert.deepEqual(res.json, {
            error: 'LedgerUnavailable',
            detail: `${website.origin} is not a card wallet ledger: it answered GET /v1/customer with 404 no content type; check --cloud-url`,
          });
        }
        await waitUntil(
          () => /error GET \/readcard -> 500 LedgerUnavailable/.test(verbose.stderr()),
          5_000,
          'the error line',
        );
        assert.match(
          quiet.stderr(),
          /error GET \/readcard -> 500 LedgerUnavailable: .*is not a card wallet ledger/,
        );
        assert.doesNotMatch(quiet.stderr(), /\n\s+at /, 'no stack trace');
        assert.match(
          verbose.stderr(),
          /debug GET \/readcard -> 500 LedgerUnavailable: Error: GET \/v1\/customer answered 404[^\n]*\n\s+at /,
        );
      } finally {
        await quiet.stop();
        await verbose.stop();
      }
    });
  });

  test('when asked for --help, then it prints the usage and exits 0', async () => {
    const result = await runWorker(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /--allowed-origins/);
  });

  for (const command of [['simulator'], ['simulator', 'place'], ['personalize']]) {
    test(`when asked for ${command.join(' ')} --help, then it prints that command's usage and exits 0`, async () => {
      const result = await runWorker([...command, '--help']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^Usage: card-wallet-worker ${command[0]}`));
      assert.equal(result.stderr, '');
    });
  }
});
