import { join } from 'node:path';
import type { Logger } from '../logger.ts';

export interface EmbeddedLedger {
  url: string;
  /** Adds a key to the demo shop (the operator set a new key in standalone mode). */
  registerKey(apiKey: string): Promise<void>;
  /** Revokes a key the operator replaced, once no movement needs it (see KeyRing). */
  revokeKey(apiKey: string): Promise<void>;
  /**
   * Gives a card the account of a card sold before the ledger knew it (as `card-wallet-cloud
   * card import` does): the simulator's demo cards placed with credits.
   */
  importCard(apiKey: string, cardId: string, credits: number): Promise<void>;
  close(): Promise<void>;
}

/** The shop the embedded ledger starts with, so a fresh install can recharge at once. */
export const DEMO_SHOP = { name: 'Demo shop', credits: 10_000, creditCost: '0.50' } as const;

/**
 * Standalone mode (no cloud URL): the reference ledger runs in this process on PGlite in the
 * data folder, on its own loopback port, and the worker reaches it over HTTP like a remote
 * one, so there is one code path. Its demo shop holds the configured key; seeding is
 * idempotent, and a new key is added to the same shop.
 */
export async function startEmbeddedLedger(
  dataDir: string,
  apiKey: string,
  log: Logger,
): Promise<EmbeddedLedger> {
  // Loaded only in standalone mode: a worker with a cloud URL never loads PGlite.
  const { startLedgerServer } = await import('../../cloud/create-ledger-server.ts');
  const { applySeed } = await import('../../cloud/seed.ts');
  const { revokeKey } = await import('../../cloud/admin.ts');
  const { importCards } = await import('../../cloud/card-accounts.ts');
  const demoSeed = (key: string) => ({ customers: [{ ...DEMO_SHOP, keys: [key] }] });
  const server = await startLedgerServer({
    database: join(dataDir, 'ledger'),
    host: '127.0.0.1',
    port: 0,
    seed: demoSeed(apiKey),
    log: { error: (message) => log.error(`embedded ledger: ${message}`) },
  });
  log.info(`embedded ledger on ${server.url} (PGlite in ${join(dataDir, 'ledger')})`);
  return {
    url: server.url,
    registerKey: async (key) => {
      await applySeed(server.db, demoSeed(key));
    },
    revokeKey: async (key) => {
      await revokeKey(server.db, key);
    },
    importCard: async (key, cardId, credits) => {
      const customerId = await server.ledger.authenticate(key);
      await importCards(server.db, customerId, [{ cardId, credits }]);
    },
    close: () => server.close(),
  };
}
