// `card-wallet-worker personalize` as a process, against a worker process with the card
// simulator: the subcommand calls POST /cards/personalize with the key it is given.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestLedger, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import { runWorker, startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

const NO_PCSCD = { PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' };
// A test master key (public: never a real one).
const MASTER = '000102030405060708090A0B0C0D0E0F';

describe('card-wallet-worker personalize', () => {
  let ledger: TestLedger;
  const dirs: string[] = [];
  const workers: WorkerProcess[] = [];
  before(async () => (ledger = await startTestLedger()));
  after(async () => {
    for (const worker of workers) await worker.stop();
    await ledger?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'cww-cli-pers-'));
    dirs.push(dir);
    const worker = await startWorkerProcess(
      ['--port', '0', '--data-dir', dir, '--cloud-url', ledger.url, '--simulator'],
      { ...NO_PCSCD, CARD_WALLET_API_KEY: TEST_API_KEY, ...env },
    );
    workers.push(worker);
    return worker;
  }
  const portOf = (worker: WorkerProcess) => new URL(worker.url).port;
  const run = (port: string, ...args: string[]) =>
    runWorker([...args, '--port', port, '--api-key', TEST_API_KEY], NO_PCSCD);

  test('when a fresh card is on the reader, then it is personalized once and is already personalized the next time', async () => {
    // The master key comes from the environment, as a service manager would give it.
    const worker = await startWorker({ CARD_WALLET_CARD_MASTER_KEY: MASTER });
    const port = portOf(worker);
    const placed = await run(port, 'simulator', 'place', '--uid', 'C11B0001');
    assert.equal(placed.code, 0, placed.stderr);
    const first = await run(port, 'personalize');
    assert.equal(first.code, 0, `${first.stdout}${first.stderr}`);
    assert.deepEqual(JSON.parse(first.stdout), {
      cardId: 'C11B0001',
      credits: 0,
      alreadyPersonalized: false,
    });
    const again = await run(port, 'personalize');
    assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
    assert.equal(JSON.parse(again.stdout).alreadyPersonalized, true, again.stdout);
    assert.ok(!worker.stderr().toUpperCase().includes(MASTER), 'the master key is never logged');
  });

  test('when a factory-fresh DESFire card is on the reader, then it is personalized once and is already personalized the next time', async () => {
    const worker = await startWorker({ CARD_WALLET_CARD_MASTER_KEY: MASTER });
    const port = portOf(worker);
    const cardId = '04C11B00000001';
    const placed = await run(port, 'simulator', 'place', '--type', 'desfire', '--uid', cardId);
    assert.equal(placed.code, 0, placed.stderr);
    const first = await run(port, 'personalize');
    assert.equal(first.code, 0, `${first.stdout}${first.stderr}`);
    assert.deepEqual(JSON.parse(first.stdout), { cardId, credits: 0, alreadyPersonalized: false });
    const again = await run(port, 'personalize');
    assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
    assert.deepEqual(JSON.parse(again.stdout), { cardId, credits: 0, alreadyPersonalized: true });
  });

  test('when the service has no master key, then 409 CardMasterKeyNotSet and exit code 1', async () => {
    const port = portOf(await startWorker({}));
    const placed = await run(port, 'simulator', 'place', '--uid', 'C11B0002');
    assert.equal(placed.code, 0, placed.stderr);
    const res = await run(port, 'personalize');
    assert.equal(res.code, 1, `${res.stdout}${res.stderr}`);
    assert.deepEqual(JSON.parse(res.stdout), { error: 'CardMasterKeyNotSet' });
  });

  test('when given an unknown option, then it says so and exits 2', async () => {
    const res = await runWorker(['personalize', '--bogus'], NO_PCSCD);
    assert.equal(res.code, 2, res.stderr);
    assert.match(
      res.stderr,
      /unknown option --bogus \(see card-wallet-worker personalize --help\)/,
    );
  });
});
