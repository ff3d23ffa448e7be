import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterEach, describe, test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PcscHost } from '../../../main/pcsc-host-client.ts';
import { ReaderManager, type ReaderEvent } from '../../../service/card/reader-manager.ts';
import { silentLogger } from '../../../service/logger.ts';
import { WalletKeys } from '../../../service/card/wallet-keys.ts';
import { FakeApp, FakeUtilityProcessModule } from '../../support/electron-mock.ts';
import { stallUntil } from '../../support/stalled-loop.ts';

// The tray's PC/SC host (main/pcsc-host.ts) in a utility process, supervised from main/
// (main/pcsc-host-client.ts): a binding that spins, a call that never returns or a host that
// dies is detected, shown as the reader's problem and recovered by a new host, while the main
// process keeps answering. The utility process is the electron mock's: a real child process.

const hostEntry = fileURLToPath(
  new URL('../../support/pcsc-host-with-binding.ts', import.meta.url),
);
const fakeBinding = fileURLToPath(new URL('../../support/fake-pcsc-binding.cts', import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A ready app's utilityProcess, and a host whose n-th fork behaves as `behaviours[n]`. */
function supervisedHost(
  behaviours: string[],
  timing: { answerWithinMs?: number; openWithinMs?: number } = {},
  env: NodeJS.ProcessEnv = {},
) {
  const app = new FakeApp();
  app.becomeReady();
  const utilityProcess = new FakeUtilityProcessModule(app);
  const lines: string[] = [];
  const host = new PcscHost({
    fork: () =>
      utilityProcess.fork(hostEntry, [], {
        stdio: 'pipe',
        env: {
          ...process.env,
          FAKE_PCSC_BINDING: fakeBinding,
          FAKE_PCSC_BEHAVIOUR:
            behaviours[utilityProcess.forked.length] ?? behaviours.at(-1) ?? 'card',
          ...env,
        },
      }),
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (line) => lines.push(line),
    },
    heartbeatMs: 50,
    // Generous for a child starting on a busy machine; a hang in these tests is for good.
    openWithinMs: timing.openWithinMs ?? 8_000,
    answerWithinMs: timing.answerWithinMs ?? 8_000,
  });
  cleanups.push(() => {
    host.stop();
    for (const child of utilityProcess.forked) child.kill();
  });
  return { host, utilityProcess, lines };
}

function readersOver(host: PcscHost) {
  const events: ReaderEvent[] = [];
  const manager = new ReaderManager({
    keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
    createNfc: () => host.createNfc(),
    operationTimeoutMs: 300,
    queueLimit: 2,
    probeIntervalMs: 20,
    probeMaxIntervalMs: 200,
    log: silentLogger,
  });
  manager.on('event', (event) => events.push(event));
  cleanups.push(() => manager.stop(0));
  manager.start();
  return { manager, events };
}

/** Resolves once `condition` holds after a reader event (no sleeping). */
function until(manager: ReaderManager, condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (condition()) return resolve();
    const check = () => {
      if (!condition()) return;
      manager.off('status', check);
      resolve();
    };
    manager.on('status', check);
  });
}

