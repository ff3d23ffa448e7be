import type { BrowserWindow, BrowserWindowConstructorOptions, WebContents } from 'electron';

/**
 * The status window's options: no Node in the page, isolated and sandboxed, only the preload
 * bridge. Exported for the tests, which check every flag.
 */
export function statusWindowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    width: 900,
    height: 720,
    minWidth: 360,
    minHeight: 480,
    show: false,
    title: 'Card Wallet Worker',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      devTools: true,
    },
  };
}

/**
 * Locks the window to its page: no navigation away, no new windows, no permission (camera,
 * notifications...) ever granted. `contents.session` carries the permission handlers.
 */
export function lockDown(
  contents: Pick<WebContents, 'on' | 'setWindowOpenHandler' | 'session'>,
  pageUrl: string,
): void {
  contents.on('will-navigate', (event, url) => {
    if (url !== pageUrl) event.preventDefault();
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.session.setPermissionRequestHandler((_contents, _permission, callback) =>
    callback(false),
  );
  contents.session.setPermissionCheckHandler(() => false);
}

export interface WindowFactory {
  new (options: BrowserWindowConstructorOptions): BrowserWindow;
}

/** Creates the status window on our page, locked down; it shows when ready. */
export function createStatusWindow(
  Window: WindowFactory,
  preloadPath: string,
  pageFile: string,
  pageUrl: string,
): BrowserWindow {
  const window = new Window(statusWindowOptions(preloadPath));
  lockDown(window.webContents, pageUrl);
  window.once('ready-to-show', () => window.show());
  void window.loadFile(pageFile);
  return window;
}
