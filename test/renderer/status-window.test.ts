import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { applySeed } from '../../cloud/seed.ts';
import { type Settings } from '../../main/settings.ts';
import { followService } from '../../main/status-feed.ts';
import {
  emptySnapshot,
  RECENT_REQUESTS,
  statusModel,
  type StatusSnapshot,
} from '../../main/status-model.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { RATE_LIMITS } from '../../service/http/rate-limits.ts';
import { listen } from '../../common/listen.ts';
import { startCardRig, type CardRig } from '../support/card-rig.ts';
import { httpRequest } from '../support/http-client.ts';
import {
  openAdvanced,
  openStatusWindow,
  playMain,
  type StatusWindowPage,
} from '../support/status-window-page.ts';
import { TEST_API_KEY, TEST_SHOP } from '../support/test-ledger.ts';
import { VirtualCard } from '../support/virtual-card.ts';
import { saveScreenshot } from '../support/browser.ts';

// The status window (renderer/) in Debian's Chromium. The test plays main/'s part: it
// implements the window.cardWallet bridge over a real service core on the virtual card rig,
// with the same status feed and settings checks main/ uses, and the spec's rate limits.
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));
const NEW_KEY = 'a-new-key-for-the-till-0123';

let rig: CardRig;
let statusWindow: StatusWindowPage;
let page: Page;
let settings: Settings;
let recovery: string | null = null;
/** What storing the settings throws, as a full disk or a denied keyring would. */
let persistFailure: Error | undefined;
let feed: ReturnType<typeof followService>;

// main/'s part; restarting the service core is not part of these tests.
const bridgeInvoke = playMain({
  snapshot: () => feed.snapshot(),
  settings: () => settings,
  persist: (saved) => {
    if (persistFailure) throw persistFailure;
    settings = saved;
  },
  service: () => rig.service,
  recovery: () => recovery,
  plainTextKeyStorage: true,
});

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  rig = await startCardRig({}, { limits: RATE_LIMITS });
  settings = {
    apiKey: TEST_API_KEY,
    allowedOrigins: [],
    port: rig.service.port,
    cloudUrl: rig.ledgerProxy.url,
    reader: 'Virtual PCD 00 00',
    cardKey: 'FFFFFFFFFFFF',
    cardKeyType: 'A',
    cardMasterKey: null,
    autoPersonalize: true,
    refuseCardsAboveAccount: false,
    walletSector: 1,
    startAtLogin: false,
    simulator: false,
    updateFeedUrl: null,
    updateInstall: 'operator',
    updateIdleMinutes: 30,
    updateInstallHour: 3,
    // Kept as main/ keeps it: the id the service made at its first start.
    tillId: rig.service.tillId,
  };
  const opened = await openStatusWindow(bridgeInvoke);
  statusWindow = opened;
  page = opened.page;
  feed = followService(rig.service, emptySnapshot(), opened.push);
  await page.goto(opened.url);
  await page.getByTestId('reader-name').filter({ hasText: 'Virtual PCD 00 00' }).waitFor();
});
after(async () => {
  feed?.stop();
  await statusWindow?.close();
  await rig?.close();
});

