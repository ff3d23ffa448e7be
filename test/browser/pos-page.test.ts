import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, saveScreenshot } from '../support/browser.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import type { RequestRecord } from '../../service/http/activity.ts';
import { startCardRig, walletBalance, type CardRig } from '../support/card-rig.ts';
import { EXAMPLE_PAGE, serveExamplePages, type StaticServer } from '../support/static-server.ts';
import { importCardBalance, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard } from '../support/virtual-card.ts';
import { withoutReceipt } from '../support/http-client.ts';

// The example POS page in Debian's Chromium, served from a second loopback origin that is on
// the allowlist, against the real service and a virtual card; and the same page from an origin
// that is not, which must get nothing and cause no card operation.
const screenshots = fileURLToPath(new URL('../../test-results/browser', import.meta.url));

let allowed: StaticServer;
let foreign: StaticServer;
let rig: CardRig;
let browser: Browser;
const requests: RequestRecord[] = [];

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  [allowed, foreign] = (await serveExamplePages(['127.0.0.2', '127.0.0.3'])) as [
    StaticServer,
    StaticServer,
  ];
  rig = await startCardRig({ allowedOrigins: [allowed.origin] });
  rig.service.activity.on('request', (record) => requests.push(record));
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await rig?.close();
  await allowed?.close();
  await foreign?.close();
});

async function openPage(origin: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await page.goto(`${origin}${EXAMPLE_PAGE}`);
  await page.getByTestId('base-url').fill(rig.service.url);
  await page.getByTestId('api-key').fill(TEST_API_KEY);
  return page;
}

async function click(page: Page, button: string): Promise<{ status: string; body: unknown }> {
  // Mark the last answer, click, and wait until the page replaced it with the new one.
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
    // not JSON: a failure text
  }
  return { status, body };
}

describe('the example POS page from an allowed origin', () => {
  test('when the cashier reads, recharges and pays out a card, then the page, the card and the ledger agree', async () => {
    const page = await openPage(allowed.origin);
    const card = new VirtualCard({
      uid: Buffer.from('04C0C1C2', 'hex'),
      blocks: { 4: encodeValueBlock(100, 1) },
    });
    // Sold before the ledger: imported, so the ledger pays out its 100 as well.
    await importCardBalance(rig.ledger, card.id, 100);
    try {
      await page.getByTestId('events-connect').click();
      await page.getByTestId('events-state').filter({ hasText: 'listening' }).waitFor();

      assert.deepEqual(await click(page, 'ping'), { status: '200 OK', body: 'pong' });
      await rig.present(card);
      await page.getByTestId('events').filter({ hasText: 'card present 04C0C1C2' }).waitFor();
      assert.deepEqual(withoutReceipt((await click(page, 'readcard')).body), {
        cardId: '04C0C1C2',
        credits: 100,
        rechargeAmount: null,
      });

      const pool = await shopCredits(rig.ledger.url);
      await page.getByTestId('credits').fill('10');
      assert.deepEqual(withoutReceipt((await click(page, 'recharge-credits')).body), {
        cardId: '04C0C1C2',
        credits: 110,
        rechargeAmount: 5,
      });
      await page.getByTestId('amount').fill('2.50');
      assert.deepEqual(withoutReceipt((await click(page, 'recharge-amount')).body), {
        cardId: '04C0C1C2',
        credits: 115,
        rechargeAmount: 2.5,
      });
      assert.equal(walletBalance(card), 115);
      assert.equal(await shopCredits(rig.ledger.url), pool - 15);
      assert.deepEqual((await click(page, 'info')).body, {
        credits: String(pool - 15),
        creditCost: '0.50',
      });

      assert.deepEqual(withoutReceipt((await click(page, 'discharge')).body), {
        cardId: '04C0C1C2',
        dischargedCredits: 115,
        dischargedAmount: 57.5,
      });
      assert.equal(walletBalance(card), 0);
      assert.equal(await shopCredits(rig.ledger.url), pool + 100);
      await saveScreenshot(page, `${screenshots}/allowed-origin.png`);

      await rig.takeAway();
      await page.getByTestId('events').filter({ hasText: 'card removed 04C0C1C2' }).waitFor();
    } finally {
      await page.close();
    }
  });

  test('when the browser preflights a POST, then the allowed origin gets 204', async () => {
    const preflights = requests.filter(
      (record) => record.method === 'OPTIONS' && record.origin === allowed.origin,
    );
    assert.ok(preflights.length > 0, 'the browser preflighted the POSTs');
    assert.deepEqual(new Set(preflights.map((record) => record.status)), new Set([204]));
  });
});

describe('the example POS page from an origin not on the allowlist', () => {
  test('when it calls every endpoint, then every call fails in the browser and no card or ledger operation happens', async () => {
    const page = await openPage(foreign.origin);
    const card = new VirtualCard({
      uid: Buffer.from('04D0D1D2', 'hex'),
      blocks: { 4: encodeValueBlock(40, 1) },
    });
    await rig.present(card);
    try {
      const apdus = rig.reader.apdus.length;
      const ledgerCalls = rig.ledgerProxy.requests.length;
      for (const button of [
        'ping',
        'readcard',
        'info',
        'recharge-credits',
        'recharge-amount',
        'discharge',
      ]) {
        const { status } = await click(page, button);
        assert.equal(status, 'not reachable', button);
      }
      await page.getByTestId('events-connect').click();
      await page.getByTestId('events-state').filter({ hasText: 'not reachable' }).waitFor();
      await saveScreenshot(page, `${screenshots}/foreign-origin.png`);
      assert.equal(rig.reader.apdus.length, apdus, 'no APDU');
      assert.equal(rig.ledgerProxy.requests.length, ledgerCalls, 'no ledger call');
      assert.equal(walletBalance(card), 40);
      const seen = requests.filter((record) => record.origin === foreign.origin);
      assert.ok(seen.length > 0);
      assert.deepEqual(
        new Set(seen.map((record) => record.status)),
        new Set([403]),
        'every request, preflights included, was refused',
      );
      await page.getByTestId('events-disconnect').click();
    } finally {
      await page.close();
      await rig.takeAway();
    }
  });
});
