import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { setupCardActionsIpc } from '../../main/card-actions-ipc.ts';
import { createIpc } from '../../main/ipc.ts';
import type { Settings } from '../../main/settings.ts';
import { followService } from '../../main/status-feed.ts';
import { emptySnapshot } from '../../main/status-model.ts';
import { LedgerClient } from '../../service/cloud/ledger-client.ts';
import { FakeIpcMain } from '../support/electron-mock.ts';
import {
  openStatusWindow,
  playMain,
  startSimulatedTill,
  type SimulatedTill,
  type StatusWindowPage,
} from '../support/status-window-page.ts';
import { importCardBalance, TEST_API_KEY } from '../support/test-ledger.ts';
import { saveScreenshot } from '../support/browser.ts';

// Another till's movements in the status window, in Debian's Chromium, against a real service
// core on the card simulator and a real ledger: the Cloud ledger panel says whose they are and
// what to do, and "Settle the card on the reader" decides them from the card (POST
// /cards/settle's use case, through main/'s own handler on the mock ipcMain).
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));
const OTHER_TILL = '00000000-0000-4000-8000-00000000beef';

let till: SimulatedTill;
let ledger: LedgerClient;
let statusWindow: StatusWindowPage;
let page: Page;
let feed: ReturnType<typeof followService>;
let settings: Settings;
const ipcMain = new FakeIpcMain();

const bridgeInvoke = playMain({
  snapshot: () => feed.snapshot(),
  settings: () => settings,
  persist: (saved) => (settings = saved),
  service: () => till.service,
  handlers: { ipcMain, channels: (channel) => channel === 'card:settle' },
});

/** Places a simulated card holding `credits` (its account at the ledger too); waits until seen. */
async function place(uid: string, credits: number): Promise<void> {
  await till.service.simulator?.place({ uid, credits });
  await importCardBalance(till.ledger, uid, credits);
  await page.getByTestId('card-id').filter({ hasText: uid }).waitFor();
}

/** Another till's pending movement of `cardId`, planned from the card state `cardBefore`. */
async function otherTillMovement(
  cardId: string,
  kind: 'recharge' | 'discharge',
  credits: number,
  cardBefore: string,
): Promise<string> {
  const id = randomUUID();
  await ledger.createMovement(TEST_API_KEY, {
    id,
    kind,
    cardId,
    credits,
    tillId: OTHER_TILL,
    cardBefore,
  });
  return id;
}

/** Presses Settle and returns the window's answer once it is one that `text` matches. */
async function settle(text: RegExp): Promise<string> {
  const line = page.getByTestId('settle-result');
  await line.evaluate((element) => (element.textContent = ''));
  await page.getByTestId('settle-card').click();
  await line.filter({ hasText: text }).waitFor();
  return (await line.textContent()) ?? '';
}

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  // Reconciling every second: the panel learns of another till's movement within a second.
  till = await startSimulatedTill({ reconcileEveryMs: 1_000 });
  settings = till.settings;
  ledger = new LedgerClient({ baseUrl: till.ledger.url });
  const ipc = createIpc(
    ipcMain,
    () => true,
    () => undefined,
  );
  setupCardActionsIpc(
    ipc,
    () => till.service,
    () => undefined,
  );
  statusWindow = await openStatusWindow(bridgeInvoke);
  page = statusWindow.page;
  feed = followService(till.service, emptySnapshot(), statusWindow.push);
  await page.goto(statusWindow.url);
  await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
});
after(async () => {
  feed?.stop();
  await statusWindow?.close();
  await till?.close();
});

describe('the status window with several tills', () => {
  test("when another till's payout waits for its card, then the panel lists it as that till's and Settle voids it from the card on the reader, which shows it did not land", async () => {
    const cardId = '04C0FFEE';
    await place(cardId, 30);
    const id = await otherTillMovement(cardId, 'discharge', 30, 'classic:v1:30:1:0');
    const waiting = page.getByTestId('ledger-waiting-for-card');
    await waiting
      .filter({ hasText: `Waiting at another till: discharge of 30 on card ${cardId}` })
      .waitFor();
    assert.match(
      (await waiting.textContent()) ?? '',
      /if it is gone for good, put the card on this reader and press Settle/,
    );
    assert.doesNotMatch((await waiting.textContent()) ?? '', /Put back card/, "not this till's");
    await saveScreenshot(page, `${screenshots}/waiting-at-another-till.png`);

    const answer = await settle(/decided/);
    assert.equal(
      answer,
      `Card ${cardId}: decided discharge of 30 from till ${OTHER_TILL}: voided.`,
    );
    const movement = await ledger.getMovement(TEST_API_KEY, id);
    assert.equal(movement.state, 'voided', JSON.stringify(movement));
    assert.equal(movement.resolvedByTill, till.service.tillId, JSON.stringify(movement));
    // The next reconciliation finds nothing waiting: the warning and the button go.
    await waiting.waitFor({ state: 'hidden' });
    assert.equal(await page.getByTestId('settle-card').isVisible(), false);
    assert.equal(till.service.simulator?.status().card?.credits, 30, 'the card is not written');
  });

  test("when the card cannot decide another till's movement, then the window says which and why, as an alert; with no card on the reader, it says to put one there", async () => {
    const cardId = '04C0FFEF';
    await place(cardId, 12);
    // Planned from a state this card never showed: it holds neither the before nor the after.
    const id = await otherTillMovement(cardId, 'recharge', 5, 'classic:v1:40:3:1');
    await page.getByTestId('settle-card').waitFor();
    const answer = await settle(/not decided/);
    assert.match(
      answer,
      new RegExp(`^Card ${cardId}: not decided recharge of 5 from till ${OTHER_TILL} \\(.+\\)\\.$`),
    );
    assert.equal(await page.getByTestId('settle-result').getAttribute('role'), 'alert');
    assert.equal((await ledger.getMovement(TEST_API_KEY, id)).state, 'pending');

    await till.service.simulator?.takeAway();
    await page.getByTestId('card-id').filter({ hasText: 'none' }).waitFor();
    assert.match(await settle(/No card/), /^No card on the reader: put the card on the reader/);
    assert.equal((await ledger.getMovement(TEST_API_KEY, id)).state, 'pending');
  });
});
