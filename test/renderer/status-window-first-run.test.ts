import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Settings } from '../../main/settings.ts';
import { followService } from '../../main/status-feed.ts';
import { emptySnapshot, statusModel, type StatusSnapshot } from '../../main/status-model.ts';
import type { ReaderStatus } from '../../service/card/reader-manager.ts';
import type { ReaderProblemCode } from '../../service/card/reader-problems.ts';
import { apiCaller } from '../support/http-client.ts';
import {
  openAdvanced,
  openStatusWindow,
  playMain,
  startSimulatedTill,
  type SimulatedTill,
  type StatusWindowPage,
} from '../support/status-window-page.ts';
import { TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';
import { saveScreenshot } from '../support/browser.ts';

// The window an operator meets on the first run, in Debian's Chromium: the header that says
// what is going on with one thing to do, the key and URL to copy into the POS, the POS's
// requests as they arrive, why there is no reader and the fix, start-up errors and notices as
// banners, the advanced settings apart, and a layout that works at 360 px and at 900 px. A real
// service core (with the card simulator, so no reader is needed) feeds it; other states are
// pushed as main/ pushes them.
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));

let till: SimulatedTill;
let ledger: TestLedger;
let service: TestService;
let statusWindow: StatusWindowPage;
let page: Page;
let feed: ReturnType<typeof followService>;
let settings: Settings;
let locked: string | null = null;
const invoked: { channel: string; args: unknown[] }[] = [];
const actions: Record<string, (...args: unknown[]) => unknown> = {};

const bridgeInvoke = playMain({
  snapshot: () => feed.snapshot(),
  settings: () => settings,
  persist: (saved) => (settings = saved),
  service: () => service,
  locked: () => locked,
  actions,
  invoked,
});

const call = apiCaller(() => service.url, TEST_API_KEY);
const calls = (channel: string) => invoked.filter((entry) => entry.channel === channel).length;

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  till = await startSimulatedTill();
  ({ ledger, service, settings } = till);
  statusWindow = await openStatusWindow(bridgeInvoke);
  page = statusWindow.page;
  feed = followService(service, emptySnapshot(), statusWindow.push);
  await page.goto(statusWindow.url);
  await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
});
after(async () => {
  feed?.stop();
  await statusWindow?.close();
  await till?.close();
});

/** What main/ would push: the running service's snapshot with `change` applied. */
function pushed(change: (snapshot: StatusSnapshot) => StatusSnapshot): StatusSnapshot {
  const next = change(feed.snapshot());
  statusWindow.push(next);
  return next;
}

/** The reader as the reader manager reports it with `code` (no reader usable). */
function readerWith(code: ReaderProblemCode, overrides: Partial<ReaderStatus> = {}): ReaderStatus {
  return {
    pcsc: 'unavailable',
    readers: [],
    reader: null,
    card: null,
    problem: { code, message: `${code} as PC/SC said it`, at: new Date() },
    ...overrides,
  };
}

/** A real reader's snapshot: the simulator off, the reader as given. */
const withReader = (status: ReaderStatus) => (snapshot: StatusSnapshot) =>
  statusModel.simulator(statusModel.reader(snapshot, status, 'win32'), null);

