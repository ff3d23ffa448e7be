import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../service/config.ts';
import { silentLogger } from '../../service/logger.ts';
import { startWorkerService, type WorkerService } from '../../service/worker-service.ts';
import { KEYS_FILE } from '../../service/earlier-keys-file.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { startWorkerProcess } from '../support/worker-process.ts';

// Standalone mode (no cloud URL): the embedded ledger. A key the operator replaced is kept
// only while movements made with it are unresolved, then revoked in the embedded ledger.
const FIRST_KEY = 'standalone-first-key-0123456';
const SECOND_KEY = 'standalone-second-key-012345';

let dataDir: string;
let service: WorkerService;
const released: string[] = [];
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cww-standalone-'));
  service = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: FIRST_KEY, dataDir }),
    log: silentLogger,
    pcscdSocket: join(dataDir, 'no-pcscd.sock'),
    earlierKeys: { keys: [], release: (key) => released.push(key) },
  });
});
after(async () => {
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ledgerStatus = async (apiKey: string) =>
  (await fetch(`${service.ledgerUrl}/v1/customer`, { headers: { 'X-Api-Key': apiKey } })).status;

test('when the key is changed in standalone mode and no movement needs the earlier key, then the embedded ledger revokes it and the new key works', async () => {
  const first = await httpRequest(`${service.url}/info`, { headers: { 'X-Api-Key': FIRST_KEY } });
  assert.equal(first.status, 200, shown(first));
  await service.applySettings({ apiKey: SECOND_KEY });
  const deadline = Date.now() + 30_000;
  while (released.length === 0) {
    if (Date.now() > deadline) assert.fail('the host was never told to forget the earlier key');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(released, [FIRST_KEY], 'the host is told it may forget the earlier key');
  assert.equal(await ledgerStatus(FIRST_KEY), 401, 'revoked before the host forgets it');
  const second = await httpRequest(`${service.url}/info`, { headers: { 'X-Api-Key': SECOND_KEY } });
  assert.equal(second.status, 200, shown(second));
  const old = await httpRequest(`${service.url}/info`, { headers: { 'X-Api-Key': FIRST_KEY } });
  assert.equal(old.status, 401, shown(old));
});

test('when the headless service restarts with another key, then the earlier key is revoked in the embedded ledger and forgotten, and the new key works', async () => {
  const folder = join(dataDir, 'headless');
  const noPcscd = { PCSCLITE_CSOCK_NAME: join(dataDir, 'no-pcscd.sock') };
  const start = (key: string) =>
    // A standalone start (PGlite) on a busy machine: the same bound as cli.test.ts gives it.
    startWorkerProcess(['--port', '0', '--api-key', key, '--data-dir', folder], noPcscd, 90_000);
  const embeddedLedger = (stderr: string) => {
    const url = /^ {2}ledger: (http:\/\/\S+)$/m.exec(stderr)?.[1];
    assert.ok(url, `no embedded ledger URL in:\n${stderr}`);
    return url;
  };
  const status = async (ledgerUrl: string, key: string) =>
    (await fetch(`${ledgerUrl}/v1/customer`, { headers: { 'X-Api-Key': key } })).status;

  const first = await start(FIRST_KEY);
  try {
    assert.equal(await status(embeddedLedger(first.stderr()), FIRST_KEY), 200);
  } finally {
    assert.equal(await first.stop(), 0, first.stderr());
  }
  const second = await start(SECOND_KEY);
  try {
    const ledgerUrl = embeddedLedger(second.stderr());
    const deadline = Date.now() + 30_000;
    while ((await status(ledgerUrl, FIRST_KEY)) !== 401) {
      if (Date.now() > deadline) assert.fail(`the earlier key is still valid:\n${second.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    while (readFileSync(join(folder, KEYS_FILE), 'utf8').includes(FIRST_KEY)) {
      if (Date.now() > deadline) assert.fail('the host still keeps the earlier key');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const info = await httpRequest(`${second.url}/info`, { headers: { 'X-Api-Key': SECOND_KEY } });
    assert.equal(info.status, 200, shown(info));
    assert.ok(!second.stderr().includes(FIRST_KEY), 'the earlier key is never logged');
  } finally {
    assert.equal(await second.stop(), 0, second.stderr());
  }
});
