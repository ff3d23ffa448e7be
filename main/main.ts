// The Electron main process: a composition root. Each step is a small call that receives its
// configuration and dependencies; no business rules live here (they are in service/).
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
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
import { appLifecycle } from './app-lifecycle.ts';
import { installedAppMenu } from './app-menu.ts';
import { createIpc, senderIsWindow } from './ipc.ts';
import { HIDDEN_FLAG, setStartAtLogin } from './login-item.ts';
import { saveSettings } from './save-settings.ts';
import { setupPersonalizeIpc } from './personalize-ipc.ts';
import { serviceConfig, windowSettings, type Settings, type SettingsEdit } from './settings.ts';
import { openSettingsFile } from './settings-file.ts';
import { SettingsStore, type KeyValueStore } from './settings-store.ts';
import { setupSimulatorIpc } from './simulator-ipc.ts';
import { followService } from './status-feed.ts';
import { emptySnapshot, statusModel, type StatusSnapshot } from './status-model.ts';
import { trayUpdater } from './tray.ts';
import { createStatusWindow, revealStatusWindow, type WindowFactory } from './window.ts';

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
let trayIcon: Tray | undefined;
let tray: ReturnType<typeof trayUpdater> | undefined;
let store: SettingsStore | undefined;
let settings: Settings | undefined;

// A tray app has no Dock icon on macOS: the installed app says so in its Info.plist
// (LSUIElement, electron-builder.yml); this covers `npm run app`.
app.dock?.hide();
// Single instance, start-up, restarts and quit (main/app-lifecycle.ts); the quit handler is
// registered before anything starts.
const lifecycle = appLifecycle(app, {
  start,
  stop: shutDown,
  showWindow,
  fatal: (error) => {
    log.error(`start-up failed: ${error.stack ?? error.message}`);
    dialog.showErrorBox('Card Wallet Worker could not start', error.message);
  },
  log: (line) => log.error(line),
});

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
  if (!settings || lifecycle.quitting) return;
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
    if (lifecycle.quitting) return; // the lifecycle's stop closes it
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

/** On quit: the service, the IPC handlers, and the tray icon (Windows leaves a dead one). */
async function shutDown(): Promise<void> {
  await stopService();
  ipc.dispose();
  trayIcon?.destroy();
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

function saveFromWindow(next: SettingsEdit) {
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
    restart: () => lifecycle.queue(() => stopService().then(startService)),
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
  } else {
    revealStatusWindow(window); // a window still loading shows itself on ready-to-show
  }
  // A menu-bar app does not become the active app when its icon is clicked, so on macOS its
  // window could open behind the active app's windows.
  if (process.platform === 'darwin') app.focus({ steal: true });
}

const trayActions = {
  openWindow: showWindow,
  copyUrl: () => snapshot.service.url && clipboard.writeText(snapshot.service.url),
  setStartAtLogin: (enabled: boolean) => {
    if (!settings) return;
    // Then the tray shows what was saved (main/tray.ts: Electron ticks the box itself).
    void saveFromWindow({ ...settings, startAtLogin: enabled })
      .then((result) => {
        if (!result.ok)
          log.error(`start at login: ${result.problems.map((p) => p.message).join(' ')}`);
      })
      .catch((error: unknown) => log.error(`start at login: ${(error as Error).message}`))
      .finally(() => publish(snapshot));
  },
  quit: () => app.quit(),
};

async function start(): Promise<void> {
  // The installed app: no DevTools entry, no menu bar (main/app-menu.ts). Set after `ready`,
  // where it replaces the default menu Electron builds then.
  if (app.isPackaged) {
    const template = installedAppMenu(process.platform);
    Menu.setApplicationMenu(template && Menu.buildFromTemplate(template));
  }
  const settingsPath = join(app.getPath('userData'), 'settings.json');
  const backupPath = () => join(app.getPath('userData'), `settings.unreadable-${Date.now()}.json`);
  const firstRun = !existsSync(settingsPath);
  const file = openSettingsFile(
    () => new Store({ name: 'settings' }) as unknown as KeyValueStore,
    settingsPath,
    backupPath(),
  );
  const opened = new SettingsStore(file.store, safeStorage, (raw) =>
    writeFileSync(backupPath(), JSON.stringify(raw, null, 2)),
  );
  store = opened;
  settings = opened.load(() => `cww_${randomBytes(24).toString('base64url')}`);
  // Why the saved settings were set aside: a file that is not JSON, or settings that do not
  // decrypt or validate. The window says so and asks for the API key again.
  const recovery = file.recovery ?? opened.recovery;
  ipc.handle('status:get', () => snapshot);
  ipc.handle('settings:get', () => ({
    settings: windowSettings(settings as Settings),
    plainTextKeyStorage: opened.plainTextKeyStorage,
    recovery,
  }));
  ipc.handle('settings:save', (next) => saveFromWindow(next));
  ipc.handle('service:copy-url', () => void trayActions.copyUrl());
  setupSimulatorIpc(ipc, () => service?.simulator);
  setupPersonalizeIpc(
    ipc,
    () => service,
    (line) => log.error(line),
  );
  trayIcon = new Tray(icon('no-reader'));
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
  if (firstRun || recovery !== null || (process.platform === 'linux' && !startedHidden))
    showWindow();
  if (recovery) log.warn(`settings: ${recovery}`);
  // The tray and the window are up: the service starts as the next step, so a second launch
  // or a quit is answered while it starts (the embedded ledger takes seconds).
  void lifecycle.queue(startService);
}
