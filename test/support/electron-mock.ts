import { fork as forkNode, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import Module, { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { IpcMainInvokeEvent } from 'electron';

// A hand-written stand-in for the parts of Electron that main/ uses. main/ takes Electron's
// pieces as parameters, so tests pass these instead (the Electron binary cannot run here).

type InvokeHandler = (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown;

export class FakeIpcMain {
  readonly handlers = new Map<string, InvokeHandler>();
  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, handler);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
  /** Calls a handler the way an invoke from `event`'s sender would. */
  async invoke(
    channel: string,
    event: Partial<IpcMainInvokeEvent>,
    ...args: unknown[]
  ): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler(event as IpcMainInvokeEvent, ...args);
  }
}

export class FakeFrame {
  constructor(public url: string) {}
}

export class FakeSession {
  permissionRequest?: (
    contents: unknown,
    permission: string,
    callback: (granted: boolean) => void,
  ) => void;
  permissionCheck?: () => boolean;
  setPermissionRequestHandler(handler: FakeSession['permissionRequest']): void {
    this.permissionRequest = handler;
  }
  setPermissionCheckHandler(handler: FakeSession['permissionCheck']): void {
    this.permissionCheck = handler;
  }
}

export class FakeWebContents extends EventEmitter {
  readonly sent: [string, unknown[]][] = [];
  readonly session = new FakeSession();
  windowOpenHandler?: (details: { url: string }) => { action: string };
  destroyed = false;
  constructor(public mainFrame: FakeFrame) {
    super();
  }
  send(channel: string, ...args: unknown[]): void {
    this.sent.push([channel, args]);
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  reloads = 0;
  /** Electron starts a new renderer for a page whose renderer died (render-process-gone). */
  reload(): void {
    if (this.destroyed) throw new TypeError('Object has been destroyed');
    this.reloads += 1;
  }
  setWindowOpenHandler(handler: FakeWebContents['windowOpenHandler']): void {
    this.windowOpenHandler = handler;
  }
  /**
   * Emits a navigation event the way Electron 45 does: the target is `details.url` on the
   * event; the positional url argument is deprecated and not passed here, so code that still
   * reads it sees undefined (as it will once Electron drops it).
   */
  navigate(event: 'will-navigate' | 'will-redirect' | 'will-attach-webview', url: string): boolean {
    let prevented = false;
    this.emit(event, { url, preventDefault: () => (prevented = true) });
    return prevented;
  }
}

export class FakeBrowserWindow extends EventEmitter {
  static created: FakeBrowserWindow[] = [];
  readonly webContents: FakeWebContents;
  loaded?: string;
  shown = false;
  destroyed = false;
  title: string;
  setTitle(title: string): void {
    this.title = title;
  }
  /** Shown without taking the focus. */
  showInactive(): void {
    this.shown = true;
  }
  close(): void {
    this.destroyed = true;
    this.emit('closed');
  }
  constructor(readonly options: Record<string, unknown>) {
    super();
    this.title = String(options.title ?? '');
    this.webContents = new FakeWebContents(new FakeFrame('about:blank'));
    FakeBrowserWindow.created.push(this);
  }
  menu?: unknown;
  setMenu(menu: unknown): void {
    this.menu = menu;
  }
  /** Like Chromium, the frame reports a percent-encoded file URL (`[` is `%5B`). */
  async loadFile(file: string): Promise<void> {
    this.loaded = file;
    this.webContents.mainFrame.url = chromiumFileUrl(file);
  }
  /** Set once `ready-to-show` was emitted: the page has painted. */
  painted = false;
  /** show() before the page painted: Electron shows an empty (white) window until it does. */
  shownBlank = false;
  minimized = false;
  focused = false;
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'ready-to-show') this.painted = true;
    return super.emit(event, ...args);
  }
  show(): void {
    if (!this.painted) this.shownBlank = true;
    this.shown = true;
  }
  focus(): void {
    this.focused = true;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
}

/** A file URL as Chromium's frame.url shows it: more characters escaped than Node's. */
export function chromiumFileUrl(file: string): string {
  return pathToFileURL(file).href.replaceAll('[', '%5B').replaceAll(']', '%5D');
}

/**
 * safeStorage as Electron has it: decryptString throws when the OS keychain denies access or
 * the Linux keyring is locked (set `denied`).
 */
export class FakeSafeStorage {
  denied = false;
  /**
   * Synchronous decryptions: on a locked Linux keyring or a Keychain prompt each one holds the
   * main process until the operator answers (docs/api/safe-storage.md).
   */
  syncDecrypts = 0;
  constructor(
    public available = true,
    public backend = 'gnome_libsecret',
  ) {}
  isEncryptionAvailable(): boolean {
    return this.available;
  }
  getSelectedStorageBackend(): string {
    return this.backend;
  }
  encryptString(text: string): Buffer {
    if (!this.available)
      throw new Error(
        'Error while encrypting the text provided to safeStorage.encryptString. Encryption is not available.',
      );
    return Buffer.from(`enc:${text}`);
  }
  async isAsyncEncryptionAvailable(): Promise<boolean> {
    return this.available;
  }
  /** Rejects as Electron's does while the keyring is locked (os_crypt_async). */
  async decryptStringAsync(buffer: Buffer): Promise<{ result: string; shouldReEncrypt: boolean }> {
    if (this.denied)
      throw new Error(
        'safeStorage.decryptStringAsync is temporarily unavailable. Please try again.',
      );
    if (!buffer.toString().startsWith('enc:'))
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptStringAsync.',
      );
    return { result: buffer.toString().slice(4), shouldReEncrypt: false };
  }
  decryptString(buffer: Buffer): string {
    this.syncDecrypts += 1;
    if (this.denied || !buffer.toString().startsWith('enc:'))
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      );
    return buffer.toString().slice(4);
  }
}

