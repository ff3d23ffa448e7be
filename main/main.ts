// The Electron main process: a composition root. Each step is a small call that receives its
// configuration and dependencies; no business rules live here (they are in service/).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
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
  powerMonitor,
  safeStorage,
  shell,
  Tray,
  utilityProcess,
} from 'electron';
import Store from 'electron-store';
import { smartCardServiceProbe } from '../service/card/pcscd-probe.ts';
import { parseConfig } from '../service/config.ts';
import { lineLogger, type Logger } from '../service/logger.ts';
import { startWorkerService, type WorkerService } from '../service/worker-service.ts';
import { APP_USER_MODEL_ID, trayIconFile } from './app-identity.ts';
import { appLifecycle } from './app-lifecycle.ts';
import { openAppLog } from './app-log.ts';
import { installedAppMenu } from './app-menu.ts';
import type { ActionResult } from './ipc-contract.ts';
import { createIpc, senderIsWindow } from './ipc.ts';
import { canWriteFolder, updateBlocker } from './install-scope.ts';
import { HIDDEN_FLAG, setStartAtLogin } from './login-item.ts';
import { PcscHost } from './pcsc-host-client.ts';
import { watchProcesses } from './process-watch.ts';
import { saveSettings } from './save-settings.ts';
import { asyncSecretBox } from './secret-box.ts';
import { createSessionWindow, setupSessionEnd } from './session-end.ts';
import { setupCardActionsIpc } from './card-actions-ipc.ts';
import { tillActivity } from './install-window.ts';
import { platformUpdater } from './platform-updater.ts';
import {
  installPolicy,
  serviceConfig,
  windowSettings,
  type Settings,
  type SettingsEdit,
} from './settings.ts';
import { openSettingsFile } from './settings-file.ts';
import { SettingsStore, type KeyValueStore } from './settings-store.ts';
import { setupSimulatorIpc } from './simulator-ipc.ts';
import { fixSmartCardService } from './smart-card-service.ts';
import { followService } from './status-feed.ts';
import { emptySnapshot, statusModel, type Notice, type StatusSnapshot } from './status-model.ts';
import { trayUpdater } from './tray.ts';
import type { TrayState } from './tray-state.ts';
import { updateChecker } from './updates.ts';
import { createStatusWindow, revealStatusWindow, type WindowFactory } from './window.ts';

const root = app.getAppPath();
const pageFile = join(root, 'renderer', 'index.html');
const preload = join(root, 'dist', 'main', 'preload.cjs');
const icon = (state: TrayState) =>
  nativeImage.createFromPath(trayIconFile(join(root, 'main', 'assets'), state, process.platform));
const startedHidden = process.argv.includes(HIDDEN_FLAG);
/** The PC/SC host's name in the OS's task manager and in child-process-gone. */
const PCSC_HOST_NAME = 'Card Wallet Worker PC/SC';

let window: BrowserWindow | undefined;
let service: WorkerService | undefined;
let feed: ReturnType<typeof followService> | undefined;
let snapshot: StatusSnapshot = emptySnapshot();
let trayIcon: Tray | undefined;
let tray: ReturnType<typeof trayUpdater> | undefined;
let store: SettingsStore | undefined;
let settings: Settings | undefined;
/** The stored keys, decrypted with safeStorage's asynchronous API (main/secret-box.ts). */
const secretBox = asyncSecretBox(safeStorage);
let settingsFile: KeyValueStore | undefined;
/** Whether a card operation runs, and when the POS last asked (updates, shutdown). */
const activity = tillActivity();
/** What start at login starts: the AppImage (renamed by each update), else the executable. */
let executable = process.env.APPIMAGE ?? process.execPath;

