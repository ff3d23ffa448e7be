import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createIpc } from '../../main/ipc.ts';
import type { Settings } from '../../main/settings.ts';
import { setupSimulatorIpc } from '../../main/simulator-ipc.ts';
import { followService } from '../../main/status-feed.ts';
import { emptySnapshot } from '../../main/status-model.ts';
import { waitUntil } from '../support/card-rig.ts';
import { FakeIpcMain } from '../support/electron-mock.ts';
import { apiCaller } from '../support/http-client.ts';
import {
  openAdvanced,
  openStatusWindow,
  playMain,
  startSimulatedTill,
  type SimulatedTill,
  type StatusWindowPage,
} from '../support/status-window-page.ts';
import { shopCredits, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';
import { saveScreenshot } from '../support/browser.ts';

// The status window's card simulator panel in Debian's Chromium, against a real service core
// started with the simulator (no pcscd, no rig). The test plays main/'s part as the other
// window test does, except that the simulator channels go through main/'s own handlers
// (main/simulator-ipc.ts on the mock ipcMain), so their checks are the ones under test.
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));
const CARD = '0A0B0C0D';

let till: SimulatedTill;
let ledger: TestLedger;
let service: TestService;
let statusWindow: StatusWindowPage;
let page: Page;
let feed: ReturnType<typeof followService>;
let settings: Settings;
const restarts: Settings[] = [];
const ipcMain = new FakeIpcMain();

// main/'s part; the restart itself is recorded, not run.
const bridgeInvoke = playMain({
  snapshot: () => feed.snapshot(),
  settings: () => settings,
  persist: (saved) => (settings = saved),
  service: () => service,
  restart: async (next) => void restarts.push(next),
  handlers: { ipcMain, channels: (channel) => channel.startsWith('simulator:') },
});

const call = apiCaller(() => service.url, TEST_API_KEY);

/** The panel's row for a card: its text, once it reads `text`. */
async function cardRow(cardId: string, text: RegExp): Promise<void> {
  await page
    .getByTestId('sim-cards')
    .locator('tbody tr')
    .filter({ hasText: cardId })
    .filter({ hasText: text })
    .waitFor();
}

/** Clears the panel's last answer, so the next one cannot be mistaken for it. */
async function clearResult(): Promise<void> {
  await page.getByTestId('sim-result').evaluate((line) => (line.textContent = ''));
}

async function result(text: RegExp): Promise<string> {
  const line = page.getByTestId('sim-result').filter({ hasText: text });
  await line.waitFor();
  return (await line.textContent()) ?? '';
}

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  till = await startSimulatedTill();
  ({ ledger, service, settings } = till);
  setupSimulatorIpc(
    createIpc(
      ipcMain,
      () => true,
      () => undefined,
    ),
    () => service.simulator,
  );
  statusWindow = await openStatusWindow(bridgeInvoke);
  page = statusWindow.page;
  feed = followService(service, emptySnapshot(), statusWindow.push);
  await page.goto(statusWindow.url);
  await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
  await openAdvanced(page);
});
after(async () => {
  feed?.stop();
  await statusWindow?.close();
  await till?.close();
});