describe('the first run: connecting the POS', () => {
  test('when nothing has called yet, then the header says to connect the POS, with one action: Copy API key', async () => {
    await page.setViewportSize({ width: 900, height: 1100 });
    assert.equal(await page.getByTestId('headline').textContent(), 'Ready: connect the POS');
    const action = page.getByTestId('call-to-action');
    assert.equal(await action.textContent(), 'Copy API key');
    assert.equal(await page.locator('header button:visible').count(), 1, 'one call to action');
    assert.equal(await page.getByTestId('last-request').textContent(), 'none yet');
    assert.equal(await page.getByTestId('service-url').textContent(), service.url);
    // A hint to compare with the POS, never the whole key on screen.
    const hint = (await page.getByTestId('api-key-hint').textContent()) ?? '';
    assert.ok(!hint.includes(TEST_API_KEY) && hint.startsWith(TEST_API_KEY.slice(0, 6)), hint);
    await saveScreenshot(page, `${screenshots}/first-run-900.png`);
    await action.click();
    await page
      .getByTestId('copy-result')
      .filter({ hasText: 'API key is on the clipboard' })
      .waitFor();
    assert.equal(calls('settings:copy-api-key'), 1, 'main copies it (the window never reads it)');
    await page.getByTestId('copy-url').click();
    await page
      .getByTestId('copy-result')
      .filter({ hasText: 'service URL is on the clipboard' })
      .waitFor();
    assert.equal(calls('service:copy-url'), 1);
    assert.equal(await page.getByTestId('copy-result').getAttribute('role'), 'status');
  });

  test('when the POS calls, then the request shows as it arrives, and the header says ready with nothing to do', async () => {
    const answer = await call('GET', '/info');
    assert.equal(answer.status, 200, answer.text);
    await page.getByTestId('last-request').filter({ hasText: 'GET /info → 200' }).waitFor();
    await page
      .getByTestId('headline')
      .filter({ hasText: /^Ready$/ })
      .waitFor();
    assert.match(
      (await page.getByTestId('headline-detail').textContent()) ?? '',
      /^Last request from the POS: GET \/info → 200 at /,
    );
    assert.equal(await page.getByTestId('call-to-action').isVisible(), false);
  });
});

describe('why there is no reader, and what to do', () => {
  test('when the smart-card service runs only with a reader (Windows), then the header and the reader card say so, and the fix asks for elevation only when clicked', async () => {
    const fixes = calls('reader:fix-service');
    pushed(withReader(readerWith('service-on-demand')));
    await page
      .getByTestId('headline')
      .filter({ hasText: 'Smart-card service starts only with a reader' })
      .waitFor();
    assert.equal(
      await page.getByTestId('reader-state').textContent(),
      'Smart-card service starts only with a reader',
    );
    assert.match(
      (await page.getByTestId('reader-advice').textContent()) ?? '',
      /^Plug in the card reader/,
    );
    assert.equal(calls('reader:fix-service'), fixes, 'nothing is asked before the click');
    await saveScreenshot(page, `${screenshots}/service-on-demand.png`);
    await page.getByTestId('call-to-action').click();
    await page
      .getByTestId('reader-action-result')
      .filter({ hasText: 'now starts automatically' })
      .waitFor();
    assert.equal(calls('reader:fix-service'), fixes + 1);
  });

  test('when each problem happens, then the window names it, not "service not running" for all', async () => {
    const cases: [ReaderStatus, string, string | null][] = [
      [
        { pcsc: 'ready', readers: [], reader: null, card: null, problem: null },
        'No card reader',
        null,
      ],
      [
        readerWith('service-stopped'),
        'Smart-card service stopped',
        'Set the smart-card service to start automatically',
      ],
      [readerWith('library-missing'), 'PC/SC library missing', 'Check again'],
      [readerWith('wrong-abi'), 'Reader module does not fit this app', null],
      [
        readerWith('reader-in-use', {
          pcsc: 'ready',
          readers: ['ACS ACR122U'],
          reader: 'ACS ACR122U',
        }),
        'Reader in use by another program',
        null,
      ],
      [readerWith('host-not-answering'), 'Reader connection restarted', 'Check again'],
    ];
    for (const [status, title, action] of cases) {
      pushed(withReader(status));
      await page.getByTestId('reader-state').filter({ hasText: title }).waitFor();
      const button = page.getByTestId('reader-action');
      assert.equal(await button.isVisible(), action !== null, title);
      if (action) assert.equal(await button.textContent(), action);
    }
    const retries = calls('reader:retry');
    await page.getByTestId('reader-action').click();
    await page
      .getByTestId('reader-action-result')
      .filter({ hasText: 'Looking for the reader' })
      .waitFor();
    assert.equal(calls('reader:retry'), retries + 1);
    statusWindow.push(feed.snapshot());
  });
});

