import type { Logger } from '../service/logger.ts';

/** Where updates stand, for the tray's menu and the window. */
export type UpdateStatus =
  /** No feed is configured: the app never looks for updates. */
  | { state: 'off' }
  /** A feed is set, but this copy cannot update itself (a development run). */
  | { state: 'unsupported'; message: string }
  | { state: 'checking' }
  | { state: 'up-to-date'; checkedAt: string }
  | { state: 'downloading'; version: string; percent: number | null }
  /** Downloaded and verified; installs when the operator chooses "Restart to install". */
  | { state: 'ready'; version: string }
  | { state: 'failed'; message: string; at: string };

/** The part of electron-updater's AppUpdater this uses (its platform's updater in the app). */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  logger: Pick<Logger, 'info' | 'warn' | 'error'> | null;
  setFeedURL(options: { provider: 'generic'; url: string }): void;
  checkForUpdates(): Promise<unknown>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
  on(event: 'checking-for-update', listener: () => void): unknown;
  on(event: 'update-not-available', listener: () => void): unknown;
  on(event: 'update-available', listener: (info: { version: string }) => void): unknown;
  on(event: 'download-progress', listener: (progress: { percent: number }) => void): unknown;
  on(event: 'update-downloaded', listener: (event: { version: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface UpdateCheckerOptions {
  /** Makes the platform's updater (electron-updater); called only once a feed is set. */
  createUpdater: () => UpdaterLike | Promise<UpdaterLike>;
  /** The feed (a generic electron-builder update server: latest.yml and the installers). */
  feedUrl: string | null;
  log: Logger;
  onStatus: (status: UpdateStatus) => void;
  /** How often to look again after a check; default 4 hours. */
  everyMs?: number;
}

/**
 * Looks for updates on the configured feed with electron-updater, downloads one it finds (the
 * updater checks its SHA-512 against the feed's, and on Windows its signature against the
 * installed app's publisher), and leaves it ready: a till is never restarted in the middle of a
 * sale, the operator picks "Restart to install" in the tray. Without a feed it does nothing and
 * says so ('off').
 */
export function updateChecker(options: UpdateCheckerOptions) {
  const { log, onStatus, everyMs = 4 * 60 * 60_000 } = options;
  let feedUrl = options.feedUrl;
  let status: UpdateStatus = { state: 'off' };
  let updater: UpdaterLike | undefined;
  let timer: NodeJS.Timeout | undefined;
  const set = (next: UpdateStatus) => {
    status = next;
    onStatus(status);
  };
  const failed = (error: Error) =>
    set({
      state: 'failed',
      message: error.message.split('\n')[0] ?? '',
      at: new Date().toISOString(),
    });

  async function open(): Promise<UpdaterLike> {
    if (updater) return updater;
    const created = await options.createUpdater();
    created.autoDownload = true;
    // Only on the operator's word (see above).
    created.autoInstallOnAppQuit = false;
    created.logger = {
      info: (message) => log.info(`updates: ${message}`),
      warn: (message) => log.warn(`updates: ${message}`),
      error: (message) => log.error(`updates: ${message}`),
    };
    created.on('checking-for-update', () => set({ state: 'checking' }));
    created.on('update-not-available', () =>
      set({ state: 'up-to-date', checkedAt: new Date().toISOString() }),
    );
    created.on('update-available', (info) =>
      set({ state: 'downloading', version: info.version, percent: null }),
    );
    created.on('download-progress', (progress) => {
      if (status.state === 'downloading') set({ ...status, percent: Math.round(progress.percent) });
    });
    created.on('update-downloaded', (event) => set({ state: 'ready', version: event.version }));
    created.on('error', failed);
    updater = created;
    return created;
  }

  async function checkNow(): Promise<void> {
    if (feedUrl === null || status.state === 'ready' || status.state === 'downloading') return;
    try {
      const running = await open();
      running.setFeedURL({ provider: 'generic', url: feedUrl });
      // null: the updater is inactive here (not an installed app).
      const result = (await running.checkForUpdates()) as {
        downloadPromise?: Promise<unknown> | null;
      } | null;
      // A failed download is said by the 'error' event; its promise would otherwise reject
      // unheard (an unhandled rejection in main).
      result?.downloadPromise?.catch(() => undefined);
      if (result === null)
        set({
          state: 'unsupported',
          message: 'only an installed copy of the app updates itself',
        });
    } catch (error) {
      // Also said by the updater's 'error' event; a failure to create it is said only here.
      failed(error as Error);
    }
  }

  return {
    get status(): UpdateStatus {
      return status;
    },
    /** Checks now and then every `everyMs`; nothing without a feed. */
    start(): void {
      clearInterval(timer);
      if (feedUrl === null) {
        set({ state: 'off' });
        return;
      }
      void checkNow();
      timer = setInterval(() => void checkNow(), everyMs);
      timer.unref();
    },
    /** A new feed from the settings (null: off). */
    setFeed(url: string | null): void {
      if (url === feedUrl) return;
      feedUrl = url;
      if (status.state !== 'ready') status = { state: 'off' };
      this.start();
    },
    checkNow,
    /** The operator chose "Restart to install": the app quits (the service stops first) and installs. */
    install(): boolean {
      if (status.state !== 'ready' || !updater) return false;
      updater.quitAndInstall(false, true);
      return true;
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}
