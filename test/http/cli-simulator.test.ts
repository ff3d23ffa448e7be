// `card-wallet-worker --simulator` and `card-wallet-worker simulator ...` as processes: the
// subcommand calls the running service's control API with the key from the data folder.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../service/config.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import { runWorker, startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

const NO_PCSCD = { PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' };

describe('card-wallet-worker simulator', () => {
  let dir: string;
  let ledger: TestLedger;
  let worker: WorkerProcess;
  let port: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cww-cli-sim-'));
    ledger = await startTestLedger();
    worker = await startWorkerProcess(
      [
        '--port',
        '0',
        '--data-dir',
        dir,
        '--cloud-url',
        ledger.url,
        '--simulator',
        '--api-key',
        TEST_API_KEY,
      ],
      NO_PCSCD,
    );
    port = new URL(worker.url).port;
  });
  after(async () => {
    await worker?.stop();
    await ledger?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const simulator = (...args: string[]) =>
    runWorker(['simulator', ...args, '--port', port, '--api-key', TEST_API_KEY], NO_PCSCD);

  test('when the service starts with --simulator, then it says so on stderr with the call that places a card', () => {
    assert.match(worker.stderr(), /CARD SIMULATOR ON/);
    assert.match(worker.stderr(), /\/simulator\/place/);
  });

  test('when asked to place a card with 50 credits, then it prints the card and the service reads it', async () => {
    const placed = await simulator('place', '--credits', '50', '--uid', 'C11A0001');
    assert.equal(placed.code, 0, placed.stderr);
    assert.deepEqual(JSON.parse(placed.stdout), { cardId: 'C11A0001', credits: 50 });
    const status = await simulator('status');
    assert.equal(JSON.parse(status.stdout).card.cardId, 'C11A0001');
    const away = await simulator('take-away');
    assert.equal(away.code, 0, away.stderr);
    const back = await simulator('put-back', 'C11A0001');
    assert.deepEqual(JSON.parse(back.stdout), { cardId: 'C11A0001', credits: 50 });
    const fault = await simulator('fault', 'tear-after-commit');
    assert.equal(fault.code, 0, fault.stderr);
    assert.equal((await simulator('fault', 'none')).code, 0);
  });

  test('when asked to place a DESFire card, then it prints it and the service sees it', async () => {
    const placed = await simulator(
      'place',
      '--type',
      'desfire',
      '--credits',
      '5',
      '--uid',
      '04C11A00000002',
    );
    assert.equal(placed.code, 0, placed.stderr);
    assert.deepEqual(JSON.parse(placed.stdout), { cardId: '04C11A00000002', credits: 5 });
    const status = await simulator('status');
    assert.equal(JSON.parse(status.stdout).card.cardId, '04C11A00000002');
  });

  test('when the control API refuses, then it prints the answer and exits 1', async () => {
    const res = await simulator('put-back', 'DEADBEEF');
    assert.equal(res.code, 1, res.stderr);
    assert.equal(JSON.parse(res.stdout).error, 'UnknownSimulatedCard');
  });

  test('when the fault does not exist, then it exits 2 listing the faults, with the nearest one', async () => {
    const melt = await simulator('fault', 'melt');
    assert.equal(melt.code, 2, melt.stderr);
    assert.equal(
      melt.stderr,
      'card-wallet-worker simulator: unknown fault melt (the faults: tear-before-commit, tear-after-commit, wrong-key, corrupt, slow, none)\n',
    );
    const typo = await simulator('fault', 'tear-befor-commit');
    assert.match(typo.stderr, /unknown fault tear-befor-commit; did you mean tear-before-commit\?/);
  });

  test('when the command is unknown, then it exits 2 with the usage', async () => {
    const res = await simulator('juggle');
    assert.equal(res.code, 2);
    assert.match(res.stderr, /unknown simulator command juggle/);
    const typo = await simulator('plase');
    assert.match(typo.stderr, /unknown simulator command plase; did you mean place\?/);
  });

  test('when an option is mistyped, then it exits 2 saying which it meant', async () => {
    const res = await simulator('place', '--credit', '5');
    assert.equal(res.code, 2);
    assert.match(res.stderr, /unknown option --credit; did you mean --credits\?/);
  });

  test('when no key is given and the data folder has none, then it exits 2 saying where it looked', async () => {
    const res = await runWorker(
      ['simulator', 'status', '--data-dir', join(dir, 'empty')],
      NO_PCSCD,
    );
    assert.equal(res.code, 2);
    assert.match(res.stderr, /no API key/);
  });
});

describe('the simulator setting', () => {
  test('when nothing asks for it, then it is off', () => {
    const config = parseConfig({ apiKey: TEST_API_KEY, dataDir: '/tmp/x' });
    assert.equal(config.simulator, false);
  });
});
