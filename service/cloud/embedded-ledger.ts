import { join } from 'node:path';
import type { OpenLedger } from '../../cloud/create-ledger-server.ts';
import { listen } from '../../common/listen.ts';
import type { Logger } from '../logger.ts';

export interface EmbeddedLedger {
  url: string;
  /**
   * Settles once the database is open (migrated, seeded) and the ledger answers; rejects with
   * why it could not open. Until then requests to `url` wait.
   */
  opened: Promise<void>;
  /** Starts opening the database; until then `opened` and requests wait. */
  open(): void;
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
 *
 * It listens at once and opens its database (`open`, once the worker listens) behind the
 * listener: opening PGlite (compiling its WebAssembly, starting PostgreSQL in it, and on a
 * first start copying the template) takes seconds, which the till's window and the POS's
 * first calls need not wait for (docs/benchmarks.md, "Standalone footprint"). A request that
 * arrives meanwhile waits; the worker's ledger client waits for `opened` before its first
 * attempt, so its timeouts count from there.
 */
export async function startEmbeddedLedger(
  dataDir: string,
  apiKey: string,
  log: Logger,
): Promise<EmbeddedLedger> {
  const folder = join(dataDir, 'ledger');
  const demoSeed = (key: string) => ({ customers: [{ ...DEMO_SHOP, keys: [key] }] });
  let askToOpen!: () => void;
  const asked = new Promise<void>((resolve) => (askToOpen = resolve));
  let openAsked = false;
  const opening = asked.then(async () => {
    // Loaded only in standalone mode: a worker with a cloud URL never loads PGlite.
    const { openLedger } = await import('../../cloud/create-ledger-server.ts');
    return openLedger({
      database: folder,
      seed: demoSeed(apiKey),
      log: { error: (message) => log.error(`embedded ledger: ${message}`) },
    });
  });
  const opened = opening.then(() => undefined);
  // Whoever needs the ledger awaits `opening` (or `opened`): this handler only keeps a failure
  // from counting as unhandled while nobody has asked yet.
  opened.catch(() => undefined);
  const server = await listen(async (request, response) => {
    let ledger: OpenLedger;
    try {
      ledger = await opening;
    } catch {
      response.writeHead(503, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: 'DatabaseUnavailable' }));
      return;
    }
    ledger.handler(request, response);
  }, 0);
  log.info(`embedded ledger on ${server.url} (PGlite in ${folder})`);
  return {
    url: server.url,
    opened,
    open() {
      openAsked = true;
      askToOpen();
    },
    registerKey: async (key) => {
      const { applySeed } = await import('../../cloud/seed.ts');
      await applySeed((await opening).db, demoSeed(key));
    },
    revokeKey: async (key) => {
      const { revokeKey } = await import('../../cloud/admin.ts');
      await revokeKey((await opening).db, key);
    },
    importCard: async (key, cardId, credits) => {
      const { importCards } = await import('../../cloud/card-accounts.ts');
      const { db, ledger } = await opening;
      await importCards(db, await ledger.authenticate(key), [{ cardId, credits }]);
    },
    async close() {
      await server.close();
      if (!openAsked) return;
      // A database still opening is closed once open: its lock file must not outlive us.
      const ledger = await opening.catch(() => undefined);
      await ledger?.close();
    },
  };
}