/**
 * Electron's app, for the login item and the lifecycle. As in Electron: setLoginItemSettings is
 * a no-op on Linux; `quit()` emits `before-quit` and, unless a listener prevents it, the process
 * ends there and then (recorded as `exited` with `viaQuit`); `exit(code)` ends it at once and
 * emits nothing; `whenReady()` resolves once `becomeReady()` is called.
 */
export class FakeApp extends EventEmitter {
  #openAtLogin = false;
  #isReady = false;
  #ready: () => void = () => undefined;
  readonly #whenReady = new Promise<void>((resolve) => (this.#ready = resolve));
  /** How the process ended, if it did (`killed`: by the OS at the end of the session). */
  exited?: { code: number; viaQuit: boolean; killed?: boolean };
  /** Set when another instance holds the single-instance lock. */
  otherInstanceRunning = false;
  /** app.isPackaged: true in an installed app. */
  isPackaged = true;
  constructor(
    readonly platform: NodeJS.Platform = 'linux',
    readonly version = '2.0.0',
  ) {
    super();
  }
  getVersion(): string {
    return this.version;
  }
  getName(): string {
    return 'card-wallet-worker';
  }
  getAppPath(): string {
    return '/opt/Card Wallet Worker/resources/app.asar';
  }
  getPath(name: string): string {
    return `/home/till/.config/card-wallet-worker/${name}`;
  }
  setLoginItemSettings(settings: { openAtLogin?: boolean }): void {
    if (this.platform === 'linux') return;
    this.#openAtLogin = settings.openAtLogin ?? false;
  }
  getLoginItemSettings(): { openAtLogin: boolean } {
    return { openAtLogin: this.#openAtLogin };
  }
  lockRequests = 0;
  /** As Electron: a refused request may be made again (App::RequestSingleInstanceLock). */
  requestSingleInstanceLock(): boolean {
    this.lockRequests += 1;
    return !this.otherInstanceRunning;
  }
  whenReady(): Promise<void> {
    return this.#whenReady;
  }
  becomeReady(): void {
    this.#isReady = true;
    this.#ready();
    this.emit('ready');
  }
  isReady(): boolean {
    return this.#isReady;
  }
  quit(): void {
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.exited ??= { code: 0, viaQuit: true };
  }
  exit(code = 0): void {
    this.exited ??= { code, viaQuit: false };
  }
  /** powerMonitor: `shutdown` is Linux and macOS only (docs/api/power-monitor.md). */
  readonly powerMonitor = new EventEmitter();
  /**
   * The OS ends the session (shutdown, restart, log-off), as Electron 45 reports it.
   * Windows: no `before-quit`, `will-quit` or `quit` (docs/api/app.md); every open window gets
   * `query-session-end`, which it may refuse; then `session-end`, after which Electron ends the
   * process at once unless the app is already quitting (native_window_views_win.cc,
   * WM_ENDSESSION); with no window, nothing is heard and the process is just ended. Linux and
   * macOS: powerMonitor's `shutdown`, which may be delayed. Returns whether it was refused.
   */
  endSession(reasons: string[] = ['shutdown']): { refused: boolean; end: () => void } {
    if (this.platform !== 'win32') {
      let delayed = false;
      this.powerMonitor.emit('shutdown', { preventDefault: () => (delayed = true) });
      return {
        refused: delayed,
        end: () => void (this.exited ??= { code: 0, viaQuit: false, killed: true }),
      };
    }
    const windows = FakeBrowserWindow.created.filter((window) => !window.destroyed);
    let refused = false;
    for (const window of windows)
      window.emit('query-session-end', { reasons, preventDefault: () => (refused = true) });
    return {
      refused,
      end: () => {
        for (const window of windows) window.emit('session-end', { reasons });
        this.exited ??= { code: 0, viaQuit: false, killed: true };
      },
    };
  }
}

type MenuTemplateItem = {
  label?: string;
  type?: string;
  enabled?: boolean;
  checked?: boolean;
  click?: (item: FakeMenuItem) => void;
};

/**
 * A MenuItem as Electron builds it: clicking a checkbox item toggles its own `checked` first,
 * then calls the template's click with the item. So after a click the native menu shows the
 * new state whether or not the app took it.
 */
export class FakeMenuItem {
  readonly label: string;
  readonly type: string;
  checked: boolean;
  readonly #click?: (item: FakeMenuItem) => void;
  constructor(template: MenuTemplateItem) {
    this.label = template.label ?? '';
    this.type = template.type ?? 'normal';
    this.checked = template.checked ?? false;
    this.#click = template.click;
  }
  click(): void {
    if (this.type === 'checkbox') this.checked = !this.checked;
    this.#click?.(this);
  }
}

/** Menu.buildFromTemplate. */
export function buildFakeMenu(template: MenuTemplateItem[]): { items: FakeMenuItem[] } {
  return { items: template.map((item) => new FakeMenuItem(item)) };
}

/**
 * A Tray that records what was applied; `menu` is the context menu currently attached,
 * `tooltip` what the OS shows: on Windows the first 127 UTF-16 units of it (szTip[128];
 * Electron's NotifyIcon::SetToolTip copies what fits and drops the rest).
 */
export class FakeTray {
  readonly calls: string[] = [];
  menu?: { items: FakeMenuItem[] };
  tooltip = '';
  /** The tooltip as the app set it. */
  tooltipSet = '';
  constructor(readonly platform: NodeJS.Platform = 'linux') {}
  setImage(): void {
    this.calls.push('image');
  }
  setToolTip(text: string): void {
    this.calls.push('tooltip');
    this.tooltipSet = text;
    this.tooltip = this.platform === 'win32' ? text.slice(0, 127) : text;
  }
  setContextMenu(menu: { items: FakeMenuItem[] }): void {
    this.calls.push('menu');
    this.menu = menu;
  }
  popUpContextMenu(): void {
    this.calls.push('popup');
  }
  item(label: string): FakeMenuItem {
    const found = this.menu?.items.find((item) => item.label === label);
    if (!found) throw new Error(`no menu item ${label}`);
    return found;
  }
}

/** The child side of FakeUtilityProcess: Electron's process.parentPort over Node's IPC. */
const UTILITY_CHILD = fileURLToPath(new URL('./utility-process-child.ts', import.meta.url));

/**
 * Electron's utilityProcess, as a real child process (Node with tsx, so the entry may be a .ts
 * file), failing where Electron does: fork before the app is `ready` (the docs forbid it; Electron
 * 28 to 33 crashed, electron/electron#41396); stdin other than 'ignore'; a transfer list that is
 * not MessagePortMain objects; a message that structured clone refuses (a function). Messages
 * cross a structured clone both ways, so a Buffer arrives as a Uint8Array, as in Electron.
 * Electron hands main a utility process's messages (and its exit) from Chromium's message loop,
 * after the immediates of the libuv turn that was running (electron/electron#28261), where Node
 * reads a child's messages in the poll phase, before them: so the mock hands them on one
 * setImmediate later, in their order. A verdict that waits one setImmediate for the host's
 * answers fails here, as it would in Electron.
 */
export class FakeUtilityProcessModule {
  readonly forked: FakeUtilityProcess[] = [];
  constructor(readonly app: Pick<FakeApp, 'isReady'>) {}
  fork(
    modulePath: string,
    args: string[] = [],
    options: { env?: NodeJS.ProcessEnv; stdio?: string | string[]; serviceName?: string } = {},
  ): FakeUtilityProcess {
    if (!this.app.isReady())
      throw new Error('utilityProcess.fork can only be called after the app is ready');
    const stdio = options.stdio ?? 'inherit';
    if (Array.isArray(stdio) && stdio[0] !== undefined && stdio[0] !== 'ignore')
      throw new Error('stdin of a utility process can only be ignore');
    const child = new FakeUtilityProcess(modulePath, args, options.env ?? process.env, stdio);
    this.forked.push(child);
    return child;
  }
}

export class FakeUtilityProcess extends EventEmitter {
  pid: number | undefined;
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  readonly #child: ChildProcess;
  #exited = false;
  constructor(
    modulePath: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    stdio: string | string[],
  ) {
    super();
    const mode = (index: number) => (Array.isArray(stdio) ? (stdio[index] ?? 'inherit') : stdio);
    this.#child = forkNode(UTILITY_CHILD, [modulePath, ...args], {
      execArgv: ['--import', 'tsx'],
      env,
      serialization: 'advanced',
      stdio: ['ignore', mode(1), mode(2), 'ipc'] as never,
    });
    this.stdout = this.#child.stdout;
    this.stderr = this.#child.stderr;
    this.#child.on('spawn', () => {
      this.pid = this.#child.pid;
      this.emit('spawn');
    });
    this.#child.on('message', (message) =>
      setImmediate(() => this.emit('message', structuredClone(message))),
    );
    this.#child.on('exit', (code, signal) => {
      this.#exited = true;
      this.pid = undefined;
      // Electron reports the exit code from waitpid; a signal shows as a non-zero code.
      setImmediate(() => this.emit('exit', code ?? (signal ? 128 : 0)));
    });
  }
  postMessage(message: unknown, transfer: unknown[] = []): void {
    if (transfer.some((port) => !(port instanceof FakeMessagePortMain)))
      throw new TypeError('transfer must be a list of MessagePortMain');
    const cloned = structuredClone(message);
    if (!this.#exited && this.#child.connected) this.#child.send(cloned as never);
  }
  kill(): boolean {
    if (this.#exited) return false;
    return this.#child.kill('SIGTERM');
  }
  /** Test helper: the process as a hang detector would see it (SIGSTOP: alive, silent). */
  freeze(): void {
    this.#child.kill('SIGSTOP');
  }
}

/** Only MessagePortMain objects may be transferred (none are used by main/ today). */
export class FakeMessagePortMain extends EventEmitter {}

/**
 * The `electron` module as electron-updater requires it in the main process (its app, its
 * native autoUpdater's events, its net session), for loading the real package under Node:
 * put it in require.cache where `require('electron')` resolves from electron-updater.
 */
export function fakeElectronModule(app: FakeApp) {
  return {
    app,
    autoUpdater: new EventEmitter(),
    session: { fromPartition: () => ({}) },
    net: {
      request: () => {
        throw new Error('no network in the electron mock');
      },
    },
  };
}

/**
 * Puts fakeElectronModule(app) where electron-updater's `require('electron')` finds it (under
 * Node that is the npm package, which would try to download Electron); returns it.
 */
export function installFakeElectron(app: FakeApp): ReturnType<typeof fakeElectronModule> {
  const require = createRequire(import.meta.url);
  const path = createRequire(require.resolve('electron-updater')).resolve('electron');
  const cached = new Module(path);
  cached.filename = path;
  cached.loaded = true;
  cached.exports = fakeElectronModule(app);
  require.cache[path] = cached;
  return cached.exports;
}

/**
 * Windows PowerShell 5.1 running the smart-card fix's outer `-Command` script, for the answer
 * the operator gives the administrator prompt. Modelled on what PowerShell does: a declined
 * prompt makes `Start-Process -Verb RunAs` write a non-terminating error and return nothing, so
 * the script goes on with `$p` null (and `exit $p.ExitCode` exits 0), unless the error is made
 * terminating (`$ErrorActionPreference = 'Stop'` or `-ErrorAction Stop`): then a `catch` runs,
 * or without one the script ends with exit code 1. An accepted prompt exits with the elevated
 * script's code. A non-zero exit rejects, as execFile does.
 */
export function fakeWindowsPowerShell(answer: { declined: true } | { elevatedExitCode: number }) {
  return async (_file: string, args: string[]): Promise<string> => {
    const script = args.at(-1) ?? '';
    let code: number;
    if ('declined' in answer) {
      const terminating =
        /\$ErrorActionPreference\s*=\s*'Stop'/.test(script) ||
        /Start-Process[^;}]*-ErrorAction Stop/.test(script);
      const caught = /try\s*\{[^}]*Start-Process[^}]*\}\s*catch\s*\{\s*exit (\d+)/.exec(script);
      const nullCheck = /if \(\$null -eq \$p\) \{ exit (\d+) \}/.exec(script);
      if (terminating) code = caught ? Number(caught[1]) : 1;
      else code = nullCheck ? Number(nullCheck[1]) : 0; // `exit $null` exits 0
    } else {
      code = answer.elevatedExitCode;
    }
    if (code !== 0)
      throw new Error(
        `Command failed: powershell.exe (exit code ${code})\nStart-Process : This command cannot be run due to the error: The operation was canceled by the user.`,
      );
    return '';
  };
}