/** Keys are never written to the log (the file an operator sends to support). */
const secrets = () => [settings?.apiKey, settings?.cardMasterKey, ...(store?.earlierApiKeys ?? [])];
const echo = (line: string) => void process.stderr.write(line);
const logFolder = app.getPath('logs');
const log: Logger = (() => {
  try {
    return openAppLog(logFolder, { echo, secrets }).log;
  } catch (error) {
    // No log file (a folder that cannot be made): stderr still, and said there.
    echo(`log file: ${(error as Error).message}\n`);
    return lineLogger(echo, { secrets });
  }
})();

// The installer's shortcuts carry this id: the taskbar groups the running app with them.
if (process.platform === 'win32') app.setAppUserModelId(APP_USER_MODEL_ID);
// A tray app has no Dock icon on macOS: the installed app says so in its Info.plist
// (LSUIElement, electron-builder.yml); this covers `npm run app`.
app.dock?.hide();
// Single instance, start-up, restarts and quit (main/app-lifecycle.ts); the quit handler is
// registered before anything starts.
const lifecycle = appLifecycle(
  app,
  {
    start,
    stop: shutDown,
    showWindow,
    fatal: (error) => {
      log.error(`start-up failed: ${error.stack ?? error.message}`);
      dialog.showErrorBox('Card Wallet Worker could not start', error.message);
    },
    log: (line) => log.error(line),
  },
  // electron-updater's AppImageUpdater starts the new AppImage with this in its environment
  // (node_modules/electron-updater/out/AppImageUpdater.js, doInstall), before the old one quits.
  { startedByUpdate: process.env.APPIMAGE_SILENT_INSTALL === 'true' },
);

const ipc = createIpc(
  ipcMain,
  senderIsWindow(() => window?.webContents, pageFile),
  (line) => log.warn(line),
);

// The native PC/SC binding runs only in this utility process (main/pcsc-host.ts): no call
// into it can block the tray, the window or the HTTP service.
const pcscHost = new PcscHost({
  fork: () =>
    utilityProcess.fork(join(root, 'dist', 'main', 'pcsc-host.js'), [], {
      serviceName: PCSC_HOST_NAME,
      stdio: 'pipe',
    }),
  log,
});

// A host that hung or died is replaced by itself; the window keeps saying it happened.
pcscHost.on('lost', (problem) =>
  notice({
    id: `process-gone:${PCSC_HOST_NAME}`,
    level: 'warning',
    title: 'The reader connection stopped and was restarted',
    text: `${problem.message}. If this repeats, unplug the reader and plug it in again, and send the log to support.`,
    action: 'open-log-folder',
    at: new Date().toISOString(),
  }),
);

const updates = updateChecker({
  createUpdater: platformUpdater,
  feedUrl: null,
  log,
  onStatus: (status) => publish(statusModel.update(snapshot, status)),
  // Everything stops before the installer starts (main/updates.ts says why).
  stopService: pauseService,
  resumeService,
  cannotInstall: () =>
    app.isPackaged
      ? updateBlocker({
          platform: process.platform,
          execPath: process.execPath,
          appImage: process.env.APPIMAGE,
          canWrite: canWriteFolder,
        })
      : null,
  activity,
  // The new AppImage has a name of its own (AppImageUpdater.doInstall): start at login must
  // start that one, not the deleted old file.
  onAppImageMoved: (path) => {
    executable = path;
    if (settings?.startAtLogin) applyStartAtLogin(true);
  },
});

watchProcesses(app, process, {
  log,
  notice,
  windowContents: () => window?.webContents,
  hostServiceName: PCSC_HOST_NAME,
});

function publish(next: StatusSnapshot): void {
  snapshot = next;
  tray?.update(snapshot, settings?.startAtLogin ?? false);
  if (window) ipc.push(window.webContents, 'status:changed', snapshot);
}

function notice(shown: Notice): void {
  publish(statusModel.notice(snapshot, shown));
}

/** A start-up problem: in the tray, in the window (opened for it), and in the log. */
function startupError(reason: string): void {
  log.error(`start-up: ${reason}`);
  publish(statusModel.service(snapshot, { url: null, state: 'error', error: reason }));
  showWindow();
}

