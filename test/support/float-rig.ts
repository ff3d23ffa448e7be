/**
 * The till float in memory, for unit tests: the simulated ledger with floats (checked against
 * the real one by test/simulation/sim-ledger-contract.test.ts) as the worker's ledger client
 * would call it, a switch that takes it down (every call then fails as LedgerUnavailable, as
 * the client's does), a manual clock, and an engine of till TILL selling from its float.
 */
import type { FloatSettings } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import type { TillFloatsLedger } from '../../service/wallet/till-floats.ts';
import { SimLedger, SimLedgerError } from '../simulation/sim-ledger.ts';
import { SETTINGS } from './float-fixtures.ts';
import {
  engineWith,
  KEY,
  ledgerOf,
  ManualClock,
  type MemoryStore,
  OTHER_KEY,
  OTHER_SHOP,
  SHOP,
  TILL,
  type RigLedger,
} from './money-rig.ts';

export type FloatRigLedger = RigLedger &
  TillFloatsLedger & {
    /** While true, every call fails as LedgerUnavailable (the ledger is down). */
    down: boolean;
    /** Float calls made, in order ("open", "topup", "report N", ...). */
    floatCalls: string[];
    lastAnsweredAt: number | null;
    reachability: { reachable: boolean | null };
  };

/** The simulated ledger as the worker's client calls it, floats included, on `clock`. */
export function floatLedgerOf(sim: SimLedger, clock: ManualClock): FloatRigLedger {
  const base = ledgerOf(sim);
  const ledger = base as FloatRigLedger;
  ledger.down = false;
  ledger.floatCalls = [];
  ledger.lastAnsweredAt = null;
  ledger.reachability = { reachable: null };
  const answer = async <T>(what: string | undefined, act: () => T): Promise<T> => {
    if (what) ledger.floatCalls.push(what);
    if (ledger.down) {
      ledger.reachability.reachable = false;
      throw errors.ledgerUnavailable();
    }
    ledger.reachability.reachable = true;
    ledger.lastAnsweredAt = clock.now();
    try {
      return act();
    } catch (error) {
      if (error instanceof SimLedgerError) throw new LedgerRefusal(error.status, error.code);
      throw error;
    }
  };
  // The pool movement calls fail too while the ledger is down.
  for (const name of [
    'createMovement',
    'postMovement',
    'voidMovement',
    'listPendingMovements',
    'getMovement',
    'getCardAccount',
  ] as const) {
    const call = base[name] as (...args: unknown[]) => Promise<unknown>;
    (ledger as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
      answer(undefined, () => undefined).then(() => call(...args));
  }
  ledger.getCustomer = (apiKey) => answer(undefined, () => sim.customer(apiKey));
  ledger.openFloat = (apiKey, request) =>
    answer('open', () => sim.floats.open(apiKey, request).float);
  ledger.topUpFloat = (apiKey, floatId, request) =>
    answer('topup', () => sim.floats.topUp(apiKey, floatId, request));
  ledger.reportFloatMovements = (apiKey, report) =>
    answer(`report ${report.movements.length}`, () =>
      sim.floats.report(apiKey, report.tillId, report.movements),
    );
  ledger.closeFloat = (apiKey, floatId, request) =>
    answer('close', () =>
      sim.floats.close(apiKey, floatId, request.tillId, request.movements ?? []),
    );
  ledger.getFloat = (apiKey, floatId) => answer('get', () => sim.floats.get(apiKey, floatId));
  ledger.getTillFloat = (apiKey, tillId) =>
    answer('till float', () => sim.floats.openFloatOfTill(apiKey, tillId));
  return ledger;
}

/** Two shops, the first with floats; an engine of TILL selling from its float, on a manual clock. */
export function floatRig(
  options: {
    settings?: Partial<FloatSettings>;
    credits?: number;
    store?: MemoryStore;
    /** Another rig's ledger and clock: a second engine of the same till (a lost journal). */
    of?: { sim: SimLedger; clock: ManualClock };
  } = {},
) {
  const clock = options.of?.clock ?? new ManualClock();
  if (!options.of) clock.time = Date.parse('2026-11-24T10:00:00Z');
  const sim = options.of?.sim ?? new SimLedger(() => clock.now());
  if (!options.of) addShops(sim, options);
  const ledger = floatLedgerOf(sim, clock);
  const made = engineWith(ledger, {
    clock,
    tillId: TILL,
    floats: { ledger },
    ...(options.store ? { store: options.store } : {}),
  });
  const floats = made.engine.floats;
  if (!floats) throw new Error('the engine has no float');
  /**
   * The shop as the service resolves it: from the ledger (the till notes it for offline sales)
   * or, while the ledger is down, as the till last learnt it.
   */
  const customer = () => {
    if (ledger.down) {
      const learnt = floats.learntShop(KEY);
      if (!learnt) throw errors.ledgerUnavailable();
      return learnt;
    }
    const shop = sim.customer(KEY);
    void floats.keeper.learnShop(KEY, shop);
    return shop;
  };
  return { ...made, clock, sim, ledger, floats, customer };
}

function addShops(
  sim: SimLedger,
  options: { settings?: Partial<FloatSettings>; credits?: number },
) {
  sim.addShop(
    {
      id: SHOP,
      name: 'A',
      credits: options.credits ?? 1_000,
      creditCost: '0.50',
      float: { ...SETTINGS, ...options.settings },
    },
    [KEY],
  );
  sim.addShop({ id: OTHER_SHOP, name: 'B', credits: 1_000, creditCost: '0.50' }, [OTHER_KEY]);
}
