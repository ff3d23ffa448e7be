// The Electron main process: a composition root. Each step is a small call that receives its
// configuration and dependencies; no business rules live here (they are in service/).
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  app,
  BrowserWindow,
  clipboard,
  ipcMain,
  Menu,
  nativeImage,
  safeStorage,
  Tray,
} from 'electron';
import Store from 'electron-store';
import { smartCardServiceProbe } from '../service/card/pcscd-probe.ts';
import { parseConfig } from '../service/config.ts';
import { stderrLogger } from '../service/logger.ts';
import { startWorkerService, type WorkerService } from '../service/worker-service.ts';
import { createIpc, senderIsWindow } from './ipc.ts';
import { HIDDEN_FLAG, setStartAtLogin } from './login-item.ts';
import { saveSettings } from './save-settings.ts';
import { serviceConfig, type Settings } from './settings.ts';
import { SettingsStore, type KeyValueStore } from './settings-store.ts';
import { setupSimulatorIpc } from './simulator-ipc.ts';
import { followService } from './status-feed.ts';
import { emptySnapshot, statusModel, type StatusSnapshot } from './status-model.ts';
import { trayUpdater } from './tray.ts';
import { createStatusWindow, type WindowFactory } from './window.ts';

const log = stderrLogger((line) => process.stderr.write(line));
const root = app.getAppPath();
const pageFile = join(root, 'renderer', 'index.html');
const preload = join(root, 'dist', 'main', 'preload.cjs');
const icon = (state: string) =>
  nativeImage.createFromPath(join(root, 'main', 'assets', `tray-${state}.png`));
const startedHidden = process.argv.includes(HIDDEN_FLAG);

let window: BrowserWindow | undefined;
let service: WorkerService | undefined;
let feed: ReturnType<typeof followService> | undefined;
let snapshot: StatusSnapshot = emptySnapshot();
let tray: ReturnType<typeof trayUpdater> | undefined;
let store: SettingsStore | undefined;
let settings: Settings | undefined;
/** The start-up (or a restart) in progress; quitting waits for it, then stops what it started. */
let starting: Promise<void> = Promise.resolve();
let quitting = false;

// A second launch focuses the first and exits 0.
if (!app.requestSingleInstanceLock()) {
  app.exit(0);
} else {
  app.on('second-instance', () => showWindow());
  app.on('window-all-closed', () => undefined); // a tray app lives on without windows
  // Registered before anything starts: a quit during start-up (from the OS, an installer, a
  // log-off) still closes the listener and the PC/SC context before the process exits.
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    void starting
      .catch(() => undefined)
      .then(stopService)
      .catch((error: unknown) => log.error(`stopping: ${(error as Error).message}`))
      .finally(() => {
        ipc.dispose();
        app.exit(0);
      });
  });
  // A tray app has no Dock icon on macOS (it lives in the menu bar).
  app.dock?.hide();
  starting = app.whenReady().then(start);
}

const ipc = createIpc(
  ipcMain,
  senderIsWindow(() => window?.webContents, pageFile),
  (line) => log.warn(line),
);

function publish(next: StatusSnapshot): void {
  snapshot = next;
  tray?.update(snapshot, settings?.startAtLogin ?? false);
  if (window) ipc.push(window.webContents, 'status:changed', snapshot);
}

/** A start-up problem: in the tray, in the window (opened for it), and in the log. */
function startupError(reason: string): void {
  log.error(`start-up: ${reason}`);
  publish(statusModel.service(snapshot, { url: null, state: 'error', error: reason }));
  showWindow();
}

async function startService(): Promise<void> {
  if (!settings || quitting) return;
  try {
    // Inside the try: settings the window accepted always parse (one schema), but settings
    // from an older version or a hand-edited file must show an error, not stop the start.
    const config = parseConfig(serviceConfig(settings, join(app.getPath('userData'), 'service')));
    const keys = store;
    service = await startWorkerService({
      config,
      log,
      serviceProbe: smartCardServiceProbe(process.platform),
      // Replaced keys live where the current key does (safeStorage), until released.
      earlierKeys: keys && {
        keys: keys.earlierApiKeys,
        release: (apiKey) => keys.releaseEarlierKey(apiKey),
      },
    });
    if (quitting) return; // before-quit waits on `starting` and then stops it
    feed = followService(service, snapshot, publish);
    publish(feed.snapshot());
  } catch (error) {
    startupError(
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? `port ${settings.port} is in use by another program; choose another port`
        : (error as Error).message,
    );
  }
}

