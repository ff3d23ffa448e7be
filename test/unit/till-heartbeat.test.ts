import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { TillHeartbeat, TillState } from '../../common/ledger-contract.ts';
import type { ReaderStatus } from '../../service/card/reader-manager.ts';
import {
  readerOf,
  TillHeartbeatSender,
  type TillHeartbeatState,
} from '../../service/cloud/till-heartbeat.ts';
import { memoryLogger } from '../support/memory-logger.ts';

const TILL = '3d0f1f9c-8a3e-4f5e-9d7a-2f1b6c0e4a10';

/** A ledger whose heartbeat answers the test releases one by one. */
class ScriptedLedger {
  readonly sent: { apiKey: string; heartbeat: TillHeartbeat }[] = [];
  readonly #waiting: { resolve: (till: TillState) => void; reject: (error: Error) => void }[] = [];
  #arrived: (() => void) | undefined;
  name: string | null = null;

  sendHeartbeat(apiKey: string, tillId: string, heartbeat: TillHeartbeat): Promise<TillState> {
    assert.equal(tillId, TILL);
    this.sent.push({ apiKey, heartbeat });
    this.#arrived?.();
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /**
   * Resolves once `count` heartbeats have arrived. The sender's timers do not hold the process
   * open (a till stops at once), so the wait does.
   */
  async arrivals(count: number): Promise<void> {
    const keepAlive = setInterval(() => undefined, 1_000);
    try {
      while (this.sent.length < count) {
        await new Promise<void>((resolve) => (this.#arrived = resolve));
      }
    } finally {
      clearInterval(keepAlive);
    }
  }

  answer(): void {
    const next = this.#waiting.shift();
    assert.ok(next, 'a heartbeat to answer');
    const { heartbeat } = this.sent[this.sent.length - this.#waiting.length - 1] as {
      heartbeat: TillHeartbeat;
    };
    next.resolve({
      tillId: TILL,
      name: this.name,
      firstSeenAt: '2026-01-01T00:00:00.000Z',
      lastSeenAt: '2026-01-01T00:00:00.000Z',
      version: heartbeat.version,
      reader: heartbeat.reader,
      pendingMovements: heartbeat.pendingMovements,
      waitingMovements: heartbeat.waitingMovements,
      float: null,
    });
  }

  fail(message: string): void {
    const next = this.#waiting.shift();
    assert.ok(next, 'a heartbeat to fail');
    next.reject(new Error(message));
  }

  get inFlight(): number {
    return this.#waiting.length;
  }
}

function sender(ledger: ScriptedLedger, state: { now: TillHeartbeatState }, everyMs = 3_600_000) {
  const log = memoryLogger();
  const heartbeat = new TillHeartbeatSender({
    ledger,
    tillId: TILL,
    apiKey: () => 'till-key-0123456789abcdef',
    version: '2.1.0',
    state: () => state.now,
    everyMs,
    settleMs: 1,
    log,
  });
  return { heartbeat, log };
}

const ready: TillHeartbeatState = {
  reader: { state: 'ready', name: 'ACS ACR122U', problem: null },
  pendingMovements: 0,
  waitingMovements: 0,
};

test('when the heartbeat starts, then it sends at once with the version and the state, and the answer names the till', async () => {
  const ledger = new ScriptedLedger();
  ledger.name = 'front counter';
  const { heartbeat } = sender(ledger, { now: ready });
  const answered = once(heartbeat, 'till');
  heartbeat.start();
  await ledger.arrivals(1);
  assert.deepEqual(ledger.sent[0], {
    apiKey: 'till-key-0123456789abcdef',
    heartbeat: { version: '2.1.0', ...ready },
  });
  ledger.answer();
  const [till] = (await answered) as [TillState];
  assert.equal(till.name, 'front counter');
  assert.equal(heartbeat.till?.name, 'front counter');
  heartbeat.close();
});

test('when the state changes while a heartbeat is on its way, then one more is sent once it is answered, with the state as it is then, never two at once', async () => {
  const ledger = new ScriptedLedger();
  const state = { now: ready };
  const { heartbeat } = sender(ledger, state);
  heartbeat.start();
  await ledger.arrivals(1);
  state.now = { ...ready, pendingMovements: 1 };
  heartbeat.changed();
  state.now = { ...ready, pendingMovements: 2, waitingMovements: 1 };
  heartbeat.changed();
  heartbeat.resend(); // the key changed too
  // Let the settle timer fire while the first is still on its way.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(ledger.inFlight, 1, 'never two heartbeats at once');
  ledger.answer();
  await ledger.arrivals(2);
  assert.deepEqual(
    ledger.sent.map((sent) => [sent.heartbeat.pendingMovements, sent.heartbeat.waitingMovements]),
    [
      [0, 0],
      [2, 1],
    ],
  );
  ledger.answer();
  heartbeat.close();
});

test('when nothing it says changed, then a change notice sends nothing', async () => {
  const ledger = new ScriptedLedger();
  const { heartbeat } = sender(ledger, { now: ready });
  const answered = once(heartbeat, 'till');
  heartbeat.start();
  await ledger.arrivals(1);
  ledger.answer();
  await answered;
  heartbeat.changed();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(ledger.sent.length, 1);
  heartbeat.close();
});

test('when the ledger does not take heartbeats, then it says so once per outage and again when it hears the till, and the next tick tries anew', async () => {
  const ledger = new ScriptedLedger();
  const { heartbeat, log } = sender(ledger, { now: ready }, 30);
  heartbeat.start();
  await ledger.arrivals(1);
  ledger.fail('the ledger at http://ledger did not answer');
  await ledger.arrivals(2);
  ledger.fail('the ledger at http://ledger did not answer');
  await ledger.arrivals(3);
  const answered = once(heartbeat, 'till');
  ledger.answer();
  await answered;
  heartbeat.close();
  assert.deepEqual(
    log.lines.filter((line) => line.includes('heartbeat')),
    [
      "warn heartbeat: the ledger did not take this till's heartbeat (the ledger at http://ledger did not answer); the back office will mark the till quiet until it does",
      'info heartbeat: the ledger hears this till again',
    ],
  );
});

test('when it is closed with a heartbeat on its way, then it sends no more and the late answer changes nothing', async () => {
  const ledger = new ScriptedLedger();
  ledger.name = 'back room';
  const { heartbeat, log } = sender(ledger, { now: ready }, 10);
  heartbeat.start();
  await ledger.arrivals(1);
  heartbeat.close();
  ledger.answer();
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(ledger.sent.length, 1);
  assert.equal(heartbeat.till, null);
  assert.deepEqual(log.lines, []);
});

test('when the reader manager reports its state, then the heartbeat says it as the tray does: ready with its name, no reader, PC/SC unavailable and why, stopped', () => {
  const status = (overrides: Partial<ReaderStatus>): ReaderStatus => ({
    pcsc: 'ready',
    readers: [],
    reader: null,
    card: null,
    problem: null,
    ...overrides,
  });
  assert.deepEqual(readerOf(status({ reader: 'ACS ACR122U' })), {
    state: 'ready',
    name: 'ACS ACR122U',
    problem: null,
  });
  assert.deepEqual(
    readerOf(status({ problem: { code: 'card-unreadable', message: 'x', at: new Date() } })),
    { state: 'no-reader', name: null, problem: null },
  );
  assert.deepEqual(
    readerOf(
      status({
        pcsc: 'unavailable',
        problem: { code: 'service-stopped', message: 'x', at: new Date() },
      }),
    ),
    { state: 'unavailable', name: null, problem: 'service-stopped' },
  );
  assert.deepEqual(readerOf(status({ pcsc: 'stopped' })), {
    state: 'stopped',
    name: null,
    problem: null,
  });
});
