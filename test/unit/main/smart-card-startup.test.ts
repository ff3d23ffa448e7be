import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, mock, test } from 'node:test';
import type { NFC } from 'nfc-pcsc';
import { ReaderManager, type ReaderManagerOptions } from '../../../service/card/reader-manager.ts';
import type { ReaderProblem } from '../../../service/card/reader-problems.ts';
import { silentLogger } from '../../../service/logger.ts';
import { WalletKeys } from '../../../service/card/wallet-keys.ts';

// The tray app's start on each platform: the reader must never block the main process, and an
// idle till without a reader must not look for one every second.

/** nfc-pcsc's NFC with no readers: enough to see whether (and when) it was constructed. */
class FakeNfc extends EventEmitter {
  close(): void {}
  attach(name: string): EventEmitter & { name: string; close(): void } {
    const reader = Object.assign(new EventEmitter(), { name, close() {} });
    this.emit('reader', reader);
    return reader;
  }
}

const managers: ReaderManager[] = [];
afterEach(async () => {
  mock.timers.reset();
  await Promise.all(managers.splice(0).map((manager) => manager.stop(0)));
});

/** Lets the probe's promise and the manager's continuation run. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

const ON_DEMAND: ReaderProblem = {
  code: 'service-on-demand',
  message: 'the Windows Smart Card service (SCardSvr) starts only while a reader is plugged in',
};

function startManager(options: Partial<ReaderManagerOptions> & { running: () => boolean }) {
  let probes = 0;
  const nfcs: FakeNfc[] = [];
  const problems: string[] = [];
  const manager = new ReaderManager({
    keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
    serviceProbe: {
      check: async () => {
        probes += 1;
        return options.running() ? null : ON_DEMAND;
      },
    },
    createNfc: () => {
      const nfc = new FakeNfc();
      nfcs.push(nfc);
      return nfc as unknown as NFC;
    },
    operationTimeoutMs: 500,
    queueLimit: 2,
    log: silentLogger,
    ...options,
  });
  manager.on('event', (event) => event.type === 'problem' && problems.push(event.message));
  managers.push(manager);
  manager.start();
  return { manager, nfcs, problems, probes: () => probes };
}

describe('reader start-up', () => {
  test("when the platform's smart-card service is not running, then nfc-pcsc is not constructed, the reason is shown once with its code, and it is constructed once the service runs", async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    let running = false;
    const started = startManager({ running: () => running });
    await flush();
    mock.timers.tick(1_000);
    await flush();
    assert.equal(started.probes(), 2);
    assert.equal(started.nfcs.length, 0);
    assert.equal(started.manager.status.pcsc, 'unavailable');
    assert.equal(started.manager.status.problem?.code, 'service-on-demand');
    assert.deepEqual(started.problems, [ON_DEMAND.message]);
    running = true;
    mock.timers.tick(2_000);
    await flush();
    assert.equal(started.nfcs.length, 1);
    assert.equal(started.manager.status.pcsc, 'ready');
    assert.equal(started.manager.status.problem, null, 'the problem is over');
  });

  test('when the service stays away, then it is looked for after 1 s, 2 s, 4 s... up to every 30 s, and from 1 s again once a reader was attached', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    let running = false;
    const started = startManager({ running: () => running });
    await flush();
    /** Advances the clock by `ms` and says whether the probe ran again. */
    const probedAfter = async (ms: number) => {
      const before = started.probes();
      mock.timers.tick(ms);
      await flush();
      return started.probes() > before;
    };
    for (const wait of [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]) {
      assert.equal(await probedAfter(wait - 1), false, `not before ${wait} ms`);
      assert.equal(await probedAfter(1), true, `after ${wait} ms`);
    }
    // A reader arrives: the context is made and a reader attached.
    running = true;
    assert.equal(await probedAfter(30_000), true);
    started.nfcs[0]!.attach('ACS ACR122U PICC Interface');
    // The service stops (the reader was unplugged): the next look is 1 s away again.
    running = false;
    started.nfcs[0]!.emit('error', new Error('SCardGetStatusChange error: Service was stopped.'));
    await flush();
    assert.equal(await probedAfter(999), false);
    assert.equal(await probedAfter(1), true);
  });

  test('when asked to look again now (the operator plugged the reader in), then the probe runs at once instead of at the next step', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    let running = false;
    const started = startManager({ running: () => running });
    await flush();
    running = true;
    started.manager.retryNow();
    await flush();
    assert.equal(started.nfcs.length, 1);
    assert.equal(started.manager.status.pcsc, 'ready');
  });

  test('when nfc-pcsc cannot be loaded (no libpcsclite, wrong ABI), then it is a reader problem named for what to do, and the manager stays up', async () => {
    for (const [message, code] of [
      [
        'libpcsclite.so.1: cannot open shared object file: No such file or directory',
        'library-missing',
      ],
      [
        "The module '/x/pcsclite.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 133.",
        'wrong-abi',
      ],
    ] as const) {
      const manager = new ReaderManager({
        keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
        createNfc: async () => {
          throw new Error(message);
        },
        operationTimeoutMs: 500,
        queueLimit: 2,
        log: silentLogger,
      });
      const problems: string[] = [];
      manager.on('event', (event) => event.type === 'problem' && problems.push(event.message));
      managers.push(manager);
      manager.start();
      await flush();
      assert.equal(manager.status.pcsc, 'unavailable');
      assert.equal(manager.status.problem?.code, code);
      assert.equal(problems.length, 1);
      await assert.rejects(
        manager.withCard(async () => 1),
        { code: 'NoReader' },
      );
    }
  });
});
