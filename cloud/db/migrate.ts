import type { Database } from './database.ts';
import { migrations as allMigrations, type Migration } from './migrations/index.ts';

/** Key of the advisory lock that serialises migrations of processes starting together. */
const MIGRATION_LOCK = '7203641191';

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in order, in one
 * transaction under an advisory lock: two ledger processes starting on one PostgreSQL at once
 * migrate once. Refuses a database whose schema is newer than this code.
 */
export async function migrate(
  db: Database,
  migrations: readonly Migration[] = allMigrations,
): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    if (newest > known) {
      throw new Error(
        `the database schema is at version ${newest}, newer than this ledger (${known}); upgrade the ledger`,
      );
    }
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    return done;
  });
}
