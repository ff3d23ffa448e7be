import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { _electron as electron, type ElectronApplication, type Page } from 'playwright-core';
import type { CardWalletBridge } from '../../main/ipc-contract.ts';
import { statusWindow } from './status-window.ts';

// The real tray app in Electron, run by `npm run test:electron` where Electron is installed
// (not in .ci/run: the binary cannot be downloaded there). pcscd is pointed nowhere, so the
// tray shows "no reader".
const root = fileURLToPath(new URL('../..', import.meta.url));
let app: ElectronApplication;
let window: Page;
let userData: string;

before(async () => {
  userData = mkdtempSync(join(tmpdir(), 'cww-electron-'));
  app = await electron.launch({
    executablePath: process.env.ELECTRON_BINARY,
    args: [root, `--user-data-dir=${userData}`],
    env: { ...process.env, PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' },
  });
  // A first run opens the window by itself; otherwise a second launch shows it.
  window = await statusWindow(app);
});
after(async () => {
  await app?.close();
  rmSync(userData, { recursive: true, force: true });
});

describe('the tray app', () => {
  test('when launched, then the service runs and the window shows no reader, with no Node in the page', async () => {
    await window.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
    assert.equal(await window.getByTestId('reader-name').textContent(), 'no reader');
    assert.equal(await window.evaluate('typeof require'), 'undefined');
    assert.equal(await window.evaluate('typeof process'), 'undefined');
    assert.equal(await window.evaluate('typeof window.cardWallet.saveSettings'), 'function');
    const url = (await window.getByTestId('service-url').textContent()) ?? '';
    const ping = await fetch(`${url}/ping`);
    assert.equal(await ping.text(), '"pong"');
  });

  test('when the service made its till id at the first start, then the settings keep it and the window shows it', async () => {
    const tillId = readFileSync(join(userData, 'service', 'till-id'), 'utf8').trim();
    await window.getByTestId('till-id').filter({ hasText: tillId }).waitFor();
    const stored = JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8')) as {
      tillId?: unknown;
    };
    assert.equal(stored.tillId, tillId);
  });

  test('when an origin is saved, then the service allows it at once and it survives a reload', async () => {
    await window.getByTestId('allowed-origins').fill('https://pos.example.com');
    await window.getByTestId('save-settings').click();
    await window.getByTestId('settings-saved').waitFor();
    const url = (await window.getByTestId('service-url').textContent()) ?? '';
    const res = await fetch(`${url}/ping`, { headers: { Origin: 'https://pos.example.com' } });
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://pos.example.com');
    await window.reload();
    await window.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
    assert.equal(
      await window.getByTestId('allowed-origins').inputValue(),
      'https://pos.example.com',
    );
  });

  test('when the card simulator is turned on, then the service restarts with it, the window says so and a card placed from the panel shows; turned off, it is gone', async () => {
    assert.equal(await window.getByTestId('simulator-banner').isVisible(), false, 'off at first');
    await window.getByTestId('advanced').locator('summary').click();
    await window.getByTestId('simulator-setting').check();
    await window.getByTestId('save-settings').click();
    await window.getByTestId('settings-saved').filter({ hasText: 'restarted' }).waitFor();
    await window.getByTestId('simulator-banner').waitFor();
    await window.getByTestId('sim-credits').fill('25');
    await window.getByTestId('sim-place').click();
    await window.getByTestId('sim-result').filter({ hasText: 'Placed' }).waitFor();
    await window.getByTestId('last-card-detail').filter({ hasText: '25 credits' }).waitFor();
    const url = (await window.getByTestId('service-url').textContent()) ?? '';
    const ping = await fetch(`${url}/ping`);
    assert.equal(ping.headers.get('card-wallet-simulator'), '1');

    await window.getByTestId('simulator-setting').uncheck();
    await window.getByTestId('save-settings').click();
    await window.getByTestId('settings-saved').filter({ hasText: 'restarted' }).waitFor();
    await window.getByTestId('simulator-banner').waitFor({ state: 'hidden' });
    await window.getByTestId('reader-name').filter({ hasText: 'no reader' }).waitFor();
    const real = await fetch(`${url}/ping`);
    assert.equal(real.headers.get('card-wallet-simulator'), null);
  });

  test('when it runs, then its log file is in the logs folder, without the API key, and the window offers to open the folder', async () => {
    const logs = await app.evaluate(({ app: electronApp }) => electronApp.getPath('logs'));
    const text = readFileSync(join(logs, 'card-wallet-worker.log'), 'utf8');
    assert.match(text, / info Card Wallet Worker \S+ starting/);
    assert.match(text, / info service listening on http:\/\/127\.0\.0\.1:\d+/);
    const settings = await window.evaluate(() =>
      (globalThis as unknown as { cardWallet: CardWalletBridge }).cardWallet.getSettings(),
    );
    assert.ok(!text.includes(settings.settings.apiKey), 'the key is not in the log');
    assert.equal(await window.getByTestId('open-log-folder').isVisible(), true);
  });
});
