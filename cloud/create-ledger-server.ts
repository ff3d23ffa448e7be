import type { RequestListener } from 'node:http';
import { listen, type RunningServer } from '../common/listen.ts';
import type { Database } from './db/database.ts';
import { openDatabase } from './db/open-database.ts';
import type { FailedAuthenticationLimits } from './authentication-guard.ts';
import type { ConsoleOptions } from './console/app.ts';
import { createLedgerApp } from './http/create-app.ts';
import type { Logger } from './http/error-handler.ts';
import { Ledger } from './ledger.ts';
import { applySeed, type Seed } from './seed.ts';

export const DEFAULT_HOST = '127.0.0.1';

export interface LedgerServerOptions {
  /** A postgres:// URL or a PGlite folder (opened, migrated, closed by the server), or an
   *  open Database that the caller keeps and closes. */
  database: string | Database;
  /** Default 127.0.0.1; a provider's server may listen on 0.0.0.0. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  seed?: Seed;
  /** PostgreSQL connections of this process (default 10). */
  poolSize?: number;
  log?: Logger;
  /** Bounds on failed authentications (docs/cloud-api.md); defaults in authentication-guard.ts. */
  failedAuthenticationLimits?: Partial<FailedAuthenticationLimits>;
  /** The operator console at /console (default: served, with ConsoleOptions' defaults). */
  console?: ConsoleOptions | false;
  /** Proxies whose X-Forwarded-* headers are believed (see LedgerAppOptions.trustProxy). */
  trustProxy?: string[];
}

export type { RunningServer };

export interface LedgerServer extends RunningServer {
  readonly db: Database;
  readonly ledger: Ledger;
}

const consoleLog: Logger = { error: (message) => console.error(message) };

/** A ledger ready to answer, not yet listening: its request handler, and its own close. */
export interface OpenLedger {
  readonly db: Database;
  readonly ledger: Ledger;
  readonly handler: RequestListener;
  /** Closes the app, then the database when the ledger opened it. */
  close(): Promise<void>;
}

/** Opens the database (migrating it), applies the seed and builds the app. */
export async function openLedger(options: LedgerServerOptions): Promise<OpenLedger> {
  const log = options.log ?? consoleLog;
  const ownsDatabase = typeof options.database === 'string';
  const db =
    typeof options.database === 'string'
      ? await openDatabase(options.database, {
          poolSize: options.poolSize,
          onIdleError: (error) => log.error(`database connection lost: ${error.message}`),
        })
      : options.database;
  try {
    if (options.seed) await applySeed(db, options.seed);
    const ledger = new Ledger(db);
    const app = await createLedgerApp(ledger, log, {
      failedAuthenticationLimits: options.failedAuthenticationLimits,
      console: options.console === false ? false : { ...options.console, db },
      trustProxy: options.trustProxy,
    });
    return {
      db,
      ledger,
      handler: app.routing,
      async close() {
        await app.close();
        if (ownsDatabase) await db.close();
      },
    };
  } catch (error) {
    if (ownsDatabase) await db.close().catch(() => undefined);
    throw error;
  }
}

/** Opens the ledger (see openLedger) and listens. */
export async function startLedgerServer(options: LedgerServerOptions): Promise<LedgerServer> {
  const opened = await openLedger(options);
  try {
    const server = await listen(opened.handler, options.port ?? 0, options.host ?? DEFAULT_HOST);
    return {
      ...server,
      db: opened.db,
      ledger: opened.ledger,
      async close(graceMs) {
        await server.close(graceMs);
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close().catch(() => undefined);
    throw error;
  }
}
