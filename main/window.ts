import type { BrowserWindow, BrowserWindowConstructorOptions, WebContents } from 'electron';
import { isPageUrl } from './ipc.ts';

/**
 * The status window's options: no Node in the page, isolated and sandboxed, only the preload
 * bridge. Exported for the tests, which check every flag.
 */
export function statusWindowOptions(
  preloadPath: string,
  devTools = false,
): BrowserWindowConstructorOptions {
  return {
    width: 900,
    height: 720,
    minWidth: 360,
    minHeight: 480,
    show: false,
    // No File/Edit/View menu bar on Windows and Linux (the default menu has Toggle DevTools).
    autoHideMenuBar: true,
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
      // Off in the installed app: DevTools would let anyone at the till read the API key.
      devTools,
    },
  };
}

/**
 * Locks the window to its page (null: to no page at all): no navigation away, no new windows,
 * no permission (camera, notifications...) ever granted. `contents.session` carries the
 * permission handlers.
 */
export function lockDown(
  contents: Pick<WebContents, 'on' | 'setWindowOpenHandler' | 'session'>,
  pageFile: string | null,
): void {
  // Electron 45 passes the target as `details.url` on the event; the positional url argument
  // is deprecated.
  contents.on('will-navigate', (details) => {
    if (pageFile === null || !isPageUrl(details.url, pageFile)) details.preventDefault();
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

/** Status windows whose page has painted (`ready-to-show` was emitted). */
const painted = new WeakSet<object>();

/** Creates the status window on our page, locked down; it shows when ready. */
export function createStatusWindow(
  Window: WindowFactory,
  preloadPath: string,
  pageFile: string,
  devTools = false,
): BrowserWindow {
  const window = new Window(statusWindowOptions(preloadPath, devTools));
  window.setMenu?.(null);
  lockDown(window.webContents, pageFile);
  window.once('ready-to-show', () => {
    painted.add(window);
    window.show();
  });
  void window.loadFile(pageFile);
  return window;
}

/**
 * Brings an open status window to the front. One whose page has not painted yet is left alone:
 * it shows itself on `ready-to-show`, and show() now would flash an empty window.
 */
export function revealStatusWindow(
  window: Pick<BrowserWindow, 'isMinimized' | 'restore' | 'show' | 'focus'>,
): void {
  if (!painted.has(window)) return;
  if (window.isMinimized()) window.restore(); // show() alone leaves a minimized window down
  window.show();
  window.focus();
}