describe('start-up errors, locked keys and notices: banners that say what to do', () => {
  test('when the service could not start, then a banner says why (role alert), the header offers the settings, and the badge stays short', async () => {
    const reason =
      'port 4178 is in use by another program: choose another port in the settings and save';
    pushed((snapshot) =>
      statusModel.service(snapshot, { url: null, state: 'error', error: reason }),
    );
    const banner = page.getByTestId('startup-error');
    await banner.filter({ hasText: reason }).waitFor();
    assert.equal(await banner.getAttribute('role'), 'alert');
    assert.equal(await page.getByTestId('service-state').textContent(), 'error');
    assert.equal(await page.getByTestId('headline').textContent(), 'The service is not running');
    await saveScreenshot(page, `${screenshots}/startup-error.png`);
    await page.getByTestId('call-to-action').click();
    assert.equal(
      await page.evaluate('document.activeElement?.dataset.testid'),
      'port',
      'the port field is where to fix it',
    );
    statusWindow.push(feed.snapshot());
    await banner.waitFor({ state: 'hidden' });
  });

  test('when the keys cannot be decrypted, then the banner says so with Retry, which asks main to read them again', async () => {
    locked =
      "The API key could not be decrypted (Error while decrypting the ciphertext provided to safeStorage.decryptString): the system's keychain denied access or the keyring is locked. Nothing was changed. Unlock it and click Retry, or enter the key again and save.";
    const realKey = settings.apiKey;
    settings = { ...settings, apiKey: '' };
    actions['settings:unlock'] = () => {
      locked = null;
      settings = { ...settings, apiKey: realKey };
      return { ok: true, message: 'The keys are readable again; the service is starting.' };
    };
    try {
      await page.reload();
      const banner = page.getByTestId('settings-locked');
      await banner.filter({ hasText: 'Nothing was changed' }).waitFor();
      assert.equal(await banner.getAttribute('role'), 'alert');
      assert.equal(
        await page.getByTestId('headline').textContent(),
        'The service waits for its keys',
      );
      assert.equal(await page.getByTestId('call-to-action').textContent(), 'Retry');
      assert.equal(await page.getByTestId('api-key').inputValue(), '');
      assert.equal(
        await page.getByTestId('cloud-url').inputValue(),
        ledger.url,
        'the ledger stays',
      );
      await saveScreenshot(page, `${screenshots}/settings-locked.png`);
      await page.getByTestId('unlock-settings').click();
      await page.getByTestId('unlock-result').filter({ hasText: 'readable again' }).waitFor();
      await banner.waitFor({ state: 'hidden' });
      assert.equal(await page.getByTestId('api-key').inputValue(), realKey);
    } finally {
      locked = null;
      settings = { ...settings, apiKey: realKey };
      delete actions['settings:unlock'];
    }
  });

  test('when the window was reloaded after its page died, then a notice says so, opens the log folder, and can be dismissed', async () => {
    pushed((snapshot) =>
      statusModel.notice(snapshot, {
        id: 'window-gone',
        level: 'warning',
        title: 'The window stopped and was reloaded',
        text: 'Its page ended (crashed). The service was not affected.',
        action: 'open-log-folder',
        at: new Date().toISOString(),
      }),
    );
    const notice = page.getByTestId('notice').filter({ hasText: 'was reloaded' });
    await notice.waitFor();
    await notice.getByTestId('notice-action').click();
    await page.getByTestId('log-folder-result').filter({ hasText: 'Opened' }).waitFor();
    await notice.getByTestId('notice-dismiss').click();
    assert.deepEqual(invoked.filter((entry) => entry.channel === 'notice:dismiss').at(-1)?.args, [
      'window-gone',
    ]);
    statusWindow.push(feed.snapshot());
    await notice.waitFor({ state: 'hidden' });
  });

  test('when settings are saved or refused, then the line says so as a status or an alert', async () => {
    assert.equal(await page.getByTestId('settings-problems').getAttribute('role'), 'alert');
    assert.equal(await page.getByTestId('settings-saved').getAttribute('role'), 'status');
  });
});

