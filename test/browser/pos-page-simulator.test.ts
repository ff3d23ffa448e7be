// The example POS page's card simulator panel in Chromium, against a service started with the
// simulator (no pcscd, no virtual reader rig): the cashier's flow and a torn write, driven
// only through the page, with the ledger and the card agreeing at the end.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { EXAMPLE_PAGE, serveExamplePages, type StaticServer } from '../support/static-server.ts';
import {
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { withoutReceipt } from '../support/http-client.ts';

let site: StaticServer;
let ledger: TestLedger;
let service: TestService;
let browser: Browser;

before(async () => {
  [site] = (await serveExamplePages(['127.0.0.2'])) as [StaticServer];
  ledger = await startTestLedger();
  service = await startTestService(
    { cloudUrl: ledger.url, simulator: true, allowedOrigins: [site.origin] },
    { limits: ROOMY_LIMITS },
  );
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await service?.close();
  await ledger?.close();
  await site?.close();
});

async function click(page: Page, button: string): Promise<{ status: string; body: unknown }> {
  const marker = `waiting for ${button} ${Date.now()}`;
  await page
    .getByTestId('result-call')
    .evaluate((element, text) => (element.textContent = text), marker);
  await page.getByTestId(button).click();
  await page.waitForFunction(
    `document.querySelector('[data-testid="result-call"]').textContent !== ${JSON.stringify(marker)}`,
  );
  const status = (await page.getByTestId('result-status').textContent()) ?? '';
  const text = (await page.getByTestId('result-body').textContent()) ?? '';
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status, body };
}

test('when the cashier places a simulated card, recharges it and a write tears, then the page shows each answer, the banner, and money stays exact', async () => {
  const page = await browser.newPage();
  try {
    await page.goto(`${site.origin}${EXAMPLE_PAGE}`);
    await page.getByTestId('base-url').fill(service.url);
    await page.getByTestId('api-key').fill(TEST_API_KEY);
    assert.equal(await page.getByTestId('simulator-banner').isHidden(), true);

    await page.getByTestId('sim-credits').fill('30');
    const placed = await click(page, 'sim-place');
    assert.equal(placed.status, '200 OK', JSON.stringify(placed.body));
    const cardId = (placed.body as { cardId: string }).cardId;
    await page.getByTestId('simulator-banner').waitFor({ state: 'visible' });
    await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');

    const pool = await shopCredits(ledger.url);
    await page.getByTestId('credits').fill('10');
    assert.deepEqual(withoutReceipt((await click(page, 'recharge-credits')).body), {
      cardId,
      credits: 40,
      rechargeAmount: 5,
    });

    await page.getByTestId('sim-fault').selectOption('tear-after-commit');
    assert.equal((await click(page, 'sim-fault-arm')).status, '200 OK');
    const torn = await click(page, 'recharge-credits');
    assert.equal(torn.status, '500 CardRemovedDuringWrite', JSON.stringify(torn.body));

    await page.getByTestId('sim-card-id').fill(cardId);
    assert.deepEqual((await click(page, 'sim-put-back')).body, { cardId, credits: 50 });
    await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'movement settled');
    assert.equal(await shopCredits(ledger.url), pool - 20);

    // A sale with a reference whose write tears: the page's retry finishes that movement.
    await page.getByTestId('reference').fill('sale 77');
    await page.getByTestId('sim-fault').selectOption('tear-before-commit');
    assert.equal((await click(page, 'sim-fault-arm')).status, '200 OK');
    const tornAgain = await click(page, 'recharge-credits');
    assert.equal(tornAgain.status, '500 CardRemovedDuringWrite', JSON.stringify(tornAgain.body));
    assert.equal(await page.getByTestId('retry').isEnabled(), true, 'the retry is offered');
    assert.deepEqual((await click(page, 'sim-put-back')).body, { cardId, credits: 50 });
    await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card back');
    const retried = await click(page, 'retry');
    assert.equal(retried.status, '200 OK', JSON.stringify(retried.body));
    assert.deepEqual(withoutReceipt(retried.body), { cardId, credits: 60, rechargeAmount: 5 });
    assert.equal((retried.body as { reference: string }).reference, 'sale 77');
    assert.equal(await page.getByTestId('retry').isDisabled(), true, 'nothing left to retry');
    await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'movement settled');
    // The torn write never landed: its movement was voided, and the retry made the sale's one
    // movement that moved money; the lookup shows both, newest first.
    const found = await click(page, 'lookup');
    const movements = (
      found.body as { movementId: string; reference: string; state: string }[]
    ).map((m) => [
      m.movementId === (retried.body as { movementId: string }).movementId,
      m.reference,
      m.state,
    ]);
    assert.deepEqual(movements, [
      [true, 'sale 77', 'posted'],
      [false, 'sale 77', 'voided'],
    ]);
    await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'movement settled');
    assert.equal(await shopCredits(ledger.url), pool - 30, 'charged once for the sale');

    // Waiting for a tap: cancelled, then a card placed while it waits.
    assert.equal((await click(page, 'sim-take-away')).status, '200 OK');
    await waitUntil(() => service.readers.status.card === null, 5_000, 'card gone');
    await page.getByTestId('wait-card').click();
    await page.getByTestId('wait-cancel').click();
    await page.waitForFunction(
      `document.querySelector('[data-testid="result-status"]').textContent === 'stopped'`,
    );
    const marker = `waiting for a card ${Date.now()}`;
    await page.getByTestId('result-call').evaluate((e, text) => (e.textContent = text), marker);
    await page.getByTestId('wait-card').click();
    await page.waitForFunction(
      `document.querySelector('[data-testid="result-body"]').textContent === 'present a card'`,
    );
    // From here, not the page: the page's answer panel is the wait's.
    await service.simulator?.putBack(cardId);
    await page
      .waitForFunction(
        `document.querySelector('[data-testid="result-call"]').textContent === 'waitForCard' && document.querySelector('[data-testid="result-status"]').textContent === '200 OK'`,
        undefined,
        { timeout: 10_000 },
      )
      .catch(async (error: unknown) => {
        const shown = await page.evaluate(
          `['result-call', 'result-status', 'result-body'].map((id) => document.querySelector('[data-testid="' + id + '"]').textContent)`,
        );
        throw new Error(`the page shows ${JSON.stringify(shown)}`, { cause: error });
      });
    const text = (await page.getByTestId('result-body').textContent()) ?? '';
    assert.deepEqual(JSON.parse(text), { cardId, credits: 60, rechargeAmount: null });

    assert.equal((await click(page, 'sim-take-away')).status, '200 OK');
    await waitUntil(() => service.readers.status.card === null, 5_000, 'card gone');
    assert.deepEqual((await click(page, 'readcard')).body, { error: 'NoCard' });
    const status = await click(page, 'sim-status');
    assert.deepEqual(status.body, { card: null, cards: [{ cardId, credits: 60 }] });
  } finally {
    await page.close();
  }
});