/** The keys cannot be read now: the service waits; the window says why and offers Retry. */
function settingsLocked(reason: string): void {
  log.warn(`settings: ${reason}`);
  publish(
    statusModel.notice(
      statusModel.service(snapshot, {
        url: null,
        state: 'stopped',
        error: 'the API key cannot be read: unlock the keychain, then Retry in the window',
      }),
      {
        id: 'settings-locked',
        level: 'error',
        title: 'The service waits for its keys',
        text: reason,
        action: 'unlock-settings',
        at: new Date().toISOString(),
      },
    ),
  );
  showWindow();
}

async function startService(): Promise<void> {
  if (!settings || lifecycle.quitting) return;
  if (store?.locked) return settingsLocked(store.locked);
  try {
    // Inside the try: settings the window accepted always parse (one schema), but settings
    // from an older version or a hand-edited file must show an error, not stop the start.
    const config = parseConfig(serviceConfig(settings, join(app.getPath('userData'), 'service')));
    const keys = store;
    service = await startWorkerService({
      config,
      log,
      serviceProbe: smartCardServiceProbe(process.platform),
      createNfc: () => pcscHost.createNfc(),
      // Replaced keys live where the current key does (safeStorage), until released.
      earlierKeys: keys && {
        keys: keys.earlierApiKeys,
        release: (apiKey) => keys.releaseEarlierKey(apiKey),
      },
    });
    if (lifecycle.quitting) return; // the lifecycle's stop closes it
    keepTillId(service.tillId);
    activity.follow(service);
    feed = followService(service, statusModel.dismiss(snapshot, 'settings-locked'), publish);
    publish(feed.snapshot());
  } catch (error) {
    startupError(
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? `port ${settings.port} is in use by another program: choose another port in the settings and save`
        : (error as Error).message,
    );
  }
}

/**
 * The settings hold no till id yet (a first start, or settings recovered): the service made one
 * in its data folder, or read it there; the settings keep it too, so that it survives that
 * folder. A failure to write leaves it in the data folder only, and is logged.
 */
