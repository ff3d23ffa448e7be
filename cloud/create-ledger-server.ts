import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database } from './db/database.ts';
import { openDatabase } from './db/open-database.ts';
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
}

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  /** `http://HOST:PORT`, no trailing slash. */
  readonly url: string;
  /** Stops accepting, lets requests in flight finish (bounded by graceMs), closes sockets. */
  close(graceMs?: number): Promise<void>;
}

export interface LedgerServer extends RunningServer {
  readonly db: Database;
  readonly ledger: Ledger;
}

const consoleLog: Logger = { error: (message) => console.error(message) };

/** Opens the database (migrating it), applies the seed, builds the app and listens. */
export async function startLedgerServer(options: LedgerServerOptions): Promise<LedgerServer> {
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
    const server = await listen(
      createLedgerApp(ledger, log),
      options.host ?? DEFAULT_HOST,
      options.port ?? 0,
    );
    return {
      ...server,
      db,
      ledger,
      async close(graceMs) {
        await server.close(graceMs);
        if (ownsDatabase) await db.close();
      },
    };
  } catch (error) {
    if (ownsDatabase) await db.close().catch(() => undefined);
    throw error;
  }
}

export function listen(app: RequestListener, host: string, port: number): Promise<RunningServer> {
  const server = createServer(app);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => {
      server.off('error', reject);
      const actual = (server.address() as AddressInfo).port;
      resolve({
        host,
        port: actual,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`,
        close: (graceMs = 10_000) => closeServer(server, graceMs),
      });
    });
  });
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