describe('the status window with the card simulator', () => {
  test('when the service runs with the simulator, then a banner says no real reader is used and the panel shows', async () => {
    await page.getByTestId('simulator-banner').waitFor();
    assert.equal(
      (await page.getByTestId('simulator-banner').textContent())?.trim(),
      'Card simulator: no real reader is used',
    );
    assert.equal(await page.getByTestId('simulator-panel').isVisible(), true);
    assert.equal(await page.getByTestId('sim-cards-empty').isVisible(), true);
    assert.equal(await page.getByTestId('simulator-setting').isChecked(), true);
    await saveScreenshot(page, `${screenshots}/simulator-on.png`);
  });

  test('when a card with 50 credits is placed from the panel, then the window and /readcard show it', async () => {
    await page.getByTestId('sim-credits').fill('50');
    await page.getByTestId('sim-uid').fill(CARD);
    await page.getByTestId('sim-place').click();
    assert.equal(await result(/Placed/), `Placed: card ${CARD}, 50 credits.`);
    await page.getByTestId('card-id').filter({ hasText: CARD }).waitFor();
    await page.getByTestId('last-card-detail').filter({ hasText: '50 credits' }).waitFor();
    await cardRow(CARD, /50 credits\s*on the reader/);
    const read = await call('GET', '/readcard');
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json, { cardId: CARD, credits: 50, rechargeAmount: null });
    await saveScreenshot(page, `${screenshots}/simulator-card-placed.png`);
  });

  test('when the panel sends bad input, then the window says why and the simulator is unchanged', async () => {
    const before = service.simulator?.status();
    for (const [credits, uid, answer] of [
      ['1.5', '', /credits must be a whole number from 0 to/],
      ['ten', '', /credits must be a whole number from 0 to/],
      ['5', 'xyz', /UID must be 8 or 14 hex digits/],
      ['5', CARD, new RegExp(`Card ${CARD} exists; put it back instead`)],
    ] as const) {
      await page.getByTestId('sim-credits').fill(credits);
      await page.getByTestId('sim-uid').fill(uid);
      await clearResult();
      await page.getByTestId('sim-place').click();
      await result(answer);
      assert.equal(await page.getByTestId('sim-result').getAttribute('role'), 'alert');
    }
    assert.deepEqual(service.simulator?.status(), before);
    await saveScreenshot(page, `${screenshots}/simulator-bad-input.png`);
    await page.getByTestId('sim-uid').fill('');
  });

  test('when a tear after commit is armed from the panel, then /writecard answers CardRemovedDuringWrite; put back from the panel, the card holds the new balance and money is exact', async () => {
    const pool = await shopCredits(ledger.url);
    await page.getByTestId('sim-fault').selectOption('tear-after-commit');
    await page.getByTestId('sim-arm').click();
    assert.equal(await result(/Armed/), `Armed tear-after-commit on card ${CARD}, 50 credits.`);
    const torn = await call('POST', '/writecard', { credits: 10 });
    assert.equal(torn.status, 500, torn.text);
    assert.deepEqual(torn.json, { error: 'CardRemovedDuringWrite' });
    await page.getByTestId('card-id').filter({ hasText: 'none' }).waitFor();
    await saveScreenshot(page, `${screenshots}/simulator-torn.png`);

    await page
      .getByTestId('sim-cards')
      .locator('tbody tr')
      .filter({ hasText: CARD })
      .getByTestId('sim-put-back')
      .click();
    await page.getByTestId('card-id').filter({ hasText: CARD }).waitFor();
    await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'movement settled');
    await cardRow(CARD, /60 credits\s*on the reader/);
    assert.equal(await shopCredits(ledger.url), pool - 10, 'the pool paid exactly the 10 credits');
  });

  test('when the card is taken away from the panel, then the window shows no card and /readcard answers NoCard', async () => {
    await page.getByTestId('sim-take-away').click();
    assert.equal(await result(/taken away/), 'The card was taken away.');
    await page.getByTestId('card-id').filter({ hasText: 'none' }).waitFor();
    await cardRow(CARD, /Put back/);
    const read = await call('GET', '/readcard');
    assert.equal(read.status, 400, read.text);
    assert.deepEqual(read.json, { error: 'NoCard' });
    await clearResult();
    await page.getByTestId('sim-arm').click();
    assert.match(await result(/No simulated card/), /No simulated card is in the field/);
  });

  test('when the window is 360 px wide, then the simulator panel fits and its controls are reachable', async () => {
    await page.setViewportSize({ width: 360, height: 1600 });
    try {
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      assert.equal(overflow, 0);
      for (const testId of ['simulator-banner', 'sim-place', 'sim-take-away', 'sim-arm']) {
        const box = await page.getByTestId(testId).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${testId} fits: ${box?.x}`);
      }
      await saveScreenshot(page, `${screenshots}/simulator-narrow-360.png`);
    } finally {
      await page.setViewportSize({ width: 900, height: 1100 });
    }
  });

  test('when the simulator setting is turned off and saved, then the service core restarts without it', async () => {
    await page.getByTestId('simulator-setting').uncheck();
    await page.getByTestId('save-settings').click();
    await page.getByTestId('settings-saved').filter({ hasText: 'restarted' }).waitFor();
    assert.equal(restarts.length, 1);
    assert.equal(restarts[0]?.simulator, false);
    assert.equal(settings.simulator, false);
  });
});
