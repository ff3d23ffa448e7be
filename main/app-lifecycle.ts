import type { App } from 'electron';

/** The part of Electron's app that the lifecycle drives (tests pass test/support/electron-mock.ts). */
export type LifecycleApp = Pick<App, 'requestSingleInstanceLock' | 'whenReady' | 'exit' | 'on'>;

export interface LifecycleSteps {
  /**
   * Settings, IPC handlers and the tray; it may queue the service's start. An error here means
   * there is no tray and no window to show it in: it goes to `fatal`.
   */
  start(): Promise<void>;
  /** Stops what start and its queued steps began: the card operation, the listener, the tray. */
  stop(): Promise<void>;
  /** Brings the status window up (a second launch; macOS opening the running app again). */
  showWindow(): void;
  /** Start-up failed before the tray or the window could show why: tell the operator. */
  fatal(error: Error): void;
  log(line: string): void;
}

export interface LifecycleOptions {
  /**
   * This copy was started by an update while the old one may still be quitting: it waits for
   * the single-instance lock instead of exiting at once. AppImageUpdater starts the new
   * AppImage before the old app quits (electron-updater's AppImageUpdater.doInstall, then
   * BaseUpdater.quitAndInstall's app.quit on the next turn), so the old one still holds it.
   */
  startedByUpdate?: boolean;
  /** How long, and how often, to ask for the lock then. */
  lockRetry?: { everyMs: number; forMs: number };
}

/**
 * The tray app's life from launch to exit. One instance per user: a second launch shows the
 * first one's window and exits. Steps (the start-up, the service's start, restarts) run one
 * after another through `queue`; a quit at any moment, even during start-up, waits for the
 * running step, stops what was started, and only then exits. A failed start-up is reported and
 * the app exits 1 instead of living on invisibly, with no tray and no window.
 */
export function appLifecycle(
  app: LifecycleApp,
  steps: LifecycleSteps,
  options: LifecycleOptions = {},
) {
  const { everyMs, forMs } = options.lockRetry ?? { everyMs: 250, forMs: 30_000 };
  let quitting = false;
  let started = false;
  /** The step in progress; never rejects (each step reports its own errors). */
  let work: Promise<void> = Promise.resolve();

  function queue(task: () => Promise<void>): Promise<void> {
    const next = work.then(task);
    work = next.catch((error: unknown) => steps.log((error as Error).message));
    return next;
  }

  function shutDown(exitCode: number): void {
    if (quitting) return;
    quitting = true;
    void work
      .then(() => steps.stop())
      .catch((error: unknown) => steps.log(`stopping: ${(error as Error).message}`))
      .finally(() => app.exit(exitCode));
  }

  const lifecycle = {
    /** True from the first quit on: a step still running skips what it would start. */
    get quitting(): boolean {
      return quitting;
    },
    queue,
    /** Stops what runs, then exits 0 (the OS shutting down, where no before-quit comes). */
    quit: () => shutDown(0),
  };

  /** The lock, waited for by a copy an update started (see LifecycleOptions). */
  async function takeLock(): Promise<boolean> {
    const until = Date.now() + forMs;
    while (!app.requestSingleInstanceLock()) {
      if (!options.startedByUpdate || quitting || Date.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    return true;
  }

  if (!options.startedByUpdate && !app.requestSingleInstanceLock()) {
    quitting = true;
    app.exit(0);
    return lifecycle;
  }
  const showWindow = () => started && !quitting && steps.showWindow();
  app.on('second-instance', showWindow);
  // macOS sends `activate`, not a second launch, when the running app is opened again from
  // Finder, Launchpad or Spotlight; with no Dock icon that is the operator's way back in.
  app.on('activate', showWindow);
  app.on('window-all-closed', () => undefined); // a tray app lives on without windows
  // Registered before anything starts. The quit is always held, also a second one (another
  // click on Quit, the OS asking again): Electron must not exit while the service is closing.
  // app.exit ends the process once the stop is done and emits no further before-quit.
  app.on('before-quit', (event) => {
    event.preventDefault();
    shutDown(0);
  });

  void queue(async () => {
    if (options.startedByUpdate && !(await takeLock())) {
      steps.log('the app that was updating did not quit in time: this copy exits');
      quitting = true;
      app.exit(0);
      return;
    }
    await app.whenReady();
    if (quitting) return; // quit before ready: nothing to start
    try {
      await steps.start();
      started = true;
    } catch (error) {
      steps.fatal(error as Error);
      shutDown(1);
    }
  });
  return lifecycle;
}
