import { rmSync } from 'node:fs';
import { importCards } from '../../cloud/card-accounts.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { freshPgliteFolder } from './ledger-process.ts';

/** The key of the test shop, also the key test services accept. */
export const TEST_API_KEY = 'test-key-0123456789abcdef';
/** A key the ledger knows but has bound to no shop. */
export const UNASSIGNED_KEY = 'unassigned-key-0123456789';
/** A key the ledger does not know. */
export const UNKNOWN_KEY = 'unknown-key-0123456789abc';

export const TEST_SHOP = { name: 'Test shop', credits: 1_000, creditCost: '0.50' } as const;

export interface TestLedger extends LedgerServer {
  close(): Promise<void>;
}

/**
 * The reference ledger in this process on a fresh PGlite folder, seeded with the test shop.
 * One per test file is enough (starting one takes ~2 s); services point at it with cloudUrl.
 */
export async function startTestLedger(): Promise<TestLedger> {
  const folder = await freshPgliteFolder();
  const server = await startLedgerServer({
    database: folder,
    seed: {
      customers: [{ ...TEST_SHOP, keys: [TEST_API_KEY] }],
      unassignedKeys: [UNASSIGNED_KEY],
    },
    log: { error: () => undefined },
  });
  return {
    ...server,
    async close() {
      await server.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function ledgerGet(ledgerUrl: string, path: string, apiKey = TEST_API_KEY): Promise<unknown> {
  const res = await fetch(`${ledgerUrl}${path}`, { headers: { 'X-Api-Key': apiKey } });
  return res.json();
}

/** The test shop's pool of credits (or the shop of `apiKey`), read from the ledger. */
export async function shopCredits(ledgerUrl: string, apiKey = TEST_API_KEY): Promise<number> {
  return ((await ledgerGet(ledgerUrl, '/v1/customer', apiKey)) as { credits: number }).credits;
}

/** How many of the test shop's movements the ledger holds pending. */
export async function pendingMovements(ledgerUrl: string): Promise<number> {
  const answer = (await ledgerGet(ledgerUrl, '/v1/movements?state=pending')) as {
    movements: unknown[];
  };
  return answer.movements.length;
}

/**
 * Gives a card of the test shop the account of a card sold before the ledger (a card import),
 * so a test can discharge a balance it wrote onto the virtual card itself: the ledger pays out
 * no more than a card's account.
 */
export async function importCardBalance(
  ledger: LedgerServer,
  cardId: string,
  credits: number,
): Promise<void> {
  const { customerId } = (await ledgerGet(ledger.url, '/v1/customer')) as { customerId: string };
  await importCards(ledger.db, customerId, [{ cardId, credits }]);
}
