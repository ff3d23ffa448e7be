import { rmSync } from 'node:fs';
import { importCards } from '../../cloud/card-accounts.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { freshPgliteFolder, startLedgerProcess } from './ledger-process.ts';
import { startPostgres } from './postgres.ts';

/** The key of the test shop, also the key test services accept. */
export const TEST_API_KEY = 'test-key-0123456789abcdef';
/** A key the ledger knows but has bound to no shop. */
export const UNASSIGNED_KEY = 'unassigned-key-0123456789';
/** A key the ledger does not know. */
export const UNKNOWN_KEY = 'unknown-key-0123456789abc';

export const TEST_SHOP = { name: 'Test shop', credits: 1_000, creditCost: '0.50' } as const;

const TEST_SEED = {
  customers: [{ ...TEST_SHOP, keys: [TEST_API_KEY] }],
  unassignedKeys: [UNASSIGNED_KEY],
};

/** The ledger's movements of the test shop with a POS reference, newest first. */
export async function ledgerMovements(
  url: string,
  reference: string,
): Promise<{ id: string; state: string; reference: string | null; credits: number }[]> {
  const res = await fetch(`${url}/v1/movements?reference=${encodeURIComponent(reference)}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  const body = (await res.json()) as {
    movements: { id: string; state: string; reference: string | null; credits: number }[];
  };
  return body.movements.map(({ id, state, reference: ref, credits }) => ({
    id,
    state,
    reference: ref,
    credits,
  }));
}

export interface TestLedger extends LedgerServer {
  /** The PostgreSQL URL of a ledger process (startTestLedgerProcess), for the admin CLI. */
  databaseUrl?: string;
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
    seed: TEST_SEED,
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

/**
 * The reference ledger as a process of its own (cloud/cli.ts serve) on a real PostgreSQL
 * server, seeded with the test shop: what a till talks to in production. `db` and `ledger` are
 * this process's own connection to the same database, for seeds and imports.
 */
export async function startTestLedgerProcess(): Promise<TestLedger> {
  const postgres = await startPostgres();
  try {
    const child = await startLedgerProcess({ database: postgres.url, seed: TEST_SEED });
    const db = await openDatabase(postgres.url, { poolSize: 2 });
    return {
      host: '127.0.0.1',
      port: child.port,
      url: child.url,
      databaseUrl: postgres.url,
      db,
      ledger: new Ledger(db),
      async close() {
        await child.stop();
        await db.close();
        await postgres.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
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
