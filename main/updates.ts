import type { Logger } from '../service/logger.ts';
import {
  installDue,
  installWhenText,
  type InstallPolicy,
  type TillActivity,
} from './install-window.ts';

/** Where updates stand, for the tray's menu and the window. */
export type UpdateStatus =
  /** No feed is configured: the app never looks for updates. */
  | { state: 'off' }
  /** A feed is set, but this copy cannot update itself (a development run). */
  | { state: 'unsupported'; message: string }
  | { state: 'checking' }
  | { state: 'up-to-date'; checkedAt: string }
  | { state: 'downloading'; version: string; percent: number | null }
  /**
   * Downloaded and verified; installs when the operator chooses "Restart to install", or by
   * itself as `installs` says (null: only on the operator's word).
   */
  | { state: 'ready'; version: string; installs: string | null }
  /** The service is stopping (the card operation finishes first), then the installer runs. */
  | { state: 'installing'; version: string }
  | { state: 'failed'; message: string; at: string };

/** The part of electron-updater's AppUpdater this uses (its platform's updater in the app). */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  autoRunAppAfterInstall: boolean;
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
  /** AppImageUpdater: the new AppImage was moved to a name of its own (with its version). */
  on(event: 'appimage-filename-updated', listener: (path: string) => void): unknown;
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
  /**
   * Stops the service core before the installer starts: the running card operation finishes,
   * the listener and the embedded ledger close, the PC/SC host stops. Movements waiting for
   * their card stay in the journal. On Windows the installer stops every process of the app
   * by force about 1.3 s after it starts (electron-builder's allowOnlyOneInstallerInstance.nsh,
   * _CHECK_APP_RUNNING with --updated), so nothing may still be closing by then.
   */
  stopService: () => Promise<void>;
  /** Starts the service again when the installer could not be started. */
  resumeService: () => Promise<void>;
  /** Why this copy cannot replace its own files (an install for all users), or null. */
  cannotInstall?: () => string | null;
  /** When a ready update installs by itself (default: on the operator's word only). */
  policy?: InstallPolicy;
  /** What the till is doing, for `policy`. */
  activity?: TillActivity;
  /** How often a ready update looks whether its time has come; default a minute. */
  policyEveryMs?: number;
  now?: () => Date;
  /** The AppImage was renamed by the update (its new path, e.g. for the autostart entry). */
  onAppImageMoved?: (path: string) => void;
}

const idle: TillActivity = { busy: () => false, lastActivityAt: () => 0 };

/**
 * Looks for updates on the configured feed with electron-updater, downloads one it finds (the
 * updater checks its SHA-512 against the feed's, and on Windows its signature against the
 * installed app's publisher), and leaves it ready: a till is never restarted in the middle of a
 * sale. It installs when the operator picks "Restart to install", or at the time the shop chose
 * (`policy`), never while a card operation runs; the service is stopped first. Without a feed
 * it does nothing and says so ('off').
 */
export function updateChecker(options: UpdateCheckerOptions) {
  const { log, onStatus, everyMs = 4 * 60 * 60_000, policyEveryMs = 60_000 } = options;
  const now = options.now ?? (() => new Date());
  let feedUrl = options.feedUrl;
  let policy: InstallPolicy = options.policy ?? { when: 'operator' };
  let status: UpdateStatus = { state: 'off' };
  let updater: UpdaterLike | undefined;
  let timer: NodeJS.Timeout | undefined;
  let policyTimer: NodeJS.Timeout | undefined;
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
    // Only on the operator's word or at the shop's time (see above), and never on a quit: a
    // quit at shutdown must not start an installer that Windows then kills half way.
    created.autoInstallOnAppQuit = false;
    // The installed app starts again after the installer (NSIS --force-run; a new AppImage).
    created.autoRunAppAfterInstall = true;
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
    created.on('update-downloaded', (event) =>
      set({ state: 'ready', version: event.version, installs: installWhenText(policy) }),
    );
    created.on('error', failed);
    created.on('appimage-filename-updated', (path) => options.onAppImageMoved?.(path));
    updater = created;
    return created;
  }

  async function checkNow(): Promise<void> {
    if (feedUrl === null || ['ready', 'downloading', 'installing'].includes(status.state)) return;
    const refused = options.cannotInstall?.() ?? null;
    if (refused !== null) {
      // Nothing is downloaded that could only be installed by an administrator: the installer
      // would start after the app quit, fail to elevate, and leave the till with no service.
      set({ state: 'unsupported', message: refused });
      return;
    }
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

  /**
   * Stops the service, then hands over to the installer (which quits the app). Should the
   * installer not start, the service starts again and the update stays ready.
   */
  async function install(): Promise<boolean> {
    if (status.state !== 'ready' || !updater) return false;
    const ready = status;
    set({ state: 'installing', version: ready.version });
    try {
      await options.stopService();
    } catch (error) {
      log.warn(`updates: stopping the service before the update: ${(error as Error).message}`);
    }
    log.info(`updates: installing ${ready.version}; the service has stopped`);
    // BaseUpdater.quitAndInstall starts the installer (or the new AppImage) synchronously, then
    // quits the app on the next turn; a failure to start it is said by an 'error' event, here.
    updater.quitAndInstall(false, true);
    // Read again: the updater's 'error' listener may have changed it during the call.
    const after = (): UpdateStatus['state'] => status.state;
    if (after() === 'installing') return true;
    await options.resumeService();
    if (after() === 'failed') set({ ...ready });
    return false;
  }

  /** A ready update whose time has come (the shop's policy) installs; never mid-operation. */
  function installIfDue(): void {
    if (status.state === 'ready' && installDue(policy, options.activity ?? idle, now()))
      void install();
  }

  return {
    get status(): UpdateStatus {
      return status;
    },
    /** Checks now and then every `everyMs`; nothing without a feed. */
    start(): void {
      clearInterval(timer);
      clearInterval(policyTimer);
      if (feedUrl === null) {
        set({ state: 'off' });
        return;
      }
      void checkNow();
      timer = setInterval(() => void checkNow(), everyMs);
      timer.unref();
      policyTimer = setInterval(installIfDue, policyEveryMs);
      policyTimer.unref();
    },
    /** When a ready update installs by itself, from the settings. */
    setPolicy(next: InstallPolicy): void {
      policy = next;
      if (status.state === 'ready') set({ ...status, installs: installWhenText(policy) });
    },
    installIfDue,
    /** A new feed from the settings (null: off). */
    setFeed(url: string | null): void {
      if (url === feedUrl) return;
      feedUrl = url;
      if (status.state !== 'ready') status = { state: 'off' };
      this.start();
    },
    checkNow,
    /** The operator chose "Restart to install": the service stops, the app quits and installs. */
    install,
    stop(): void {
      clearInterval(timer);
      clearInterval(policyTimer);
    },
  };
}