describe('the status window', () => {
  test('when it opens, then it shows the service, the reader and the ledger', async () => {
    assert.equal(await page.getByTestId('service-state').textContent(), 'running');
    assert.equal(await page.getByTestId('service-url').textContent(), rig.service.url);
    assert.equal(await page.getByTestId('copy-url').isEnabled(), true, 'Copy URL is enabled');
    assert.equal(await page.getByTestId('card-id').textContent(), 'none');
    assert.equal(
      await page.getByTestId('plain-text-warning').isVisible(),
      true,
      'the plain-text storage warning shows',
    );
    // A real reader: no simulator banner, no simulator panel, the setting off.
    assert.equal(await page.getByTestId('simulator-banner').isVisible(), false);
    assert.equal(await page.getByTestId('simulator-panel').isVisible(), false);
    assert.equal(await page.getByTestId('simulator-setting').isChecked(), false);
    await saveScreenshot(page, `${screenshots}/ready.png`);
  });

  // How fast is not asserted here (a busy machine is slower, not wrong): the window shows what
  // the feed pushes, without polling, and that is what is waited for.
  test('when a card is placed, then its UID and credits show', async () => {
    const card = new VirtualCard({
      uid: Buffer.from('04A1B2C3', 'hex'),
      blocks: { 4: encodeValueBlock(42, 1) },
    });
    await rig.reader.insert(card);
    await page.getByTestId('card-id').filter({ hasText: '04A1B2C3' }).waitFor();
    await page.getByTestId('last-card-detail').filter({ hasText: '42 credits' }).waitFor();
    await saveScreenshot(page, `${screenshots}/card-present.png`);
  });

  test('when /readcard is called six times in 10 s, then a rate-limit hit for /readcard shows', async () => {
    for (let i = 0; i < 6; i += 1) {
      await httpRequest(`${rig.service.url}/readcard`, { headers: { 'X-Api-Key': TEST_API_KEY } });
    }
    const row = page
      .getByTestId('rate-limits')
      .locator('tbody tr')
      .filter({ hasText: '/readcard' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /\/readcard\s*1/);
    assert.equal(await page.getByTestId('rate-limits-empty').isVisible(), false);
    // The Key column is explained: a key's fingerprint, or "address" for failed authentications.
    const help = await page.getByTestId('rate-limits-help').innerText();
    assert.match(help, /fingerprint of the API key/, help);
    assert.match(help, /“address” when the limit was on failed authentications/, help);
    await page
      .getByTestId('requests')
      .locator('tbody tr')
      .filter({ hasText: '429' })
      .first()
      .waitFor();
    await saveScreenshot(page, `${screenshots}/rate-limited.png`);
  });

  test('when hundreds of requests came in, then the list scrolls inside its panel and the settings stay where they were', async () => {
    await page.setViewportSize({ width: 900, height: 1100 });
    const saveButtonTop = async () => (await page.getByTestId('save-settings').boundingBox())?.y;
    const quiet = await saveButtonTop();
    let busy = feed.snapshot();
    for (let i = 0; i < 3 * RECENT_REQUESTS; i += 1) {
      busy = statusModel.request(busy, {
        at: new Date(),
        method: 'GET',
        path: `/readcard?n=${i}`,
        status: 200,
        origin: 'https://pos.example.com',
        keyFingerprint: null,
      });
    }
    statusWindow.push(busy);
    const rows = page.getByTestId('requests').locator('tbody tr');
    await rows.nth(RECENT_REQUESTS - 1).waitFor();
    assert.equal(await rows.count(), RECENT_REQUESTS, 'the list keeps the most recent ones');
    const list = await page
      .getByTestId('requests-scroll')
      .evaluate((element) => ({ height: element.clientHeight, content: element.scrollHeight }));
    assert.ok(list.height <= 300, `the list is ${list.height} px high`);
    assert.ok(list.content > list.height, `the list scrolls: ${JSON.stringify(list)}`);
    // However many requests came, the settings below are no further down than with a few.
    const busyTop = await saveButtonTop();
    assert.ok(
      quiet !== undefined && busyTop !== undefined && busyTop - quiet <= 300,
      `Save settings moved from ${quiet} to ${busyTop}`,
    );
    await saveScreenshot(page, `${screenshots}/wide-900.png`);
    statusWindow.push(feed.snapshot());
  });

  test('when an invalid origin is saved, then the window explains it and nothing changes', async () => {
    await page
      .getByTestId('allowed-origins')
      .fill('https://pos.example.com/till\nhttps://*.example.com');
    await page.getByTestId('save-settings').click();
    const problems = page.getByTestId('settings-problems');
    await problems.waitFor();
    const text = (await problems.textContent()) ?? '';
    assert.match(text, /pos\.example\.com\/till: not an exact origin/);
    assert.match(text, /wildcards are not allowed/);
    assert.deepEqual(rig.service.settings.allowedOrigins, []);
    assert.equal(rig.service.settings.apiKey, TEST_API_KEY);
    await saveScreenshot(page, `${screenshots}/invalid-origin.png`);
    await page.getByTestId('allowed-origins').fill('');
  });

  test('when a ledger URL with a space or an impossible port is saved, then the window says why and nothing changes', async () => {
    for (const url of ['https://exa mple.com', 'https://host:99999']) {
      await page.getByTestId('cloud-url').fill(url);
      await page.getByTestId('save-settings').click();
      const problems = page.getByTestId('settings-problems');
      await problems.filter({ hasText: 'ledger URL' }).waitFor();
      assert.equal(settings.cloudUrl, rig.ledgerProxy.url);
    }
    await saveScreenshot(page, `${screenshots}/bad-ledger-url.png`);
    await page.getByTestId('cloud-url').fill(rig.ledgerProxy.url);
  });

  test('when the saved settings could not be read at start, then the window says so and asks for the key', async () => {
    recovery =
      'The saved settings could not be read (keyring locked); they were backed up and defaults are in use. Enter the API key again.';
    try {
      await page.reload();
      const warning = page.getByTestId('settings-recovery');
      await warning.filter({ hasText: 'Enter the API key again' }).waitFor();
      await saveScreenshot(page, `${screenshots}/settings-recovered.png`);
    } finally {
      recovery = null;
      await page.reload();
      await page.getByTestId('reader-name').filter({ hasText: 'Virtual PCD 00 00' }).waitFor();
    }
  });

  test('when a new API key is saved, then the old key gets 401 and the new one works', async () => {
    // The ledger must know the new key for it to resolve to the shop (the provider registers it).
    await applySeed(rig.ledger.db, { customers: [{ ...TEST_SHOP, keys: [NEW_KEY] }] });
    await page.getByTestId('show-key').click();
    assert.equal(
      await page.getByTestId('api-key').inputValue(),
      TEST_API_KEY,
      'shown in clear when asked',
    );
    await page.getByTestId('api-key').fill(NEW_KEY);
    await page.getByTestId('save-settings').click();
    await page.getByTestId('settings-saved').filter({ hasText: 'in effect now' }).waitFor();
    const old = await httpRequest(`${rig.service.url}/info`, {
      headers: { 'X-Api-Key': TEST_API_KEY },
    });
    assert.equal(old.status, 401);
    assert.deepEqual(old.json, { error: 'Unauthorized: invalid api key' });
    const fresh = await httpRequest(`${rig.service.url}/info`, {
      headers: { 'X-Api-Key': NEW_KEY },
    });
    assert.equal(fresh.status, 200, fresh.text);
    await saveScreenshot(page, `${screenshots}/key-saved.png`);
  });

  test('when the new port is in use, then the window says so and the service stays on its port', async () => {
    const blocker = await listen(() => undefined, 0);
    try {
      const port = rig.service.port;
      await page.getByTestId('port').fill(String(blocker.port));
      await page.getByTestId('save-settings').click();
      await page
        .getByTestId('settings-problems')
        .filter({ hasText: `Port ${blocker.port} is in use` })
        .waitFor();
      assert.equal(rig.service.port, port);
      assert.equal((await httpRequest(`${rig.service.url}/ping`)).text, '"pong"');
      await page.getByTestId('port').fill(String(port));
    } finally {
      await blocker.close();
    }
  });

  test('when the settings cannot be stored, then the window says why and the live settings are put back', async () => {
    persistFailure = new Error('ENOSPC: no space left on device, write');
    try {
      await page.getByTestId('allowed-origins').fill('https://pos.example.com');
      await page.getByTestId('save-settings').click();
      await page
        .getByTestId('settings-problems')
        .filter({
          hasText:
            'The settings could not be saved: ENOSPC: no space left on device, write. Nothing was changed.',
        })
        .waitFor();
      assert.deepEqual(rig.service.settings.allowedOrigins, [], 'the origin was put back');
      assert.deepEqual(settings.allowedOrigins, [], 'nothing stored');
      await saveScreenshot(page, `${screenshots}/save-failed.png`);
    } finally {
      persistFailure = undefined;
      await page.getByTestId('allowed-origins').fill('');
    }
  });

  test('when the ledger is not reachable and movements wait for confirmation, then both show as warnings', async () => {
    const state = page.getByTestId('ledger-state');
    const waiting = page.getByTestId('ledger-waiting');
    const running = feed.snapshot();
    statusWindow.push({
      ...running,
      ledger: { ...running.ledger, reachable: false, unconfirmedMovements: 2 },
    });
    await page.locator('[data-testid="ledger-state"].warning').waitFor();
    assert.equal(await state.textContent(), 'not reachable');
    await page.locator('[data-testid="ledger-waiting"].warning').waitFor();
    assert.equal(await waiting.textContent(), '2 movement(s) waiting for confirmation');
    await saveScreenshot(page, `${screenshots}/ledger-warnings.png`);
    statusWindow.push({
      ...running,
      ledger: { ...running.ledger, reachable: true, unconfirmedMovements: 0 },
    });
    await page.locator('[data-testid="ledger-state"]:not(.warning)').waitFor();
    assert.equal(await state.textContent(), 'reachable');
    assert.equal(await waiting.getAttribute('class'), 'detail', 'no warning when none waits');
  });

  test('when the service has no URL (starting or failed), then Copy URL is disabled until it runs', async () => {
    const running = feed.snapshot();
    const copy = page.getByTestId('copy-url');
    for (const service of [
      { url: null, state: 'starting', error: null },
      { url: null, state: 'error', error: 'port 4178 is in use' },
    ] as const) {
      statusWindow.push({ ...running, service });
      await page.getByTestId('service-state').filter({ hasText: service.state }).waitFor();
      assert.equal(await copy.isDisabled(), true, `disabled while ${service.state}`);
    }
    statusWindow.push(running);
    await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
    assert.equal(await copy.isEnabled(), true, 'enabled once running');
  });

  test('when movements wait for their card, then the ledger panel says which cards to put back here, which wait at another till, and which the provider decides; overdue ones say so', async () => {
    const since = new Date().toISOString();
    const waiting = (owner: 'this-till' | 'other-till' | 'operator', overdue = false) => ({
      kind: 'recharge' as const,
      cardId: '04A1B2C3',
      credits: 6,
      since,
      owner,
      overdue,
    });
    const pushWaiting = (waitingForCard: StatusSnapshot['ledger']['waitingForCard']) => {
      const snapshot = feed.snapshot();
      statusWindow.push({ ...snapshot, ledger: { ...snapshot.ledger, waitingForCard } });
    };
    pushWaiting([
      waiting('this-till'),
      { ...waiting('other-till', true), kind: 'discharge', cardId: '04D1D2D3', credits: 9 },
      { ...waiting('operator'), cardId: '04E1E2E3', credits: 2 },
    ]);
    const warning = page.getByTestId('ledger-waiting-for-card');
    await warning.filter({ hasText: 'recharge of 6 on card 04A1B2C3' }).waitFor();
    const at = new Date(since).toLocaleTimeString();
    assert.deepEqual(await warning.locator('.waiting-group').allTextContents(), [
      `Put back card(s) to finish: recharge of 6 on card 04A1B2C3 (since ${at}).`,
      `Waiting at another till: discharge of 9 on card 04D1D2D3 (since ${at}, overdue). Present the card at that till; if it is gone for good, put the card on this reader and press Settle.`,
      `For the provider: recharge of 2 on card 04E1E2E3 (since ${at}). No card state to decide it by: the provider decides it at the ledger.`,
    ]);
    assert.equal(await page.getByTestId('settle-card').isVisible(), true, 'Settle offered');
    await saveScreenshot(page, `${screenshots}/waiting-for-card.png`);
    // Only this till's: no Settle (the card decides them here when it is presented).
    pushWaiting([waiting('this-till')]);
    await warning.filter({ hasNotText: 'another till' }).waitFor();
    assert.equal(await page.getByTestId('settle-card').isVisible(), false, 'no Settle');
    pushWaiting([]);
    await warning.waitFor({ state: 'hidden' });
  });

  test("when the service runs, then the window shows this till's id; a save with the field empty keeps it, a wrong one is explained, another one replaces it and restarts the service", async () => {
    const tillId = rig.service.tillId;
    const saved = page.getByTestId('settings-saved');
    try {
      await page.getByTestId('till-id').filter({ hasText: tillId }).waitFor();
      await openAdvanced(page);
      const field = page.getByTestId('till-id-setting');
      assert.equal(await field.inputValue(), tillId);
      await field.fill('');
      await page.getByTestId('save-settings').click();
      await saved.filter({ hasText: 'in effect now' }).waitFor();
      assert.equal(settings.tillId, tillId, 'an empty field keeps it');
      assert.equal(await field.inputValue(), tillId, 'and shows it again');

      await field.fill('till-1');
      await page.getByTestId('save-settings').click();
      await page
        .getByTestId('settings-problems')
        .filter({ hasText: 'The till id must be a UUID' })
        .waitFor();
      assert.equal(settings.tillId, tillId, 'nothing saved');

      const other = randomUUID();
      await field.fill(other.toUpperCase());
      await page.getByTestId('save-settings').click();
      await saved.filter({ hasText: 'restarted' }).waitFor();
      assert.equal(settings.tillId, other);
      // The window shows the running service's id: this test does not restart it.
      assert.equal(await page.getByTestId('till-id').textContent(), tillId);
    } finally {
      settings = { ...settings, tillId };
      await page.getByTestId('till-id-setting').fill(tillId);
    }
  });

  test('when the window is 360 px wide, then nothing overflows sideways and every control is reachable', async () => {
    await page.setViewportSize({ width: 360, height: 1400 });
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    assert.equal(overflow, 0);
    for (const testId of [
      'copy-url',
      'till-id',
      'api-key',
      'show-key',
      'allowed-origins',
      'save-settings',
    ]) {
      const box = await page.getByTestId(testId).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${testId} fits`);
    }
    await saveScreenshot(page, `${screenshots}/narrow-360.png`);
  });
});
