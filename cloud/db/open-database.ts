import type { Database } from './database.ts';
import { migrate } from './migrate.ts';
import type { PostgresOptions } from './postgres-database.ts';

export type OpenDatabaseOptions = PostgresOptions;

/** True for a PostgreSQL URL; anything else is a PGlite data folder. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * Opens the ledger database, `postgres://` / `postgresql://` URL or PGlite folder, and
 * applies pending migrations before returning it.
 */
export async function openDatabase(
  target: string,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  // Each backend's driver is loaded only when used: a till's embedded ledger never loads pg,
  // a provider's ledger on PostgreSQL never loads PGlite.
  const db = isPostgresUrl(target)
    ? (await import('./postgres-database.ts')).createPostgresDatabase(target, options)
    : await (await import('./pglite-database.ts')).openPgliteDatabase(target);
  try {
    await migrate(db);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
