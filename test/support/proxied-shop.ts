import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { FaultProxy } from './fault-proxy.ts';
import { startSimulatorShop } from './simulator-shop.ts';
import type { TestLedger } from './test-ledger.ts';
import type { TestService } from './test-service.ts';

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
  const shop = await startSimulatorShop({
    float: options.float,
    tills: { service: { proxied: true, config: { cardTimeoutMs: 1_000 } } },
  });
  return {
    ledger: shop.ledger,
    proxy: shop.proxy('service'),
    service: shop.tills.service,
    customerId: shop.customerId,
    close: shop.close,
  };
}
