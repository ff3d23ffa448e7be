import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, test } from 'node:test';
import type { NFC } from 'nfc-pcsc';
import { isSCardSvrRunning, smartCardServiceProbe } from '../../../service/card/pcscd-probe.ts';
import { ReaderManager } from '../../../service/card/reader-manager.ts';
import { silentLogger } from '../../../service/logger.ts';
import { WalletKeys } from '../../../service/card/wallet-keys.ts';

// The tray app's start on each platform: the reader must never block the main process.

/** nfc-pcsc's NFC with no readers: enough to see whether (and when) it was constructed. */
class FakeNfc extends EventEmitter {
  close(): void {}
}

const managers: ReaderManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.stop(0)));
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('reader start-up', () => {
  test("when the platform's smart-card service is not running, then nfc-pcsc is not constructed, the reason is shown once, and it is constructed once the service runs", async () => {
    let running = false;
    let probes = 0;
    let created = 0;
    const problems: string[] = [];
    const manager = new ReaderManager({
      keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
      serviceProbe: {
        describe: 'the Windows Smart Card service (SCardSvr) is not running; plug in the reader',
        reachable: async () => {
          probes += 1;
          return running;
        },
      },
      createNfc: () => {
        created += 1;
        return new FakeNfc() as unknown as NFC;
      },
      operationTimeoutMs: 500,
      queueLimit: 2,
      probeIntervalMs: 5,
      log: silentLogger,
    });
    manager.on('event', (event) => event.type === 'problem' && problems.push(event.message));
    managers.push(manager);
    manager.start();
    await settle();
    assert.ok(probes >= 2, `probes: ${probes}`);
    assert.equal(created, 0);
    assert.equal(manager.status.pcsc, 'unavailable');
    assert.match(manager.status.problem?.message ?? '', /SCardSvr/);
    assert.equal(problems.length, 1);
    running = true;
    await settle();
    assert.equal(created, 1);
    assert.equal(manager.status.pcsc, 'ready');
  });

  test('when nfc-pcsc cannot be loaded (no libpcsclite, wrong ABI), then it is a reader problem and the manager stays up', async () => {
    const manager = new ReaderManager({
      keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
      createNfc: async () => {
        throw new Error(
          'libpcsclite.so.1: cannot open shared object file: No such file or directory',
        );
      },
      operationTimeoutMs: 500,
      queueLimit: 2,
      probeIntervalMs: 5,
      log: silentLogger,
    });
    const problems: string[] = [];
    manager.on('event', (event) => event.type === 'problem' && problems.push(event.message));
    managers.push(manager);
    manager.start();
    await settle();
    assert.equal(manager.status.pcsc, 'unavailable');
    assert.match(manager.status.problem?.message ?? '', /libpcsclite\.so\.1/);
    assert.equal(problems.length, 1, 'reported once, not every retry');
    await assert.rejects(
      manager.withCard(async () => 1),
      { code: 'NoReader' },
    );
  });
});

describe('smart-card service probe', () => {
  const running = `
SERVICE_NAME: SCardSvr
        TYPE               : 20  WIN32_SHARE_PROCESS
        STATE              : 4  RUNNING
                                (STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)
`;
  const stopped = running.replace('4  RUNNING', '1  STOPPED');
  test('when sc.exe says SCardSvr is RUNNING (4), then Windows is reachable; STOPPED, missing or failing sc, then not', async () => {
    assert.equal(await isSCardSvrRunning(async () => running), true);
    assert.equal(await isSCardSvrRunning(async () => stopped), false);
    assert.equal(
      await isSCardSvrRunning(
        async () => '[SC] EnumQueryServicesStatus:OpenService FAILED 1060:\n',
      ),
      false,
    );
    assert.equal(
      await isSCardSvrRunning(async () => {
        throw new Error('spawn sc.exe ENOENT');
      }),
      false,
    );
  });

  test('when the platform is Windows, then SCardSvr is asked; macOS needs no wait; Linux probes the pcscd socket', async () => {
    const asked: string[][] = [];
    const windows = smartCardServiceProbe('win32', {}, async (file, args) => {
      asked.push([file, ...args]);
      return running;
    });
    assert.equal(await windows.reachable(), true);
    assert.deepEqual(asked, [['sc.exe', 'query', 'SCardSvr']]);
    assert.equal(await smartCardServiceProbe('darwin').reachable(), true);
    const linux = smartCardServiceProbe('linux', {
      PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm',
    });
    assert.equal(await linux.reachable(), false);
    assert.match(linux.describe, /pcscd/);
  });
});
