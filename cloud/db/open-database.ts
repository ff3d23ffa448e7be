import type { Database } from './database.ts';
import { migrate } from './migrate.ts';
import { openPgliteDatabase } from './pglite-database.ts';
import { createPostgresDatabase, type PostgresOptions } from './postgres-database.ts';

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
  const db = isPostgresUrl(target)
    ? createPostgresDatabase(target, options)
    : await openPgliteDatabase(target);
  try {
    await migrate(db);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
