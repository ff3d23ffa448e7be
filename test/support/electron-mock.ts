import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';
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
  constructor(readonly options: Record<string, unknown>) {
    super();
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
  show(): void {
    this.shown = true;
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
  decryptString(buffer: Buffer): string {
    if (this.denied || !buffer.toString().startsWith('enc:'))
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      );
    return buffer.toString().slice(4);
  }
}

/** The login-item part of Electron's app: setLoginItemSettings is a no-op on Linux. */
export class FakeApp {
  #openAtLogin = false;
  constructor(readonly platform: NodeJS.Platform) {}
  setLoginItemSettings(settings: { openAtLogin?: boolean }): void {
    if (this.platform === 'linux') return;
    this.#openAtLogin = settings.openAtLogin ?? false;
  }
  getLoginItemSettings(): { openAtLogin: boolean } {
    return { openAtLogin: this.#openAtLogin };
  }
}
