// The Electron main process: a composition root. Each step is a small call that receives its
// configuration and dependencies; no business rules live here (they are in service/).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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
import { parseConfig } from '../service/config.ts';
import { stderrLogger } from '../service/logger.ts';
import { startWorkerService, type WorkerService } from '../service/worker-service.ts';
import { createIpc, senderIsWindow } from './ipc.ts';
import { saveSettings } from './save-settings.ts';
import type { Settings } from './settings.ts';
import { SettingsStore, type KeyValueStore } from './settings-store.ts';
import { followService } from './status-feed.ts';
import { emptySnapshot, statusModel, type StatusSnapshot } from './status-model.ts';
import { updateTray } from './tray.ts';
import { createStatusWindow, type WindowFactory } from './window.ts';

const log = stderrLogger((line) => process.stderr.write(line));
const root = app.getAppPath();
const pageFile = join(root, 'renderer', 'index.html');
const pageUrl = pathToFileURL(pageFile).href;
const preload = join(root, 'dist', 'main', 'preload.cjs');
const icon = (state: string) =>
  nativeImage.createFromPath(join(root, 'main', 'assets', `tray-${state}.png`));

// A second launch focuses the first and exits 0.
if (!app.requestSingleInstanceLock()) {
  app.exit(0);
} else {
  app.on('second-instance', () => showWindow());
  app.on('window-all-closed', () => undefined); // a tray app lives on without windows
  void app.whenReady().then(start);
}

let window: BrowserWindow | undefined;
let service: WorkerService | undefined;
let feed: ReturnType<typeof followService> | undefined;
let snapshot: StatusSnapshot = emptySnapshot();
let tray: Tray | undefined;
let quitting = false;

const store = new SettingsStore(
  new Store({ name: 'settings' }) as unknown as KeyValueStore,
  safeStorage,
);
let settings: Settings;

const ipc = createIpc(
  ipcMain,
  senderIsWindow(() => window?.webContents, pageUrl),
  (line) => log.warn(line),
);

function publish(next: StatusSnapshot): void {
  snapshot = next;
  if (tray)
    updateTray(
      { tray, icon, buildMenu: (template) => Menu.buildFromTemplate(template) },
      snapshot,
      settings.startAtLogin,
      trayActions,
    );
  if (window) ipc.push(window.webContents, 'status:changed', snapshot);
}

async function startService(): Promise<void> {
  const config = parseConfig({
    port: settings.port,
    apiKey: settings.apiKey,
    allowedOrigins: settings.allowedOrigins,
    reader: settings.reader ?? undefined,
    cardKey: settings.cardKey,
    cardKeyType: settings.cardKeyType,
    walletSector: settings.walletSector,
    cloudUrl: settings.cloudUrl ?? undefined,
    dataDir: join(app.getPath('userData'), 'service'),
  });
  try {
    service = await startWorkerService({
      config,
      log,
      pcscdSocket:
        process.platform === 'linux'
          ? (process.env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm')
          : undefined,
    });
    feed = followService(service, snapshot, publish);
    publish(feed.snapshot());
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? `port ${settings.port} is in use`
        : (error as Error).message;
    publish(statusModel.service(snapshot, { url: null, state: 'error', error: reason }));
  }
}

async function stopService(): Promise<void> {
  feed?.stop();
  await service?.close(); // the running card operation finishes, the listener closes
  service = undefined;
}

function saveFromWindow(next: Settings) {
  return saveSettings(settings, next, {
    service,
    persist: (saved) => {
      store.save(saved);
      settings = saved;
      app.setLoginItemSettings({ openAtLogin: saved.startAtLogin });
    },
    restart: async () => {
      await stopService();
      await startService();
    },
  });
}

function showWindow(): void {
  if (!window || window.isDestroyed()) {
    window = createStatusWindow(
      BrowserWindow as unknown as WindowFactory,
      preload,
      pageFile,
      pageUrl,
    );
    window.on('closed', () => (window = undefined));
  }
  window.show();
  window.focus();
}

const trayActions = {
  openWindow: showWindow,
  copyUrl: () => snapshot.service.url && clipboard.writeText(snapshot.service.url),
  setStartAtLogin: (enabled: boolean) =>
    void saveFromWindow({ ...settings, startAtLogin: enabled }),
  quit: () => app.quit(),
};

async function start(): Promise<void> {
  settings = store.load(() => `cww_${randomBytes(24).toString('base64url')}`);
  ipc.handle('status:get', () => snapshot);
  ipc.handle('settings:get', () => ({ settings, plainTextKeyStorage: store.plainTextKeyStorage }));
  ipc.handle('settings:save', (next) => saveFromWindow(next));
  ipc.handle('service:copy-url', () => void trayActions.copyUrl());
  tray = new Tray(icon('no-reader'));
  tray.on('click', showWindow);
  await startService();
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    void stopService().finally(() => {
      ipc.dispose();
      app.exit(0);
    });
  });
}