describe('the settings: what a till needs first, the rest under Advanced', () => {
  test('when the window opens, then the card keys, sector, master key, simulator and update feed are under a closed Advanced section', async () => {
    await page.reload();
    await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
    for (const testId of [
      'card-key',
      'wallet-sector',
      'card-master-key',
      'simulator-setting',
      'update-feed-url',
    ])
      assert.equal(await page.getByTestId(testId).isVisible(), false, `${testId} is tucked away`);
    for (const testId of ['api-key', 'allowed-origins', 'port', 'cloud-url'])
      assert.equal(await page.getByTestId(testId).isVisible(), true, `${testId} is at hand`);
    await openAdvanced(page);
    assert.equal(await page.getByTestId('card-master-key').isVisible(), true);
    assert.equal(
      await page.getByTestId('update-state').textContent(),
      'Updates are off (no feed set).',
    );
  });

  test('when an update is ready, then the window offers to restart and install it', async () => {
    pushed((snapshot) =>
      statusModel.update(snapshot, { state: 'ready', version: '0.2.0', installs: null }),
    );
    const install = page.getByTestId('install-update');
    await install.filter({ hasText: 'Restart to install 0.2.0' }).waitFor();
    await install.click();
    assert.ok(calls('update:install') >= 1);
    statusWindow.push(feed.snapshot());
  });
});

describe('the layout at 360 px and 900 px', () => {
  test('when the window is 360 px wide, then nothing overflows, a 14-digit card ID stays on one line, and a request row shows its origin whole', async () => {
    await page.setViewportSize({ width: 360, height: 1400 });
    await service.simulator?.place({ uid: '04112233445566', credits: 5 });
    await page.getByTestId('card-id').filter({ hasText: '04112233445566' }).waitFor();
    const origin = 'https://pos.a-rather-long-shop-name.example.com';
    await call('GET', '/info', undefined, { Origin: origin });
    const row = page.getByTestId('requests').locator('tbody tr').first();
    await row.filter({ hasText: origin }).waitFor();
    assert.equal(
      await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      ),
      0,
      'no sideways scrolling',
    );
    for (const testId of ['card-id', 'last-card-id']) {
      // The line boxes its text takes.
      const lines = await page.getByTestId(testId).evaluate((element) => {
        const range = element.ownerDocument.createRange();
        range.selectNodeContents(element);
        return range.getClientRects().length;
      });
      assert.equal(lines, 1, `${testId} is on one line`);
    }
    const cell = row.locator('td').filter({ hasText: origin });
    const box = await cell.boundingBox();
    assert.ok(
      box && box.x >= 0 && box.x + box.width <= 360,
      `the origin is in view: ${JSON.stringify(box)}`,
    );
    assert.match((await cell.textContent()) ?? '', new RegExp(origin.replaceAll('.', '\\.')));
    for (const testId of [
      'call-to-action',
      'copy-api-key',
      'copy-url',
      'save-settings',
      'open-log-folder',
    ]) {
      const target = page.getByTestId(testId);
      if (!(await target.isVisible())) continue;
      const fits = await target.boundingBox();
      assert.ok(fits && fits.x >= 0 && fits.x + fits.width <= 360, `${testId} fits`);
    }
    await saveScreenshot(page, `${screenshots}/first-run-360.png`);
    await service.simulator?.takeAway();
  });

  test('when the window is 900 px wide, then the status cards sit side by side and the tables keep their columns', async () => {
    await page.setViewportSize({ width: 900, height: 1100 });
    const tops = await page
      .locator('.cards .card')
      .evaluateAll((cards) => cards.map((card) => Math.round(card.getBoundingClientRect().top)));
    assert.ok(new Set(tops).size < tops.length, `cards share a row: ${tops.join(', ')}`);
    assert.equal(await page.getByTestId('requests').locator('thead').isVisible(), true);
    await saveScreenshot(page, `${screenshots}/first-run-900-busy.png`);
  });
});
