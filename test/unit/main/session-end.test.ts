import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { appLifecycle } from '../../../main/app-lifecycle.ts';
import {
  BLOCK_REASON,
  createSessionWindow,
  setupSessionEnd,
  type SessionEndSteps,
  type SessionWindow,
} from '../../../main/session-end.ts';
import type { WindowFactory } from '../../../main/window.ts';
import { FakeApp, FakeBrowserWindow } from '../../support/electron-mock.ts';

const settle = () => new Promise((resolve) => setImmediate(resolve));
const until = async (condition: () => boolean) => {
  while (!condition()) await settle();
};

/** The tray app over a FakeApp: its lifecycle, and the session-end handling main/ sets up. */
async function tray(
  platform: NodeJS.Platform,
  options: { busy?: () => boolean; stop?: () => Promise<void>; withSessionEnd?: boolean } = {},
) {
  FakeBrowserWindow.created = [];
  const app = new FakeApp(platform);
  const events: string[] = [];
  const stopService = options.stop ?? (async () => void events.push('service stopped'));
  const lifecycle = appLifecycle(app as never, {
    start: async () => void events.push('started'),
    stop: async () => {
      events.push('lifecycle stop');
      await stopService();
    },
    showWindow: () => undefined,
    fatal: () => undefined,
    log: () => undefined,
  });
  app.becomeReady();
  await settle();
  let window: FakeBrowserWindow | undefined;
  const steps: SessionEndSteps = {
    busy: options.busy ?? (() => false),
    pause: async () => {
      events.push('pause');
      await stopService();
    },
    resume: async () => void events.push('service started again'),
    quit: () => lifecycle.quit(),
    exit: () => app.exit(0),
    log: (line) => void events.push(`log: ${line}`),
  };
  if (options.withSessionEnd !== false)
    setupSessionEnd(
      {
        platform,
        window: () => {
          window = createSessionWindow(FakeBrowserWindow as unknown as WindowFactory) as never;
          return window as unknown as SessionWindow;
        },
        powerMonitor: app.powerMonitor,
      },
      steps,
      { maxDelayMs: 50, cancelledAfterMs: 50 },
    );
  return { app, events, window: () => window };
}

describe('the end of the session (shutdown, restart, log-off)', () => {
  test('when Windows ends the session and only a quit handler listens (the tray window closed), then nothing stops the service: Windows sends no before-quit', async () => {
    const { app, events } = await tray('win32', { withSessionEnd: false });
    const ending = app.endSession();
    ending.end();
    assert.deepEqual(events, ['started']);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false, killed: true });
  });

  test('when Windows asks to end the session, then the hidden window hears it and the service stops before the session ends', async () => {
    const { app, events, window } = await tray('win32');
    assert.equal(window()?.shown, false, 'the window stays hidden');
    const ending = app.endSession(['logoff']);
    assert.equal(ending.refused, false, 'nothing runs: the session may end');
    await settle();
    ending.end();
    assert.deepEqual(
      events.filter((line) => !line.startsWith('log:')),
      ['started', 'pause', 'service stopped'],
    );
    assert.ok(events.some((line) => /Windows is ending the session \(logoff\)/.test(line)));
  });

  test('when a card operation runs as Windows asks, then the end is refused with the reason shown, and the app exits as soon as the service stopped', async () => {
    let finish!: () => void;
    const stopped = new Promise<void>((resolve) => (finish = resolve));
    const { app, events, window } = await tray('win32', {
      busy: () => true,
      stop: async () => {
        await stopped;
        events.push('service stopped');
      },
    });
    const ending = app.endSession();
    assert.equal(ending.refused, true);
    assert.deepEqual(
      { shown: window()?.shown, title: window()?.title },
      {
        shown: true,
        title: BLOCK_REASON,
      },
    );
    await settle();
    assert.equal(app.exited, undefined, 'held while the card operation finishes');
    finish();
    await until(() => app.exited !== undefined);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
    assert.ok(events.includes('service stopped'));
  });

  test('when the card operation does not finish within the delay, then the app exits anyway: a shutdown is held a few seconds at most', async () => {
    const { app } = await tray('win32', { busy: () => true, stop: () => new Promise(() => {}) });
    assert.equal(app.endSession().refused, true);
    await until(() => app.exited !== undefined);
    assert.deepEqual(app.exited, { code: 0, viaQuit: false });
  });

  test('when the session does not end after all (another app refused, the user cancelled), then the service starts again', async () => {
    const { app, events } = await tray('win32');
    app.endSession();
    await until(() => events.includes('service started again'));
    assert.equal(app.exited, undefined);
  });

  for (const platform of ['linux', 'darwin'] as const) {
    test(`when ${platform} shuts down, then the shutdown is delayed while the app stops, and it exits 0`, async () => {
      const { app, events } = await tray(platform);
      const ending = app.endSession();
      assert.equal(ending.refused, true);
      await until(() => app.exited !== undefined);
      assert.deepEqual(app.exited, { code: 0, viaQuit: false });
      assert.deepEqual(
        events.filter((line) => !line.startsWith('log:')),
        ['started', 'lifecycle stop', 'service stopped'],
      );
    });
  }

  test('when created, then the session window is hidden, out of the taskbar, sandboxed, without a preload or DevTools, and goes nowhere', () => {
    FakeBrowserWindow.created = [];
    const window = createSessionWindow(
      FakeBrowserWindow as unknown as WindowFactory,
    ) as never as FakeBrowserWindow;
    const prefs = window.options.webPreferences as Record<string, unknown>;
    assert.deepEqual(
      {
        show: window.options.show,
        skipTaskbar: window.options.skipTaskbar,
        sandbox: prefs.sandbox,
        contextIsolation: prefs.contextIsolation,
        nodeIntegration: prefs.nodeIntegration,
        preload: prefs.preload,
        devTools: prefs.devTools,
      },
      {
        show: false,
        skipTaskbar: true,
        sandbox: true,
        contextIsolation: true,
        nodeIntegration: false,
        preload: undefined,
        devTools: false,
      },
    );
    assert.equal(window.loaded, undefined, 'no page');
    assert.equal(window.webContents.navigate('will-navigate', 'file:///etc/passwd'), true);
    assert.equal(window.webContents.windowOpenHandler?.({ url: 'https://x' }).action, 'deny');
  });
});
