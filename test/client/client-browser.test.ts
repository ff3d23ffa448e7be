// The client library (client/, built as its package) in Debian's Chromium, loaded as an ES
// module by a page on an allowed origin, against the real service with the card simulator: the
// same scenarios as in Node (client-scenarios.ts), then what only a browser does (CORS).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { listen } from '../../common/listen.ts';
import { launchChromium } from '../support/browser.ts';
import { ROOMY_LIMITS } from '../support/card-rig.ts';
import { buildClient } from '../support/client-build.ts';
import { memoryLogger } from '../support/memory-logger.ts';
import { serveFolder, type StaticServer } from '../support/static-server.ts';
import {
  ledgerMovements,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { CLIENT_TEST_LIMITS, scenarios } from './client-scenarios.ts';

let site: StaticServer;
let foreign: StaticServer;
let ledger: TestLedger;
let service: TestService;
let browser: Browser;
let page: Page;
let deadUrl: string;
const log = memoryLogger();

before(async () => {
  const build = await buildClient();
  site = await serveFolder(build.dir, '127.0.0.2');
  foreign = await serveFolder(build.dir, '127.0.0.3');
  ledger = await startTestLedger();
  service = await startTestService(
    { cloudUrl: ledger.url, simulator: true, cardTimeoutMs: 20_000, allowedOrigins: [site.origin] },
    { limits: { ...ROOMY_LIMITS, ...CLIENT_TEST_LIMITS }, log },
  );
  const closed = await listen(() => undefined, 0);
  await closed.close();
  deadUrl = closed.url;
  browser = await launchChromium();
  page = await browser.newPage();
  // The ledger is not the page's to call: the test asks it from here, for the scenarios.
  await page.exposeFunction('ledgerMovements', (reference: string) =>
    ledgerMovements(ledger.url, reference),
  );
  await page.goto(`${site.origin}/`);
});
after(async () => {
  await browser?.close();
  await service?.close();
  await ledger?.close();
  await site?.close();
  await foreign?.close();
});

/**
 * Runs one shared scenario in the page, with the client as the page loads it (both built by
 * test/support/client-build.ts, served from the page's own origin). The code is sent as text:
 * a function would carry tsx's `__name` helper, which the page does not have.
 */
function inPage(name: string): Promise<void> {
  const world = { baseUrl: service.url, apiKey: TEST_API_KEY, deadUrl };
  return page.evaluate(`(async () => {
    const client = await import('/client/index.js');
    const { scenarios } = await import('/scenarios/test/client/client-scenarios.js');
    await scenarios[${JSON.stringify(name)}]({ ...${JSON.stringify(world)}, client, ledgerMovements });
  })()`);
}

describe('the client library in Chromium', () => {
  for (const name of Object.keys(scenarios)) {
    test(name, () => inPage(name));
  }

  test('when the page’s origin is not on the allowlist, then the call fails as ServiceUnreachable saying to check the allowlist, and the service logs the refusal once with the fix', async () => {
    const other = await browser.newPage();
    try {
      await other.goto(`${foreign.origin}/`);
      const options = { baseUrl: service.url, apiKey: TEST_API_KEY, retries: 1, retryDelayMs: 10 };
      const seen = await other.evaluate(`(async () => {
        const { CardWalletClient } = await import('/client/index.js');
        const wallet = new CardWalletClient(${JSON.stringify(options)});
        try {
          await wallet.readCard();
          return 'answered';
        } catch ({ status, code, detail }) {
          return { status, code, detail };
        }
      })()`);
      assert.deepEqual(seen, {
        status: 0,
        code: 'ServiceUnreachable',
        detail: `${service.url} did not answer (Failed to fetch): is the service running there, and is this page's origin on its allowlist?`,
      });
      const refusals = log.lines.filter((line) =>
        line.startsWith(`warn refused Origin ${foreign.origin} `),
      );
      assert.equal(refusals.length, 1, log.lines.join('\n'));
      assert.match(
        refusals[0] ?? '',
        new RegExp(`add ${foreign.origin} in the tray app or with --allowed-origins`),
      );
    } finally {
      await other.close();
    }
  });
});
