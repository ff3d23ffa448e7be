/**
 * The ledger's types and functions (cloud/db/routines/) are made anew by migrate whenever any
 * of them changed, and left alone otherwise: a change to a function is a diff of its file, and
 * a database always runs the functions of the ledger that last migrated it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Database } from '../../cloud/db/database.ts';
import { migrate, routinesChecksum } from '../../cloud/db/migrate.ts';
import { migrations } from '../../cloud/db/migrations/index.ts';
import { openPgliteDatabase } from '../../cloud/db/pglite-database.ts';
import { routines, type Routine } from '../../cloud/db/routines/index.ts';

async function withFreshDatabase(fn: (db: Database) => Promise<void>): Promise<void> {
  // A new database, not the test template (migrated already).
  const folder = mkdtempSync(join(tmpdir(), 'cww-routines-'));
  const db = await openPgliteDatabase(join(folder, 'db'), { template: false });
  try {
    await fn(db);
  } finally {
    await db.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function functionOids(db: Database, name: string): Promise<string[]> {
  const { rows } = await db.query<{ oid: string }>(
    'SELECT oid::text AS oid FROM pg_proc WHERE proname = $1 ORDER BY oid',
    [name],
  );
  return rows.map((row) => row.oid);
}

test('when the schema is migrated, then every routine exists once and the database stores their checksum', async () => {
  await withFreshDatabase(async (db) => {
    await migrate(db);
    for (const routine of routines) {
      if (routine.kind === 'type') {
        const { rows } = await db.query('SELECT 1 FROM pg_type WHERE typname = $1', [routine.name]);
        assert.equal(rows.length, 1, `type ${routine.name}`);
      } else {
        assert.equal((await functionOids(db, routine.name)).length, 1, routine.name);
      }
    }
    const { rows } = await db.query<{ checksum: string }>('SELECT checksum FROM schema_routines');
    assert.deepEqual(rows, [{ checksum: routinesChecksum() }]);
  });
});

test('when nothing changed, then a second migrate leaves the routines as they are', async () => {
  await withFreshDatabase(async (db) => {
    await migrate(db);
    const before = await functionOids(db, 'ledger_create_movement');
    await migrate(db);
    assert.deepEqual(await functionOids(db, 'ledger_create_movement'), before);
  });
});

test('when a routine changed, its signature included, then migrate replaces it and leaves no old overload', async () => {
  await withFreshDatabase(async (db) => {
    const older: Routine = {
      name: 'ledger_key_holds',
      sql: `CREATE FUNCTION ledger_key_holds(p_key_hash text, p_customer uuid, p_extra int)
            RETURNS boolean LANGUAGE sql STABLE AS $$ SELECT false $$;`,
    };
    const withOlder = routines.map((routine) => (routine.name === older.name ? older : routine));
    await migrate(db, migrations, withOlder);
    assert.deepEqual(
      (await db.query('SELECT ledger_key_holds(NULL, gen_random_uuid(), 1) AS holds')).rows,
      [{ holds: false }],
    );

    await migrate(db);
    const { rows } = await db.query<{ signature: string }>(
      "SELECT oid::regprocedure::text AS signature FROM pg_proc WHERE proname = 'ledger_key_holds'",
    );
    assert.deepEqual(rows, [{ signature: 'ledger_key_holds(text,uuid)' }]);
    assert.deepEqual(
      (await db.query('SELECT ledger_key_holds(NULL, gen_random_uuid()) AS holds')).rows,
      [{ holds: true }],
    );
  });
});

test('when the type the functions answer changes, then the functions that use it are made again with it', async () => {
  await withFreshDatabase(async (db) => {
    await migrate(db);
    const before = await functionOids(db, 'ledger_create_movement');
    const renamed = routines.map((routine) =>
      routine.kind === 'type' ? { ...routine, sql: `${routine.sql}\n-- changed\n` } : routine,
    );
    await migrate(db, migrations, renamed);
    const after = await functionOids(db, 'ledger_create_movement');
    assert.equal(after.length, 1);
    assert.notDeepEqual(after, before, 'made anew, not left pointing at a dropped type');
  });
});