async function stopService(): Promise<void> {
  feed?.stop();
  feed = undefined;
  const running = service;
  service = undefined;
  await running?.close(); // the running card operation finishes, the listener closes
}

function applyStartAtLogin(enabled: boolean): void {
  void setStartAtLogin(
    {
      platform: process.platform,
      setLoginItemSettings: (options) => app.setLoginItemSettings(options),
      executable: process.env.APPIMAGE ?? process.execPath,
      configHome: process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'),
    },
    enabled,
  ).catch((error: unknown) => log.warn(`start at login: ${(error as Error).message}`));
}

function saveFromWindow(next: Settings) {
  const current = settings;
  const target = store;
  if (!current || !target) return Promise.resolve({ ok: false as const, problems: [] });
  return saveSettings(current, next, {
    service,
    persist: (saved) => {
      target.save(saved);
      settings = saved;
      if (saved.startAtLogin !== current.startAtLogin) applyStartAtLogin(saved.startAtLogin);
    },
    restart: async () => {
      const restart = starting.then(stopService).then(startService);
      starting = restart.catch(() => undefined);
      await restart;
    },
  });
}

function showWindow(): void {
  if (!window || window.isDestroyed()) {
    window = createStatusWindow(
      BrowserWindow as unknown as WindowFactory,
      preload,
      pageFile,
      !app.isPackaged,
    );
    window.on('closed', () => (window = undefined));
    return; // it shows itself on ready-to-show: no blank flash
  }
  window.show();
  window.focus();
}

const trayActions = {
  openWindow: showWindow,
  copyUrl: () => snapshot.service.url && clipboard.writeText(snapshot.service.url),
  setStartAtLogin: (enabled: boolean) =>
    void (settings && saveFromWindow({ ...settings, startAtLogin: enabled })),
  quit: () => app.quit(),
};

/**
 * Opens the settings file. A file that is not JSON makes electron-store throw in its
 * constructor; it is moved aside (kept for support) and a fresh one is used.
 */
function openSettingsFile(): KeyValueStore {
  try {
    return new Store({ name: 'settings' }) as unknown as KeyValueStore;
  } catch (error) {
    const file = join(app.getPath('userData'), 'settings.json');
    const backup = join(app.getPath('userData'), `settings.unreadable-${Date.now()}.json`);
    if (existsSync(file)) renameSync(file, backup);
    log.error(`settings: ${(error as Error).message}; moved to ${backup}`);
    return new Store({ name: 'settings' }) as unknown as KeyValueStore;
  }
}

async function start(): Promise<void> {
  const firstRun = !existsSync(join(app.getPath('userData'), 'settings.json'));
  const file = openSettingsFile();
  const opened = new SettingsStore(file, safeStorage, (raw) => {
    const backup = join(app.getPath('userData'), `settings.unreadable-${Date.now()}.json`);
    writeFileSync(backup, JSON.stringify(raw, null, 2));
  });
  store = opened;
  settings = opened.load(() => `cww_${randomBytes(24).toString('base64url')}`);
  ipc.handle('status:get', () => snapshot);
  ipc.handle('settings:get', () => ({
    settings: settings as Settings,
    plainTextKeyStorage: opened.plainTextKeyStorage,
    recovery: opened.recovery,
  }));
  ipc.handle('settings:save', (next) => saveFromWindow(next));
  ipc.handle('service:copy-url', () => void trayActions.copyUrl());
  setupSimulatorIpc(ipc, () => service?.simulator);
  const trayIcon = new Tray(icon('no-reader'));
  tray = trayUpdater(
    { tray: trayIcon, icon, buildMenu: (template) => Menu.buildFromTemplate(template) },
    trayActions,
  );
  trayIcon.on('click', showWindow);
  if (process.platform === 'darwin') trayIcon.on('right-click', () => tray?.popUpMenu());
  publish(snapshot);
  // The window opens on a first run (the key to copy into the POS), when settings had to be
  // recovered, and on Linux whenever the app is started by hand: GNOME without the
  // AppIndicator extension shows no tray icon, so the window is the only way in there.
  if (firstRun || opened.recovery !== null || (process.platform === 'linux' && !startedHidden))
    showWindow();
  if (opened.recovery) log.warn(`settings: ${opened.recovery}`);
  await startService();
}
