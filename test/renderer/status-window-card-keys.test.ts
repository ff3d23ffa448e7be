import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createIpc } from '../../main/ipc.ts';
import { setupCardActionsIpc } from '../../main/card-actions-ipc.ts';
import type { Settings } from '../../main/settings.ts';
import { setupSimulatorIpc } from '../../main/simulator-ipc.ts';
import { followService } from '../../main/status-feed.ts';
import { emptySnapshot } from '../../main/status-model.ts';
import { trayTooltip } from '../../main/tray-state.ts';
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
import { startTestService, type TestService } from '../support/test-service.ts';
import { saveScreenshot } from '../support/browser.ts';

// Per-card keys in the status window, in Debian's Chromium, against a real service core with
// the card simulator and a card master key (no pcscd): the "Personalize the card on the reader"
// button, the suspect flag of a card the ledger refuses to pay out, and the master key setting.
// The test plays main/'s part as the other window tests do; the personalize and simulator
// channels go through main/'s own handlers on the mock ipcMain.
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));
// Test master keys (public: never real ones).
const MASTER = '000102030405060708090A0B0C0D0E0F';
const NEW_MASTER = 'F0E0D0C0B0A090807060504030201000';

let till: SimulatedTill;
let ledger: TestLedger;
let service: TestService;
/** The core the button personalizes with (main/'s `service`, replaced by a restart). */
let current: TestService | undefined;
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
  handlers: {
    ipcMain,
    channels: (channel) => channel.startsWith('simulator:') || channel === 'card:personalize',
  },
});

const call = apiCaller(() => service.url, TEST_API_KEY);

/** Places a simulated card (with `credits` no ledger issued) and waits until it is seen. */
async function place(uid: string, credits?: number, type?: 'desfire'): Promise<void> {
  await service.simulator?.place({ uid, credits, type });
  await page.getByTestId('card-id').filter({ hasText: uid }).waitFor();
}

