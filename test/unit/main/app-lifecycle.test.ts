import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { appLifecycle, type LifecycleSteps } from '../../../main/app-lifecycle.ts';
import { FakeApp } from '../../support/electron-mock.ts';

/** A step that runs until the test lets it finish. */
function pending() {
  let finish: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The lifecycle over a FakeApp, recording each step in order. */
function run(overrides: Partial<LifecycleSteps> = {}) {
  const app = new FakeApp('win32');
  const events: string[] = [];
  const steps: LifecycleSteps = {
    start: async () => void events.push('start'),
    stop: async () => void events.push('stop'),
    showWindow: () => void events.push('window'),
    fatal: (error) => void events.push(`fatal: ${error.message}`),
    log: (line) => void events.push(`log: ${line}`),
    ...overrides,
  };
  const lifecycle = appLifecycle(app as never, steps);
  return { app, events, lifecycle };
}

describe('the app lifecycle', () => {
  test('when the app is quit during start-up, then it waits for the start, stops, and only then exits 0', async () => {
    const starting = pending();
    const { app, events } = run({
      start: async () => {
        events.push('start');
        await starting.promise;
        events.push('started');
      },
    });
    app.becomeReady();
    await settle();
    app.quit();
    await settle();
    assert.equal(app.exited, undefined, 'still starting: no exit yet');
    starting.finish();
    await settle();
    assert.deepEqual(events, ['start', 'started', 'stop']);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
  });

  test('when Quit is chosen again while the service is closing, then Electron is held until the stop is done', async () => {
    const stopping = pending();
    const { app, events } = run({
      stop: async () => {
        events.push('stop');
        await stopping.promise;
        events.push('stopped');
      },
    });
    app.becomeReady();
    await settle();
    app.quit();
    await settle();
    app.quit(); // the operator clicks Quit again, or the OS asks again
    assert.equal(app.exited, undefined, `the second quit ended the process: ${events.join(', ')}`);
    stopping.finish();
    await settle();
    assert.deepEqual(events, ['start', 'stop', 'stopped']);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
  });

  test('when the app is quit before Electron is ready, then nothing is started and it exits 0', async () => {
    const { app, events } = run();
    app.quit();
    app.becomeReady();
    await settle();
    assert.deepEqual(events, ['stop']);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
  });

  test('when start-up fails before the tray exists, then the operator is told and the app exits 1 instead of running invisibly', async () => {
    const { app, events } = run({
      start: async () => {
        throw new Error("EACCES: permission denied, open '/home/till/.config/settings.json'");
      },
    });
    app.becomeReady();
    await settle();
    assert.deepEqual(events, [
      "fatal: EACCES: permission denied, open '/home/till/.config/settings.json'",
      'stop',
    ]);
    assert.deepEqual(app.exited, { code: 1, viaQuit: false });
  });

  test('when steps are queued (a restart), then a quit waits for them and later steps see it', async () => {
    const restarting = pending();
    const { app, events, lifecycle } = run();
    app.becomeReady();
    await settle();
    void lifecycle.queue(async () => {
      events.push('restart');
      await restarting.promise;
      events.push(lifecycle.quitting ? 'restart sees the quit' : 'restart goes on');
    });
    await settle();
    app.quit();
    restarting.finish();
    await settle();
    assert.deepEqual(events, ['start', 'restart', 'restart sees the quit', 'stop']);
  });

  test('when another instance runs, then this one exits 0 at once and starts nothing', async () => {
    const app = new FakeApp('win32');
    app.otherInstanceRunning = true;
    const events: string[] = [];
    appLifecycle(app as never, {
      start: async () => void events.push('start'),
      stop: async () => void events.push('stop'),
      showWindow: () => void events.push('window'),
      fatal: () => undefined,
      log: () => undefined,
    });
    app.becomeReady();
    await settle();
    assert.deepEqual(events, []);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
  });

  test('when an update started this copy while the old one still quits, then it waits for the lock and starts once the old one is gone', async () => {
    const app = new FakeApp('linux');
    app.otherInstanceRunning = true;
    const events: string[] = [];
    appLifecycle(
      app as never,
      {
        start: async () => void events.push('start'),
        stop: async () => void events.push('stop'),
        showWindow: () => undefined,
        fatal: () => undefined,
        log: (line) => void events.push(`log: ${line}`),
      },
      { startedByUpdate: true, lockRetry: { everyMs: 1, forMs: 60_000 } },
    );
    app.becomeReady();
    // Until it asked three times, or gave up (exited): a condition, not a time.
    while (app.lockRequests < 3 && app.exited === undefined)
      await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(app.exited, undefined, 'it waits instead of exiting');
    assert.deepEqual(events, [], 'nothing starts while the old copy holds the lock');
    app.otherInstanceRunning = false; // the old copy has exited
    while (events.length === 0 && app.exited === undefined)
      await new Promise((resolve) => setTimeout(resolve, 1));
    assert.deepEqual(events, ['start']);
    assert.equal(app.exited, undefined);
  });

  test('when an update started this copy and the old one never lets go, then it exits 0 after the wait, having started nothing', async () => {
    const app = new FakeApp('linux');
    app.otherInstanceRunning = true;
    const events: string[] = [];
    appLifecycle(
      app as never,
      {
        start: async () => void events.push('start'),
        stop: async () => void events.push('stop'),
        showWindow: () => undefined,
        fatal: () => undefined,
        log: (line) => void events.push(`log: ${line}`),
      },
      { startedByUpdate: true, lockRetry: { everyMs: 1, forMs: 20 } },
    );
    app.becomeReady();
    while (app.exited === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
    assert.ok(!events.includes('start'));
    assert.ok(app.lockRequests > 1);
  });

  test('when the app is launched again or re-opened on macOS, then the window shows (once started)', async () => {
    const { app, events } = run();
    app.emit('second-instance');
    assert.deepEqual(events, [], 'nothing to show before the start');
    app.becomeReady();
    await settle();
    app.emit('second-instance');
    app.emit('activate');
    assert.deepEqual(events, ['start', 'window', 'window']);
  });
});
