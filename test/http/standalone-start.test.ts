import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LOCK_FILE } from '../../cloud/db/pglite-database.ts';
import { LedgerClient, mayHaveLanded } from '../../service/cloud/ledger-client.ts';
import { parseConfig } from '../../service/config.ts';
import { AppError } from '../../service/errors.ts';
import { silentLogger, type Logger } from '../../service/logger.ts';
import { startWorkerService } from '../../service/worker-service.ts';
import { httpRequest, shown } from '../support/http-client.ts';

// Standalone mode listens before its embedded ledger has opened its database (seconds of
// PGlite start-up): the ledger client waits for the opening before its first attempt, and a
// database that cannot open leaves the service answering, each ledger call LedgerUnavailable.
const API_KEY = 'standalone-start-key-0123456';
const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
const newDataDir = () => {
  const folder = mkdtempSync(join(tmpdir(), 'cww-standalone-start-'));
  folders.push(folder);
  return folder;
};

/** A ledger stand-in that counts requests and answers GET /v1/customer. */
async function countingLedger() {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ id: 'c1', name: 'Shop', credits: 5, creditCost: '1.00' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('when the ledger is still opening, then a call sends nothing until it has opened, and its timeout counts from there', async () => {
  const ledger = await countingLedger();
  try {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const client = new LedgerClient({ baseUrl: ledger.url, timeoutMs: 100, retries: 0, opened });
    const call = client.getCustomer(API_KEY);
    // Longer than the per-attempt timeout: a timer started before the opening would have fired.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(ledger.requests(), 0, 'nothing is sent to a ledger still opening');
    open();
    const customer = await call;
    assert.equal(customer.credits, 5, JSON.stringify(customer));
    assert.equal(ledger.requests(), 1);
  } finally {
    await ledger.close();
  }
});

test('when the ledger could not open, then each call fails as LedgerUnavailable, certainly not carried out, and the ledger is shown unreachable', async () => {
  const ledger = await countingLedger();
  try {
    const opened = Promise.reject(new Error('the database is in use'));
    const client = new LedgerClient({ baseUrl: ledger.url, opened });
    const error = await client.getCustomer(API_KEY).then(
      (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, 'LedgerUnavailable');
    assert.equal(mayHaveLanded(error), false, 'nothing was sent');
    assert.equal(ledger.requests(), 0);
    assert.equal(client.reachability.reachable, false);
  } finally {
    await ledger.close();
  }
});

test('when the embedded ledger cannot open its database, then the service still answers, the shop and a recharge are refused as unavailable, and the log says why', async () => {
  const dataDir = newDataDir();
  // Another live process holds the database (this one's PID: alive for the whole test).
  mkdirSync(join(dataDir, 'ledger'), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, 'ledger', LOCK_FILE), `${process.pid}\n`);
  const errors: string[] = [];
  const log: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (m) => errors.push(m),
  };
  const service = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: API_KEY, dataDir, simulator: true }),
    log,
  });
  try {
    const headers = { 'X-Api-Key': API_KEY, 'Content-Type': 'application/json' };
    const info = await httpRequest(`${service.url}/info`, { headers });
    assert.equal(info.status, 400, shown(info));
    assert.equal((info.json as { error?: string }).error, 'CustomerReadError', shown(info));
    // The simulated reader needs no ledger.
    const placed = await httpRequest(`${service.url}/simulator/place`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ credits: 0 }),
    });
    assert.equal(placed.status, 200, shown(placed));
    const recharge = await httpRequest(`${service.url}/writecard`, {
      method: 'POST',
      headers: { ...headers, 'Idempotency-Key': 'standalone-start-1' },
      body: JSON.stringify({ credits: 5 }),
    });
    assert.equal(recharge.status, 500, shown(recharge));
    assert.equal((recharge.json as { error?: string }).error, 'LedgerUnavailable', shown(recharge));
    assert.ok(
      errors.some((line) => line.includes('could not open') && line.includes(dataDir)),
      `log:\n${errors.join('\n')}`,
    );
  } finally {
    await service.close();
  }
});

test('when a worker closes while its embedded ledger is still opening, then the database closes too and its lock is released', async () => {
  const dataDir = newDataDir();
  const service = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: API_KEY, dataDir, simulator: true }),
    log: silentLogger,
  });
  await service.close();
  assert.equal(existsSync(join(dataDir, 'ledger', LOCK_FILE)), false, 'the lock file is gone');
  // And the next start opens it: nothing of the first is left holding it.
  const again = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: API_KEY, dataDir, simulator: true }),
    log: silentLogger,
  });
  try {
    const info = await httpRequest(`${again.url}/info`, { headers: { 'X-Api-Key': API_KEY } });
    assert.equal(info.status, 200, shown(info));
  } finally {
    await again.close();
  }
});
