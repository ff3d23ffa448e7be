import type { ConfigInput } from '../../service/config.ts';
import { startCardRig, type CardRig, type Till } from './card-rig.ts';
import type { TestLedger } from './test-ledger.ts';

export interface TwoTillRig {
  rig: CardRig;
  /** The rig's own till (rig.firstTill): key TEST_API_KEY, to the ledger through rig.ledgerProxy. */
  tillA: Till;
  /** The rig's second till (rig.secondTill): a key of its own, on the second reader. */
  tillB: Till;
}

/**
 * A shop with two tills, each its own worker (API key, data folder, till id, reader) on one
 * pcscd, and the ledger a process of its own on PostgreSQL, as a shop with tills runs it. One
 * per test file, as the card rig (startCardRig); close it with `rig.close()`.
 */
export async function startTwoTillRig({
  tillA = {},
  tillB = {},
  ledgerReady,
}: {
  /** Till A's settings (the rig's service). */
  tillA?: Partial<ConfigInput>;
  /** Till B's settings, or what gives them once the ledger runs (a proxy of its own to it). */
  tillB?: Partial<ConfigInput> | ((rig: CardRig) => Promise<Partial<ConfigInput>>);
  /** Runs on the ledger before either till starts (settings every till reads at start). */
  ledgerReady?: (ledger: TestLedger) => Promise<void>;
} = {}): Promise<TwoTillRig> {
  const rig = await startCardRig(tillA, { ledgerProcess: true, ledgerReady });
  try {
    const second = await rig.secondTill(typeof tillB === 'function' ? await tillB(rig) : tillB);
    return { rig, tillA: rig.firstTill, tillB: second };
  } catch (error) {
    // Not yet the caller's to close.
    await rig.close();
    throw error;
  }
}
