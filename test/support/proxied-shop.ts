import { setFloatSettings } from '../../cloud/float-admin.ts';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import { ROOMY_LIMITS } from './card-rig.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from './test-ledger.ts';
import { startTestService, type TestService } from './test-service.ts';

/** A shop of the reference ledger and one till on the card simulator, its ledger behind a proxy. */
export interface ProxiedShop {
  ledger: TestLedger;
  /** Between the till and the ledger: makes the ledger down, slow or failing on demand. */
  proxy: FaultProxy;
  service: TestService;
  /** The test shop's customer id at the ledger (TEST_API_KEY's). */
  customerId: string;
  close(): Promise<void>;
}

/**
 * Starts the ledger, the proxy and the till (a short card timeout; the default ledger timeout,
 * as the proxy's `refuse` fails a call at once, and 300 ms made a busy machine look like the
 * ledger down; roomy rate limits). `float`: the shop's float settings, set before the till
 * starts (it opens its float at once).
 */
export async function startProxiedShop(
  options: { float?: Partial<FloatSettings> } = {},
): Promise<ProxiedShop> {
  const ledger = await startTestLedger();
  const shop = await (
    await fetch(`${ledger.url}/v1/customer`, { headers: { 'X-Api-Key': TEST_API_KEY } })
  ).json();
  const customerId = (shop as { customerId: string }).customerId;
  if (options.float) await setFloatSettings(ledger.db, customerId, options.float);
  const proxy = await startFaultProxy(ledger.url);
  const service = await startTestService(
    { cloudUrl: proxy.url, simulator: true, cardTimeoutMs: 1_000 },
    { limits: ROOMY_LIMITS },
  );
  return {
    ledger,
    proxy,
    service,
    customerId,
    async close() {
      await service.close();
      await proxy.close();
      await ledger.close();
    },
  };
}
