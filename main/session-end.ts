import type { BrowserWindow, BrowserWindowConstructorOptions } from 'electron';
import { lockDown, type WindowFactory } from './window.ts';

/** What Windows lists on its "apps are preventing shutdown" screen while a card operation ends. */
export const BLOCK_REASON = 'Card Wallet Worker: finishing a card operation';

export type SessionWindow = Pick<BrowserWindow, 'on' | 'setTitle' | 'showInactive' | 'webContents'>;

export interface SessionEndSteps {
  /** A card operation holds the reader now. */
  busy(): boolean;
  /** Stops the service, the embedded ledger and the PC/SC host; the app stays. */
  pause(): Promise<void>;
  /** Starts them again (the session did not end after all). */
  resume(): Promise<void>;
  /** Stops what runs and exits (the lifecycle's quit). */
  quit(): void;
  /** Exits now, whatever still runs. */
  exit(): void;
  log(line: string): void;
}

export interface SessionEndOptions {
  /** The longest a running card operation delays the end of the session. */
  maxDelayMs?: number;
  /** Without `session-end` this long after the query, the end was cancelled: resume. */
  cancelledAfterMs?: number;
}

/**
 * The hidden window that hears Windows end the session. Electron emits no `before-quit`,
 * `will-quit` or `quit` on Windows at shutdown, restart or log-off (docs/api/app.md), and
 * `powerMonitor`'s `shutdown` is Linux and macOS only: the window events `query-session-end`
 * (WM_QUERYENDSESSION) and `session-end` (WM_ENDSESSION) are the way, and they need a window
 * (shell/browser/native_window_views_win.cc). It loads no page: no preload, sandboxed, no
 * navigation, no permission, never shown unless a card operation delays the shutdown.
 */
export function sessionWindowOptions(): BrowserWindowConstructorOptions {
  return {
    show: false,
    width: 420,
    height: 120,
    skipTaskbar: true,
    title: 'Card Wallet Worker',
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      devTools: false,
      spellcheck: false,
    },
  };
}

export function createSessionWindow(Window: WindowFactory): BrowserWindow {
  const window = new Window(sessionWindowOptions());
  window.setMenu?.(null);
  lockDown(window.webContents, null);
  return window;
}

/**
 * Stops the service in time when the OS ends the session, and delays the end only while a
 * card operation runs, a few seconds at most.
 *
 * Windows: on `query-session-end` the service stops (the running card operation finishes,
 * the listener and the embedded ledger close, the PC/SC host stops). A running card operation
 * holds the shutdown: the query is refused and the window shows itself titled with the reason,
 * which Windows lists (an app with no visible window that refuses is simply terminated,
 * "Application Shutdown Changes in Windows Vista"; Electron 45 has no ShutdownBlockReasonCreate),
 * then the app exits once stopped, or after `maxDelayMs`. On `session-end` the process is
 * ended by Electron right after the event (electron/electron#52604), so nothing is started
 * there. A query answered yes but not followed by `session-end` (another app refused and the
 * user cancelled) starts the service again.
 *
 * Linux and macOS: powerMonitor's `shutdown` is delayed (logind's delay inhibitor) while the
 * app stops and quits.
 */
export function setupSessionEnd(
  host: {
    platform: NodeJS.Platform;
    window: () => SessionWindow;
    powerMonitor: {
      on(event: 'shutdown', listener: (event: { preventDefault(): void }) => void): unknown;
    };
  },
  steps: SessionEndSteps,
  options: SessionEndOptions = {},
): void {
  const { maxDelayMs = 5_000, cancelledAfterMs = 60_000 } = options;
  if (host.platform !== 'win32') {
    host.powerMonitor.on('shutdown', (event) => {
      steps.log('the system is shutting down: stopping the service');
      event.preventDefault();
      steps.quit();
    });
    return;
  }
  const window = host.window();
  let ending: { resumeTimer: NodeJS.Timeout | undefined } | undefined;
  window.on('query-session-end', (event) => {
    if (ending) return;
    const held = steps.busy();
    steps.log(
      `Windows is ending the session (${event.reasons.join(', ')}): stopping the service${held ? '; a card operation finishes first' : ''}`,
    );
    ending = { resumeTimer: undefined };
    const paused = steps
      .pause()
      .catch((error: unknown) =>
        steps.log(`stopping at the end of the session: ${(error as Error).message}`),
      );
    if (held) {
      event.preventDefault();
      window.setTitle(BLOCK_REASON);
      window.showInactive();
      const deadline = setTimeout(() => steps.exit(), maxDelayMs);
      void paused.then(() => {
        clearTimeout(deadline);
        steps.exit();
      });
      return;
    }
    const current = ending;
    current.resumeTimer = setTimeout(() => {
      if (ending !== current) return;
      ending = undefined;
      steps.log('the session did not end after all: starting the service again');
      void paused.then(() => steps.resume());
    }, cancelledAfterMs);
    current.resumeTimer.unref();
  });
  window.on('session-end', (event) => {
    clearTimeout(ending?.resumeTimer);
    steps.log(`Windows ends the session now (${event.reasons.join(', ')})`);
  });
}
