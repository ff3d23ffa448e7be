import { createHash } from 'node:crypto';
import type { Database, Queryable } from './database.ts';
import { migrations as allMigrations, type Migration } from './migrations/index.ts';
import { retiredRoutines, routines as allRoutines, type Routine } from './routines/index.ts';

/** Key of the advisory lock that serialises migrations of processes starting together. */
const MIGRATION_LOCK = '7203641191';

/** What identifies a set of routines: a database made them once it stores this. */
export function routinesChecksum(routines: readonly Routine[] = allRoutines): string {
  return createHash('sha256')
    .update(routines.map((routine) => routine.sql).join('\n'))
    .digest('hex');
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in order, then makes the
 * routines (types and functions, routines/) anew when they differ from those the database
 * holds, all in one transaction under an advisory lock: two ledger processes starting on one
 * PostgreSQL at once migrate once. Refuses a database whose schema is newer than this code.
 * `routines` defaults to every routine with the full list of migrations, and to none with a
 * partial list (a test of an old schema: the routines need the newest tables).
 */
export async function migrate(
  db: Database,
  migrations: readonly Migration[] = allMigrations,
  routines: readonly Routine[] = migrations === allMigrations ? allRoutines : [],
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
    if (routines.length > 0) await makeRoutines(tx, routines);
    return done;
  });
}

/**
 * Drops every routine of these names (all overloads, and whatever depends on them) and the
 * retired ones, then creates them in order; skipped when the database made these already.
 */
async function makeRoutines(tx: Queryable, routines: readonly Routine[]): Promise<void> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_routines (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const checksum = routinesChecksum(routines);
  const { rows } = await tx.query<{ checksum: string }>('SELECT checksum FROM schema_routines');
  if (rows[0]?.checksum === checksum) return;
  const names = [...routines.map((routine) => routine.name), ...retiredRoutines];
  const functions = await tx.query<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
     WHERE p.proname = ANY($1::text[]) AND pg_function_is_visible(p.oid)`,
    [names],
  );
  for (const { signature } of functions.rows) {
    await tx.exec(`DROP FUNCTION IF EXISTS ${signature} CASCADE`);
  }
  for (const routine of routines) {
    if (routine.kind === 'type') await tx.exec(`DROP TYPE IF EXISTS ${routine.name} CASCADE`);
  }
  for (const routine of routines) await tx.exec(routine.sql);
  await tx.query(
    `INSERT INTO schema_routines (checksum) VALUES ($1)
     ON CONFLICT (only_row) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
    [checksum],
  );
}
