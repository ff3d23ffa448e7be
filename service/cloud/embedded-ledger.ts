import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenLedger } from '../../cloud/create-ledger-server.ts';
import { listen } from '../../common/listen.ts';
import type { Logger } from '../logger.ts';

/** The back office of a standalone till, as the tray and the banner show it. */
export interface ConsoleAddress {
  /** http://127.0.0.1:PORT/console */
  url: string;
  /**
   * The one-time link that makes the demo shop's owner account (this computer only), until it
   * is used; null once the shop has an owner.
   */
  setupUrl: string | null;
}

export interface EmbeddedLedger extends EventEmitter<{ console: [ConsoleAddress] }> {
  url: string;
  /** The back office; `setupUrl` is known once the database is open (the `console` event). */
  readonly console: ConsoleAddress;
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
  { port = 0, tillId }: { port?: number; tillId: string },
): Promise<EmbeddedLedger> {
  // An operator changes the till's API key in its settings: the audit log says so.
  const byTheTill = {
    actor: { kind: 'till' as const, tillId },
    reason: 'set in the till’s settings',
  };
  const keyName = (key: string) =>
    `key:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
  const folder = join(dataDir, 'ledger');
  // The demo shop's day is the till's local day: its day reports count in this computer's zone.
  const demoSeed = (key: string) => ({
    customers: [{ ...DEMO_SHOP, keys: [key], timeZone: systemTimeZone() }],
  });
  let askToOpen!: () => void;
  const asked = new Promise<void>((resolve) => (askToOpen = resolve));
  let openAsked = false;
  const events = new EventEmitter<{ console: [ConsoleAddress] }>();
  const address: { console: ConsoleAddress } = { console: { url: '', setupUrl: null } };
  const setConsole = (setupUrl: string | null) => {
    address.console = { url: address.console.url, setupUrl };
    events.emit('console', address.console);
  };
  const opening = asked.then(async () => {
    // Loaded only in standalone mode: a worker with a cloud URL never loads PGlite.
    const { openLedger } = await import('../../cloud/create-ledger-server.ts');
    return openLedger({
      database: folder,
      seed: demoSeed(apiKey),
      log: { error: (message) => log.error(`embedded ledger: ${message}`) },
      // The till's own back office: its first owner comes from a setup link shown here.
      console: { setupLinks: true, onSetupLinkUsed: () => setConsole(null) },
    });
  });
  const opened = opening.then(() => undefined);
  // Whoever needs the ledger awaits `opening` (or `opened`): this handler only keeps a failure
  // from counting as unhandled while nobody has asked yet.
  opened.catch(() => undefined);
  const handler = async (request: IncomingMessage, response: ServerResponse) => {
    let ledger: OpenLedger;
    try {
      ledger = await opening;
    } catch {
      response.writeHead(503, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: 'DatabaseUnavailable' }));
      return;
    }
    ledger.handler(request, response);
  };
  const server = await listenOn(handler, port, log);
  address.console = { url: `${server.url}/console`, setupUrl: null };
  log.info(
    `embedded ledger on ${server.url} (PGlite in ${folder}); back office ${server.url}/console`,
  );
  // Once open: a setup link for the demo shop's first owner, while it has none.
  opening
    .then(async ({ db, ledger }) => {
      const { makeSetupLink } = await import('../../cloud/operators/setup-links.ts');
      const token = await makeSetupLink(db, await ledger.authenticate(apiKey));
      if (token) setConsole(`${server.url}/console/setup?token=${token}`);
    })
    .catch((error: unknown) =>
      log.warn(`embedded ledger: no setup link for the back office: ${(error as Error).message}`),
    );
  return Object.assign(events, {
    url: server.url,
    get console() {
      return address.console;
    },
    opened,
    open() {
      openAsked = true;
      askToOpen();
    },
    registerKey: async (key: string) => {
      const { applySeed } = await import('../../cloud/seed.ts');
      const { db, ledger } = await opening;
      const added = await applySeed(db, demoSeed(key));
      if (added.keysAdded > 0) {
        const { appendAudit } = await import('../../cloud/audit/audit-log.ts');
        const shop = await ledger.authenticate(key);
        await db.transaction((tx) =>
          appendAudit(tx, {
            ...byTheTill,
            customerId: shop,
            action: 'key.issue',
            subject: keyName(key),
          }),
        );
      }
    },
    revokeKey: async (key: string) => {
      const { revokeKey } = await import('../../cloud/admin.ts');
      await revokeKey((await opening).db, key, {
        ...byTheTill,
        reason: 'replaced in the till’s settings, and no movement needs it any more',
      });
    },
    importCard: async (key: string, cardId: string, credits: number) => {
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
  });
}

/** Listens on `port`, or on any free port when it is in use (said in the log). */
async function listenOn(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
  port: number,
  log: Logger,
) {
  try {
    return await listen(handler, port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw error;
    log.warn(
      `embedded ledger: port ${port} is in use (another till on this computer?); the back office is on another port this time`,
    );
    return listen(handler, 0);
  }
}

/** This computer's IANA time zone (UTC when it names none the ledger could take). */
export function systemTimeZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)+$/.test(zone) && zone.length <= 64
    ? zone
    : 'UTC';
}
