import { EventEmitter } from 'node:events';
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
  /** Emits a navigation event the way Electron does; returns whether it was prevented. */
  navigate(event: 'will-navigate' | 'will-redirect' | 'will-attach-webview', url: string): boolean {
    let prevented = false;
    this.emit(event, { preventDefault: () => (prevented = true) }, url);
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
  async loadFile(file: string): Promise<void> {
    this.loaded = file;
    this.webContents.mainFrame.url = `file://${file}`;
  }
  show(): void {
    this.shown = true;
  }
}
