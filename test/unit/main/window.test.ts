import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createStatusWindow,
  revealStatusWindow,
  statusWindowOptions,
  type WindowFactory,
} from '../../../main/window.ts';
import { chromiumFileUrl, FakeBrowserWindow } from '../../support/electron-mock.ts';

const PAGE_FILE = '/opt/Card Wallet [1]/resources/app/renderer/index.html';
const PAGE = chromiumFileUrl(PAGE_FILE);

describe('the status window', () => {
  test('when created, then its webPreferences isolate the page from Node', () => {
    const prefs = statusWindowOptions('/app/main/preload.cjs').webPreferences;
    assert.deepEqual(
      {
        contextIsolation: prefs?.contextIsolation,
        sandbox: prefs?.sandbox,
        nodeIntegration: prefs?.nodeIntegration,
        nodeIntegrationInWorker: prefs?.nodeIntegrationInWorker,
        nodeIntegrationInSubFrames: prefs?.nodeIntegrationInSubFrames,
        webSecurity: prefs?.webSecurity,
        allowRunningInsecureContent: prefs?.allowRunningInsecureContent,
        webviewTag: prefs?.webviewTag,
        preload: prefs?.preload,
      },
      {
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
        preload: '/app/main/preload.cjs',
      },
    );
    assert.equal(statusWindowOptions('x').minWidth, 360, 'usable at 360 px');
  });

  test('when the page tries to navigate, open windows, embed webviews or ask permissions, then it is denied', () => {
    const window = createStatusWindow(
      FakeBrowserWindow as unknown as WindowFactory,
      '/p.cjs',
      PAGE_FILE,
    ) as unknown as FakeBrowserWindow;
    const contents = window.webContents;
    assert.equal(contents.navigate('will-navigate', 'https://evil.example/'), true);
    assert.equal(contents.navigate('will-navigate', PAGE), false, 'a reload of our page is fine');
    assert.equal(contents.navigate('will-redirect', 'https://evil.example/'), true);
    assert.equal(contents.navigate('will-attach-webview', 'https://evil.example/'), true);
    assert.deepEqual(contents.windowOpenHandler?.({ url: 'https://evil.example/' }), {
      action: 'deny',
    });
    let granted: boolean | undefined;
    contents.session.permissionRequest?.(contents, 'media', (answer) => (granted = answer));
    assert.equal(granted, false);
    assert.equal(contents.session.permissionCheck?.(), false);
  });

  test('when created, then it loads our page and shows once ready', () => {
    const window = createStatusWindow(
      FakeBrowserWindow as unknown as WindowFactory,
      '/p.cjs',
      PAGE_FILE,
    ) as unknown as FakeBrowserWindow;
    assert.equal(window.loaded, PAGE_FILE);
    assert.equal(window.webContents.mainFrame.url, PAGE);
    assert.equal(window.shown, false);
    window.emit('ready-to-show');
    assert.equal(window.shown, true);
  });

  test('when the window is asked for again before its page painted, then it still waits for ready-to-show (no blank window)', () => {
    const window = createStatusWindow(
      FakeBrowserWindow as unknown as WindowFactory,
      '/p.cjs',
      PAGE_FILE,
    ) as unknown as FakeBrowserWindow;
    revealStatusWindow(window as never); // a second launch, or a start-up error, while loading
    assert.equal(window.shown, false);
    window.emit('ready-to-show');
    assert.deepEqual(
      { shown: window.shown, blank: window.shownBlank },
      { shown: true, blank: false },
    );
    window.minimized = true;
    revealStatusWindow(window as never);
    assert.deepEqual(
      { minimized: window.minimized, focused: window.focused },
      { minimized: false, focused: true },
    );
  });

  test('when the app is installed (production), then DevTools and the default menu are off', () => {
    const window = createStatusWindow(
      FakeBrowserWindow as unknown as WindowFactory,
      '/p.cjs',
      PAGE_FILE,
    ) as unknown as FakeBrowserWindow;
    const prefs = window.options.webPreferences as { devTools?: boolean };
    assert.equal(prefs.devTools, false);
    assert.equal(window.menu, null);
    assert.equal(window.options.autoHideMenuBar, true);
  });

  test('when run from a checkout (development), then DevTools can be asked for', () => {
    assert.equal(statusWindowOptions('/p.cjs', true).webPreferences?.devTools, true);
  });
});