describe('the PC/SC host in a utility process', () => {
  test('when the utility process is forked before the app is ready, then it fails as Electron does', () => {
    const app = new FakeApp();
    assert.throws(
      () => new FakeUtilityProcessModule(app).fork(hostEntry),
      /only be called after the app is ready/,
    );
  });

  test('when messages cross to the utility process, then they are structured-cloned: a function is refused, a transfer must be ports', () => {
    const { utilityProcess } = supervisedHost(['card']);
    const child = utilityProcess.fork(hostEntry, [], {
      env: { ...process.env, FAKE_PCSC_BINDING: fakeBinding },
    });
    assert.throws(() => child.postMessage({ kind: 'ping', id: 1, callback() {} }), {
      name: 'DataCloneError',
    });
    assert.throws(() => child.postMessage({ kind: 'ping', id: 1 }, [{}]), TypeError);
    child.kill();
  });

  test('when a card is on the reader, then nfc-pcsc in main reads its UID through the host', async () => {
    const { host } = supervisedHost(['card']);
    const { manager } = readersOver(host);
    await until(manager, () => manager.status.card !== null);
    assert.equal(manager.status.reader, 'Fake Reader PICC 00');
    assert.equal(manager.status.card?.cardId, '04A1B2C3');
    assert.equal(host.running, true);
  });

  test('when the binding spins in its constructor, then main keeps answering, the reader says the host is not answering, and a new host takes over', async () => {
    const { host, utilityProcess, lines } = supervisedHost(['hang-on-construct', 'card'], {
      openWithinMs: 15_000,
    });
    // The main process answers HTTP all along.
    const server = createServer((_request, response) => response.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as { port: number };
    const { manager } = readersOver(host);
    await new Promise((resolve) => setImmediate(resolve));
    const first = utilityProcess.forked[0]!;
    if (first.pid === undefined) await once(first, 'spawn');
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'pong');
    await until(manager, () => manager.status.problem?.code === 'host-not-answering');
    assert.match(
      manager.status.problem?.message ?? '',
      /no answer from the PC\/SC host|stopped answering/,
    );
    await until(manager, () => manager.status.card?.cardId === '04A1B2C3');
    assert.ok(utilityProcess.forked.length >= 2, 'another host');
    assert.ok(
      lines.some((line) => /PC\/SC host/.test(line)),
      lines.join('\n'),
    );
  });

  test('when a card call never returns, then the card operation fails in time, the host is replaced and the reader comes back', async () => {
    const { host, utilityProcess } = supervisedHost(['hang-on-transmit'], {
      answerWithinMs: 1_000,
    });
    const { manager, events } = readersOver(host);
    await until(manager, () => manager.status.card !== null);
    await assert.rejects(
      manager.withCard((session) => session.readWallet()),
      { code: 'CardNotResponding' },
    );
    await until(manager, () => utilityProcess.forked.length >= 2 && manager.status.card !== null);
    assert.ok(
      events.some(
        (event) => event.type === 'problem' && /card call \(transmit\)/.test(event.message),
      ),
      JSON.stringify(events),
    );
  });

  test('when the host dies under a card call, then the reader problem says so and a new host takes over', async () => {
    const { host, utilityProcess } = supervisedHost(['exit-on-transmit']);
    const { manager, events } = readersOver(host);
    await until(manager, () => manager.status.card !== null);
    await assert.rejects(manager.withCard((session) => session.readWallet()));
    await until(manager, () => utilityProcess.forked.length >= 2 && manager.status.card !== null);
    assert.ok(
      events.some((event) => event.type === 'problem' && /exit code 70/.test(event.message)),
      JSON.stringify(events),
    );
  });

  test('when the main process itself stalls past the answer allowance, then the pong and the card call’s answer that arrived meanwhile count: the host is not taken for silent, not restarted', async () => {
    const { host, utilityProcess } = supervisedHost(['card'], { answerWithinMs: 500 });
    const { manager, events } = readersOver(host);
    await until(manager, () => manager.status.card !== null);
    // A busy machine, a long GC, a till waking from sleep: main runs nothing for 1.5 s just
    // after it sent a heartbeat, then a card call, while the host answers both at once; then
    // main's timers run before it reads those answers.
    const [child] = utilityProcess.forked;
    assert.ok(child);
    const send = child.postMessage.bind(child);
    const stallAfter = new Set(['ping', 'call']);
    child.postMessage = (message: { kind: string }) => {
      send(message);
      if (!stallAfter.delete(message.kind)) return;
      // In the loop's check phase: its timers come next, before the answers are read.
      setImmediate(() => {
        const until_ = Date.now() + 1_500;
        while (Date.now() < until_);
      });
    };
    while (stallAfter.has('ping')) await new Promise((resolve) => setTimeout(resolve, 10));
    // The fake card's reads hold no wallet, so the operation's own result is not this test's
    // concern (the card bound after a stall is the next test's). The supervisor must not blame
    // the host.
    await manager.withCard((session) => session.readWallet()).catch(() => undefined);
    assert.equal(stallAfter.size, 0, 'main stalled after a heartbeat and after a card call');
    // Some heartbeats more, on a loop that runs again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(utilityProcess.forked.length, 1, JSON.stringify(events));
    assert.equal(host.running, true);
    assert.deepEqual(
      events.filter((event) => event.type === 'problem' && /PC\/SC host/.test(event.message)),
      [],
    );
  });

  test('when the main process stalls past the card bound while the host brings a card call’s answer, then the operation takes that answer: no CardNotResponding', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'pcsc-host-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const answeredFile = join(folder, 'answered');
    const answered = () =>
      existsSync(answeredFile) ? Number(readFileSync(answeredFile, 'utf8')) : 0;
    const { host, utilityProcess } = supervisedHost(
      ['card'],
      {},
      { FAKE_PCSC_ANSWERED: answeredFile },
    );
    const { manager } = readersOver(host);
    await until(manager, () => manager.status.card !== null);
    const [child] = utilityProcess.forked;
    assert.ok(child);
    const send = child.postMessage.bind(child);
    let stalled = false;
    child.postMessage = (message: { kind: string; method?: string }) => {
      send(message);
      if (stalled || message.kind !== 'call' || message.method !== 'transmit') return;
      stalled = true;
      const sentAt = performance.now();
      const before = answered();
      // Once the card bound is armed (it is, by the next microtask): main runs nothing until
      // the host has sent the answer on and the bound (300 ms) is past; then its timers run
      // before it reads that answer.
      queueMicrotask(() =>
        stallUntil(() => answered() > before && performance.now() > sentAt + 400),
      );
    };
    const checked = await manager
      .withCard((card) => card.checkUid())
      .then(
        () => 'the card answered',
        (error: { code?: string }) => error.code,
      );
    assert.ok(stalled, 'main stalled after the card call');
    assert.equal(checked, 'the card answered');
    assert.equal(utilityProcess.forked.length, 1, 'the host was not restarted');
  });

  test('when the smart-card service is away, then the host answers with the binding error and stays up', async () => {
    const { host, utilityProcess } = supervisedHost(['no-service']);
    const { manager } = readersOver(host);
    await until(manager, () => manager.status.problem !== null);
    assert.equal(manager.status.problem?.code, 'service-stopped');
    assert.equal(utilityProcess.forked.length, 1, 'no restart: the host answered');
  });
});