function keepTillId(tillId: string): void {
  if (!store || !settings || settings.tillId !== null) return;
  try {
    settings = { ...settings, tillId: store.keepTillId(tillId) };
    log.info(`settings: this till's id is ${settings.tillId}`);
  } catch (error) {
    log.warn(
      `settings: the till id stays in the service's data folder only: ${(error as Error).message}`,
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

/**
 * The service, the embedded ledger and the PC/SC host stop, the app stays (before an update
 * installs, when the session ends), one step after whatever runs now (a restart after a save).
 */
function pauseService(): Promise<void> {
  return lifecycle.queue(async () => {
    await stopService();
    pcscHost.stop();
  });
}

function resumeService(): Promise<void> {
  return lifecycle.queue(async () => {
    pcscHost.resume();
    await startService();
  });
}

/** On quit: the service, the PC/SC host, the IPC handlers, and the tray icon (Windows leaves a dead one). */
async function shutDown(): Promise<void> {
  updates.stop();
  await stopService();
  pcscHost.stop();
  ipc.dispose();
  trayIcon?.destroy();
}

function applyStartAtLogin(enabled: boolean): void {
  void setStartAtLogin(
    {
      platform: process.platform,
      setLoginItemSettings: (options) => app.setLoginItemSettings(options),
      executable,
      configHome: process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'),
    },
    enabled,
  ).catch((error: unknown) => log.warn(`start at login: ${(error as Error).message}`));
}

function saveFromWindow(next: SettingsEdit) {
  const current = settings;
  const target = store;
  if (!current || !target) return Promise.resolve({ ok: false as const, problems: [] });
  // Locked: the stored master key cannot be kept as it is read (it is not); it must be typed
  // again or cleared, or the service would start without the key its cards need.
  if (target.masterKeyLocked && next.cardMasterKey === undefined)
    return Promise.resolve({
      ok: false as const,
      problems: [
        {
          field: 'cardMasterKey' as const,
          message:
            'The stored card master key cannot be read either: type it again, or clear it (cards personalized with it then no longer open here).',
        },
      ],
    });
  return saveSettings(current, next, {
    service,
    persist: (saved) => {
      settings = target.save(saved);
      if (saved.startAtLogin !== current.startAtLogin) applyStartAtLogin(saved.startAtLogin);
      updates.setPolicy(installPolicy(saved));
      updates.setFeed(saved.updateFeedUrl);
    },
    restart: () => lifecycle.queue(() => stopService().then(startService)),
  });
}

/** Retry after the operator unlocked the keychain or keyring: read the stored keys again. */
async function unlockSettings(): Promise<ActionResult> {
  const target = store;
  if (!target?.locked) return { ok: true, message: 'The keys are readable.' };
  if (settingsFile) await secretBox.read(settingsFile);
  settings = target.load(generateKey);
  if (target.locked) return { ok: false, message: target.locked };
  log.info('settings: the keys are readable again');
  publish(statusModel.dismiss(snapshot, 'settings-locked'));
  void lifecycle.queue(startService);
  return { ok: true, message: 'The keys are readable again; the service is starting.' };
}

function generateKey(): string {
  return `cww_${randomBytes(24).toString('base64url')}`;
}

async function fixReaderService(): Promise<ActionResult> {
  const result = await fixSmartCardService(
    process.platform,
    (file, args) =>
      // No timeout: Windows waits for the operator to answer the administrator prompt.
      new Promise((resolve, reject) =>
        execFile(file, args, { windowsHide: true }, (error, stdout, stderr) =>
          error ? reject(new Error(stderr.trim() || error.message)) : resolve(stdout),
        ),
      ),
  );
  (result.ok ? log.info : log.warn)(`smart-card service: ${result.message}`);
  service?.readers.retryNow();
  return result;
}

async function openLogFolder(): Promise<ActionResult> {
  const failed = await shell.openPath(logFolder);
  return failed
    ? { ok: false, message: `The log folder ${logFolder} could not be opened: ${failed}` }
    : { ok: true, message: logFolder };
}

/**
 * The back office in the default browser: the setup link while the shop has no owner
 * account, else the console. Only an address the service itself gave (never one from the
 * window) is opened.
 */
async function openBackOffice(): Promise<ActionResult> {
  const address = snapshot.console;
  const target = address?.setupUrl ?? address?.url;
  if (!target)
    return { ok: false, message: 'The back office is not there yet: the service is starting.' };
  try {
    await shell.openExternal(target);
    return { ok: true, message: target };
  } catch (error) {
    return { ok: false, message: `The browser could not be opened: ${(error as Error).message}` };
  }
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

const copyUrl = () => {
  if (snapshot.service.url) clipboard.writeText(snapshot.service.url);
};
const copyApiKey = (): boolean => {
  if (!settings?.apiKey) return false;
  clipboard.writeText(settings.apiKey);
  return true;
};

const trayActions = {
  openWindow: showWindow,
  copyUrl,
  copyApiKey: () => void copyApiKey(),
  fixSmartCardService: () => void fixReaderService(),
  retryReader: () => service?.readers.retryNow(),
  installUpdate: () => void updates.install(),
  openLogFolder: () => void openLogFolder(),
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
  log.info(`Card Wallet Worker ${app.getVersion()} starting (log: ${logFolder})`);
  const settingsPath = join(app.getPath('userData'), 'settings.json');
  const backupPath = () => join(app.getPath('userData'), `settings.unreadable-${Date.now()}.json`);
  const file = openSettingsFile(
    () => new Store({ name: 'settings' }) as unknown as KeyValueStore,
    settingsPath,
    backupPath(),
  );
  // No key yet: nobody has copied one into the POS (a file an installer wrote with the till id
  // alone is a first run too).
  const firstRun = file.store.get('apiKey') == null;
  settingsFile = file.store;
  // Asynchronously: a locked keyring or a Keychain prompt must not hold the main process.
  await secretBox.read(file.store);
  const opened = new SettingsStore(file.store, secretBox, (raw) =>
    writeFileSync(backupPath(), JSON.stringify(raw, null, 2)),
  );
  store = opened;
  settings = opened.load(generateKey);
  // Why the saved settings were set aside: a file that is not JSON, or settings that do not
  // validate. The window says so and asks for the API key again.
  const recovery = file.recovery ?? opened.recovery;
  ipc.handle('status:get', () => snapshot);
  ipc.handle('settings:get', () => ({
    settings: windowSettings(settings as Settings),
    plainTextKeyStorage: opened.plainTextKeyStorage,
    recovery,
    locked: opened.locked,
    masterKeyLocked: opened.masterKeyLocked,
  }));
  ipc.handle('settings:save', (next) => saveFromWindow(next));
  ipc.handle('service:copy-url', () => copyUrl());
  ipc.handle('settings:copy-api-key', () => copyApiKey());
  ipc.handle('settings:unlock', () => unlockSettings());
  ipc.handle('reader:fix-service', () => fixReaderService());
  ipc.handle('reader:retry', () => service?.readers.retryNow());
  ipc.handle('app:open-log-folder', () => openLogFolder());
  ipc.handle('app:open-back-office', () => openBackOffice());
  ipc.handle('update:install', () => updates.install());
  ipc.handle('notice:dismiss', (id) => {
    if (typeof id === 'string') publish(statusModel.dismiss(snapshot, id));
  });
  setupSimulatorIpc(ipc, () => service?.simulator);
  setupCardActionsIpc(
    ipc,
    () => service,
    (line) => log.error(line),
  );
  // Windows sends no before-quit at shutdown or log-off: a hidden window hears it instead.
  setupSessionEnd(
    {
      platform: process.platform,
      window: () => createSessionWindow(BrowserWindow as unknown as WindowFactory),
      // Electron's typings give 'shutdown' no event, but it emits one whose preventDefault
      // delays the shutdown (shell/browser/api/electron_api_power_monitor.cc, ShouldShutdown:
      // `return !Emit("shutdown")`; docs/api/power-monitor.md).
      powerMonitor: powerMonitor as unknown as Parameters<
        typeof setupSessionEnd
      >[0]['powerMonitor'],
    },
    {
      busy: activity.busy,
      pause: pauseService,
      resume: resumeService,
      quit: lifecycle.quit,
      exit: () => app.exit(0),
      log: (line) => log.warn(line),
    },
  );
  trayIcon = new Tray(icon('no-reader'));
  tray = trayUpdater(
    { tray: trayIcon, icon, buildMenu: (template) => Menu.buildFromTemplate(template) },
    trayActions,
  );
  trayIcon.on('click', showWindow);
  if (process.platform === 'darwin') trayIcon.on('right-click', () => tray?.popUpMenu());
  // The till id the settings hold, until the service says which it runs with.
  publish(statusModel.till(snapshot, settings.tillId));
  // The window opens on a first run (the key to copy into the POS), when settings had to be
  // recovered or are locked, and on Linux whenever the app is started by hand: GNOME without
  // the AppIndicator extension shows no tray icon, so the window is the only way in there.
  if (
    firstRun ||
    recovery !== null ||
    opened.locked !== null ||
    (process.platform === 'linux' && !startedHidden)
  )
    showWindow();
  if (recovery) log.warn(`settings: ${recovery}`);
  // The login item is written again at each start, so it names this copy: an AppImage an
  // update renamed, a deb or an installer that moved the app.
  if (settings.startAtLogin) applyStartAtLogin(true);
  updates.setPolicy(installPolicy(settings));
  updates.setFeed(settings.updateFeedUrl);
  // The tray and the window are up: the service starts as the next step, so a second launch
  // or a quit is answered while it starts (the embedded ledger takes seconds).
  void lifecycle.queue(startService);
}
