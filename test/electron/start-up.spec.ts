import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { _electron as electron, type ElectronApplication, type Page } from 'playwright-core';
import { statusWindow } from './status-window.ts';

// The tray app started the way an operator meets it when something is wrong: no smart-card
// service, a ledger URL the service cannot use, a settings file that cannot be read, a quit
// while it starts. Run by `npm run test:electron` where Electron is installed (not in .ci/run:
// the binary cannot be downloaded there). Each test has its own user data folder, so each
// start is a first run unless the test writes settings there first.
const root = fileURLToPath(new URL('../..', import.meta.url));
const launched: { app: ElectronApplication; userData: string }[] = [];

afterEach(async () => {
  for (const { app, userData } of launched.splice(0)) {
    await app.close().catch(() => undefined);
    rmSync(userData, { recursive: true, force: true });
  }
});

/** Starts the app on its own user data folder, with `settings.json` there first if given. */
async function launch(options: { settingsFile?: string; env?: Record<string, string> } = {}) {
  const userData = mkdtempSync(join(tmpdir(), 'cww-electron-'));
  if (options.settingsFile !== undefined)
    writeFileSync(join(userData, 'settings.json'), options.settingsFile);
  const app = await electron.launch({
    executablePath: process.env.ELECTRON_BINARY,
    args: [root, `--user-data-dir=${userData}`],
    env: { ...(process.env as Record<string, string>), ...options.env },
  });
  launched.push({ app, userData });
  return { app, userData };
}

/** The window the app opens by itself (first run, recovered settings, or Linux). */
async function ownWindow(app: ElectronApplication): Promise<Page> {
  const window = await statusWindow(app, false);
  await window.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
  return window;
}

async function ping(window: Page): Promise<string> {
  const url = (await window.getByTestId('service-url').textContent()) ?? '';
  return (await fetch(`${url}/ping`)).text();
}

/** Settings as version 1 of the app stores them, with `overrides`. */
function storedSettings(overrides: Record<string, unknown>): string {
  return JSON.stringify({
    version: 1,
    allowedOrigins: [],
    port: 4178,
    cloudUrl: null,
    reader: null,
    cardKey: 'FFFFFFFFFFFF',
    cardKeyType: 'A',
    walletSector: 1,
    startAtLogin: false,
    apiKey: { plain: 'cww_the-key-the-pos-was-given-0001' },
    ...overrides,
  });
}

const backups = (userData: string) =>
  readdirSync(userData).filter((name) => name.startsWith('settings.unreadable-'));

describe('the tray app at start', () => {
  test(
    'when the smart-card service is not running, then the window says so and the service answers',
    {
      skip:
        process.platform !== 'linux' &&
        'only on Linux can the PC/SC service be pointed nowhere (PCSCLITE_CSOCK_NAME)',
    },
    async () => {
      const { app } = await launch({ env: { PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' } });
      const window = await ownWindow(app);
      await window
        .getByTestId('reader-state')
        .filter({ hasText: /not running/i })
        .waitFor();
      assert.equal(await window.getByTestId('reader-name').textContent(), 'no reader');
      assert.equal(await ping(window), '"pong"');
    },
  );

  test('when a ledger URL the service cannot use is saved, then the window says why and nothing changes', async () => {
    const { app, userData } = await launch();
    const window = await ownWindow(app);
    await window.getByTestId('cloud-url').fill('https://exa mple.com');
    await window.getByTestId('save-settings').click();
    const problems = window.getByTestId('settings-problems');
    await problems.filter({ hasText: /ledger URL/i }).waitFor();
    const stored = JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8'));
    assert.equal(stored.cloudUrl, null, 'not saved');
    assert.equal(await ping(window), '"pong"', 'the service still runs');
  });

  test('when the stored ledger URL is one the service cannot use (an older version, a hand edit), then it starts on defaults and the window says so', async () => {
    const { app, userData } = await launch({
      settingsFile: storedSettings({ cloudUrl: 'https://host:99999' }),
    });
    const window = await ownWindow(app); // opened by itself: settings were set aside
    await window
      .getByTestId('settings-recovery')
      .filter({ hasText: /could not be read/ })
      .waitFor();
    assert.equal(await window.getByTestId('cloud-url').inputValue(), '');
    assert.equal(backups(userData).length, 1, 'the old settings are kept');
    assert.equal(await ping(window), '"pong"');
  });

  test('when the settings file cannot be read, then it is kept aside, the app starts on defaults and the window asks for the key', async () => {
    const { app, userData } = await launch({ settingsFile: '{"port": 4178, "apiKey": {"encr' });
    const window = await ownWindow(app);
    await window
      .getByTestId('settings-recovery')
      .filter({ hasText: /could not be read/ })
      .waitFor();
    assert.deepEqual(
      backups(userData).map((name) => readFileSync(join(userData, name), 'utf8')),
      ['{"port": 4178, "apiKey": {"encr'],
    );
    assert.equal(await ping(window), '"pong"');
  });

  test('when the app is quit while it starts, then it still exits cleanly (code 0)', async () => {
    const { app } = await launch();
    const exited = new Promise<number | null>((resolve) =>
      app.process().once('exit', (code) => resolve(code)),
    );
    await app.evaluate(({ app: electronApp }) => electronApp.quit());
    assert.equal(await exited, 0);
  });
});