/** Presses the button and returns the window's answer once it is one that `text` matches. */
async function personalize(text: RegExp): Promise<string> {
  const line = page.getByTestId('personalize-result');
  await line.evaluate((element) => (element.textContent = ''));
  await page.getByTestId('personalize-card').click();
  await line.filter({ hasText: text }).waitFor();
  return (await line.textContent()) ?? '';
}

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  till = await startSimulatedTill({ cardMasterKey: MASTER });
  ({ ledger, service, settings } = till);
  current = service;
  const ipc = createIpc(
    ipcMain,
    () => true,
    () => undefined,
  );
  setupSimulatorIpc(ipc, () => service.simulator);
  setupCardActionsIpc(
    ipc,
    () => current,
    () => undefined,
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

describe('the status window with per-card keys', () => {
  test('when no card is on the reader and the button is pressed, then the window asks for one', async () => {
    assert.equal(
      await personalize(/No card/),
      'No card on the reader: put the card on the reader and try again.',
    );
    assert.equal(await page.getByTestId('personalize-result').getAttribute('role'), 'alert');
  });

  test('when a fresh card is personalized from the window, then it opens with its own keys; pressed again, it was already personalized', async () => {
    await place('C11B0001');
    assert.equal(
      await personalize(/personalized/),
      'Card C11B0001 is personalized: it has its own keys now (0 credits).',
    );
    assert.equal(await page.getByTestId('personalize-result').getAttribute('role'), 'status');
    assert.equal(
      await personalize(/already/),
      'Card C11B0001 was already personalized; nothing was written.',
    );
    const read = await call('GET', '/readcard');
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json, { cardId: 'C11B0001', credits: 0, rechargeAmount: null });
    await saveScreenshot(page, `${screenshots}/card-personalized.png`);
  });

  test('when a factory-fresh DESFire card is personalized from the window, then it is personalized; pressed again, it was already personalized', async () => {
    await place('04C11B00000001', undefined, 'desfire');
    assert.equal(
      await personalize(/personalized/),
      'Card 04C11B00000001 is personalized: it has its own keys now (0 credits).',
    );
    assert.equal(
      await personalize(/already/),
      'Card 04C11B00000001 was already personalized; nothing was written.',
    );
    const read = await call('GET', '/readcard');
    assert.deepEqual(read.json, { cardId: '04C11B00000001', credits: 0, rechargeAmount: null });
  });

  test('when the card is taken off during personalization, then the window says so; put back and pressed again, it is personalized', async () => {
    await place('C11B0002');
    await service.simulator?.arm('tear-after-commit');
    assert.match(await personalize(/taken off/), /nothing moved\. Put it back and personalize/);
    await page.getByTestId('card-id').filter({ hasText: 'none' }).waitFor();
    await service.simulator?.putBack('C11B0002');
    await page.getByTestId('card-id').filter({ hasText: 'C11B0002' }).waitFor();
    assert.match(await personalize(/personalized/), /^Card C11B0002 is personalized/);
  });

  test('when a card of another system is on the reader, then the window says it does not open with our keys', async () => {
    await place('C11B0003');
    await service.simulator?.arm('wrong-key');
    assert.match(
      await personalize(/does not open/),
      /does not open with this shop's keys \(a foreign card, or one personalized with another master key\): hand it back\./,
    );
  });

  test('when the service core has no master key, then the window says to set one', async () => {
    const without = await startTestService({ cloudUrl: ledger.url, simulator: true });
    try {
      await without.simulator?.place({ uid: 'C11B0004' });
      await waitUntil(() => without.readers.status.card !== null, 5_000, 'card seen');
      current = without;
      assert.match(
        await personalize(/master key/),
        /^No card master key is set: set one in the settings/,
      );
    } finally {
      current = service;
      await without.close();
    }
  });

  test('when a card holding credits the shop never put on it is personalized and paid out, then the discharge is refused and the window and tooltip flag it suspect', async () => {
    // The control API places a card with a balance no ledger issued: a forged card.
    await place('C11B0005', 40);
    assert.equal(await page.getByTestId('last-card-suspect').isVisible(), false);
    assert.match(await personalize(/personalized/), /^Card C11B0005 .*\(40 credits\)/);
    const pool = await shopCredits(ledger.url);
    const refused = await call('POST', '/dischargecard');
    assert.equal(refused.status, 500, refused.text);
    assert.deepEqual(refused.json, { error: 'CardAccountExceeded' }, refused.text);
    const suspect = page.getByTestId('last-card-suspect');
    await suspect.waitFor();
    assert.match(
      (await suspect.textContent()) ?? '',
      /Flagged suspect by the ledger \(discharge refused: the card holds more than the shop put\s+on it\)/,
    );
    assert.equal(await page.getByTestId('last-card-id').textContent(), 'C11B0005');
    assert.equal(
      trayTooltip(feed.snapshot()),
      'Card Wallet Worker: card C11B0005 flagged suspect by the ledger (discharge refused: holds more than the shop put on it)',
    );
    assert.equal(service.simulator?.status().card?.credits, 40, 'the card is not written');
    assert.equal(await shopCredits(ledger.url), pool, 'nothing left the pool');
    await saveScreenshot(page, `${screenshots}/card-suspect.png`);

    // The till finds the same card's movement records do not explain it: the window says why.
    service.activity.emit('card-answer', {
      at: new Date(),
      cardId: 'C11B0005',
      credits: 40,
      suspect: true,
      suspectReason: 'record-of-voided-movement',
    });
    await page.getByText('Flagged suspect: its newest movement record names a movement').waitFor();
    assert.equal(
      await suspect.textContent(),
      "Flagged suspect: its newest movement record names a movement found not written. Do not pay it out; keep the card and call the shop's provider.",
    );

    // Another card on the reader: the flag was this card's.
    await place('C11B0006');
    await suspect.waitFor({ state: 'hidden' });
  });

  test('when the settings show, then the master key is said to be set but never sent to the window', async () => {
    assert.match(
      (await page.getByTestId('master-key-state').textContent()) ?? '',
      /^set; type a new one to replace it/,
    );
    assert.equal(await page.getByTestId('card-master-key').inputValue(), '');
    assert.equal(await page.getByTestId('auto-personalize').isChecked(), true);
    const html = (await page.content()).toUpperCase();
    assert.equal(html.includes(MASTER), false, 'the master key is nowhere in the page');
  });

  test('when a master key that is not 32 hex digits is saved, then the window says why and nothing changes', async () => {
    await page.getByTestId('card-master-key').fill('0011223344');
    await page.getByTestId('save-settings').click();
    await page
      .getByTestId('settings-problems')
      .filter({ hasText: 'The card master key must be 32 hex digits (16 bytes)' })
      .waitFor();
    assert.equal(settings.cardMasterKey, MASTER);
    assert.deepEqual(restarts, []);
    await saveScreenshot(page, `${screenshots}/master-key-invalid.png`);
  });

  test('when a new master key is saved, then the service core restarts with it and the typed key leaves the window', async () => {
    await page.getByTestId('card-master-key').fill(NEW_MASTER);
    await page.getByTestId('save-settings').click();
    await page.getByTestId('settings-saved').filter({ hasText: 'restarted' }).waitFor();
    assert.deepEqual(
      restarts.map((next) => next.cardMasterKey),
      [NEW_MASTER],
    );
    // The typed key does not stay in the window once saved.
    await page.waitForFunction(
      `document.querySelector('[data-testid="card-master-key"]').value === ''`,
    );
  });

  test('when the master key is cleared, autoPersonalize turned off and cards above their account refused, then the service core restarts with that', async () => {
    assert.equal(await page.getByTestId('refuse-cards-above-account').isChecked(), false);
    await page.getByTestId('clear-master-key').check();
    await page.getByTestId('auto-personalize').uncheck();
    await page.getByTestId('refuse-cards-above-account').check();
    await page.getByTestId('save-settings').click();
    await page
      .getByTestId('master-key-state')
      .filter({ hasText: 'not set: every card opens with the card key' })
      .waitFor();
    assert.equal(restarts.length, 2);
    assert.equal(restarts[1]?.cardMasterKey, null);
    assert.equal(restarts[1]?.autoPersonalize, false);
    assert.equal(restarts[1]?.refuseCardsAboveAccount, true);
    assert.equal(await page.getByTestId('clear-master-key').isDisabled(), true);
    await saveScreenshot(page, `${screenshots}/master-key-cleared.png`);
  });
});
