import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LOCK_FILE, openPgliteDatabase } from '../../cloud/db/pglite-database.ts';
import { PowerCutDisk } from '../support/power-cut-disk.ts';

// The embedded ledger's database (PGlite in the till's data folder) and a power cut: what a
// commit returned must be there when the till starts again. Modelled as the simulation's disk
// does: only what was fsynced survives. PGlite as shipped never fsyncs (PostgreSQL started with
// -F, Emscripten's NODEFS without fsync); cloud/db/pglite-durable-fs.ts makes it.

const work = mkdtempSync(join(tmpdir(), 'cww-power-cut-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe("a power cut under the embedded ledger's database", () => {
  test('when the power is cut after commits returned, then every committed row is there after the restart', async () => {
    const folder = join(work, 'ledger');
    // A database that exists, closed cleanly (its files durable), as on a till.
    const first = await openPgliteDatabase(folder);
    await first.exec('create table probe (n integer primary key)');
    await first.close();

    const disk = new PowerCutDisk(folder);
    try {
      const db = await openPgliteDatabase(folder, { onSync: disk.synced });
      for (let n = 1; n <= 20; n += 1)
        await db.transaction((tx) => tx.query('insert into probe values ($1)', [n]));
      // The power goes: no close, no checkpoint; this PGlite is never used again.
      disk.cut();

      const after = await openPgliteDatabase(folder);
      try {
        const rows = await after.query<{ count: number }>(
          'select count(*)::int as count from probe',
        );
        assert.equal(rows.rows[0]?.count, 20, 'the rows whose commit returned');
        const movements = await after.query<{ count: number }>(
          'select count(*)::int as count from movements',
        );
        assert.equal(movements.rows[0]?.count, 0, "the ledger's own tables are intact");
      } finally {
        await after.close();
      }
    } finally {
      disk.dispose();
    }
  });

  test("when the lock file is from before this boot and its pid is another program's now, then the database opens", async () => {
    const folder = join(work, 'rebooted');
    await (await openPgliteDatabase(folder)).close();
    // The lock of the process the power cut ended; after the reboot its pid is taken (here by
    // this very process, which is certainly alive).
    writeFileSync(join(folder, LOCK_FILE), `${process.pid}\n`);
    utimesSync(join(folder, LOCK_FILE), new Date(0), new Date(0));
    const db = await openPgliteDatabase(folder);
    await db.close();
  });
});
