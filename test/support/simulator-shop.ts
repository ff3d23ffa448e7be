import { setFloatSettings } from '../../cloud/float-admin.ts';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { ConfigInput } from '../../service/config.ts';
import type { Clock } from '../../service/wallet/clock.ts';
import { ROOMY_LIMITS } from './card-rig.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from './test-ledger.ts';
import { startTestService, type TestService } from './test-service.ts';

/** How one till of the shop is started. */
export interface SimulatorTill {
  /** Its settings, over the card simulator and the ledger's (or its proxy's) URL. */
  config?: Partial<ConfigInput>;
  /** Its ledger calls through a fault proxy of its own: the ledger down for this till alone. */
  proxied?: boolean;
  /** Its clock (default: the system's). */
  clock?: Clock;
}

/** A shop of the reference ledger (in this process, on PGlite) with tills on the card simulator. */
export interface SimulatorShop<Name extends string> {
  ledger: TestLedger;
  /** The shop's customer id at the ledger (TEST_API_KEY's). */
  customerId: string;
  /** Each till by the name the test gave it; all use TEST_API_KEY. */
  tills: Record<Name, TestService>;
  /** The fault proxy between till `name` (started `proxied`) and the ledger. */
  proxy(name: Name): FaultProxy;
  close(): Promise<void>;
}

/**
 * Starts the ledger, sets the shop's float settings (`float`, before any till starts: a till
 * opens its float at once), then the tills in the order given, each with roomy rate limits and,
 * when `proxied`, a fault proxy of its own in front of the ledger.
 */
export async function startSimulatorShop<Name extends string>({
  float,
  tills,
}: {
  float?: Partial<FloatSettings>;
  tills: Record<Name, SimulatorTill>;
}): Promise<SimulatorShop<Name>> {
  const ledger = await startTestLedger();
  const proxies = new Map<Name, FaultProxy>();
  const started = new Map<Name, TestService>();
  const close = async () => {
    for (const till of started.values()) await till.close();
    for (const proxy of proxies.values()) await proxy.close();
    await ledger.close();
  };
  try {
    const customerId = await ledger.ledger.authenticate(TEST_API_KEY);
    if (float) await setFloatSettings(ledger.db, customerId, float);
    for (const [name, { config = {}, proxied = false, clock }] of Object.entries(tills) as [
      Name,
      SimulatorTill,
    ][]) {
      if (proxied) proxies.set(name, await startFaultProxy(ledger.url));
      const cloudUrl = proxies.get(name)?.url ?? ledger.url;
      started.set(
        name,
        await startTestService(
          { cloudUrl, simulator: true, ...config },
          { limits: ROOMY_LIMITS, clock },
        ),
      );
    }
    return {
      ledger,
      customerId,
      tills: Object.fromEntries(started) as Record<Name, TestService>,
      proxy(name) {
        const proxy = proxies.get(name);
        if (!proxy) throw new Error(`till ${name} was not started proxied`);
        return proxy;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
