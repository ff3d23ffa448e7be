import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../service/config.ts';
import { silentLogger } from '../../service/logger.ts';
import { startWorkerService, type WorkerService } from '../../service/worker-service.ts';
import { httpRequest, shown } from '../support/http-client.ts';

// Standalone mode (no cloud URL): the embedded ledger. A key the operator replaced is kept
// only while movements made with it are unresolved, then revoked in the embedded ledger.
const FIRST_KEY = 'standalone-first-key-0123456';
const SECOND_KEY = 'standalone-second-key-012345';

let dataDir: string;
let service: WorkerService;
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cww-standalone-'));
  service = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: FIRST_KEY, dataDir }),
    log: silentLogger,
    pcscdSocket: join(dataDir, 'no-pcscd.sock'),
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
  const released: string[] = [];
  service.on('earlierKeyReleased', (key) => released.push(key));
  await service.applySettings({ apiKey: SECOND_KEY });
  assert.deepEqual(released, [FIRST_KEY], 'the host is told it may forget the earlier key');
  const deadline = Date.now() + 30_000;
  while ((await ledgerStatus(FIRST_KEY)) !== 401) {
    if (Date.now() > deadline)
      assert.fail('the earlier key is still accepted by the embedded ledger');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const second = await httpRequest(`${service.url}/info`, { headers: { 'X-Api-Key': SECOND_KEY } });
  assert.equal(second.status, 200, shown(second));
  const old = await httpRequest(`${service.url}/info`, { headers: { 'X-Api-Key': FIRST_KEY } });
  assert.equal(old.status, 401, shown(old));
});
