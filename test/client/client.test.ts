// The client library (client/, built as its package) in Node against the real service with the
// card simulator on port 0: the shared scenarios (client-scenarios.ts), which
// client-browser.test.ts runs in Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listen } from '../../common/listen.ts';
import { buildClient, importClient } from '../support/client-build.ts';
import { ROOMY_LIMITS } from '../support/card-rig.ts';
import {
  ledgerMovements,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { CLIENT_TEST_LIMITS, scenarios, type World } from './client-scenarios.ts';

let ledger: TestLedger;
let service: TestService;
let world: World;

before(async () => {
  const [build, started] = await Promise.all([buildClient(), startTestLedger()]);
  ledger = started;
  service = await startTestService(
    { cloudUrl: ledger.url, simulator: true, cardTimeoutMs: 20_000 },
    { limits: { ...ROOMY_LIMITS, ...CLIENT_TEST_LIMITS } },
  );
  const closed = await listen(() => undefined, 0);
  await closed.close();
  world = {
    client: await importClient(build),
    baseUrl: service.url,
    apiKey: TEST_API_KEY,
    deadUrl: closed.url,
    ledgerMovements: (reference) => ledgerMovements(ledger.url, reference),
  };
});
after(async () => {
  await service?.close();
  await ledger?.close();
});

describe('the client library in Node', () => {
  for (const [name, scenario] of Object.entries(scenarios)) {
    test(name, () => scenario(world));
  }

  test('when nothing listens, then ServiceUnreachable says to check the service and its port, not a page’s origin (there is no page in Node)', async () => {
    const wallet = new world.client.CardWalletClient({
      baseUrl: world.deadUrl,
      apiKey: TEST_API_KEY,
      retries: 0,
    });
    const error = await wallet.readCard().catch((e: unknown) => e);
    assert.ok(world.client.isCardWalletError(error, 'readCard'), String(error));
    assert.equal(error.code, 'ServiceUnreachable');
    assert.match(
      error.detail ?? '',
      /did not answer \(.+\): is the service running there, on that port\?$/,
    );
    assert.doesNotMatch(error.detail ?? '', /origin/);
  });
});
