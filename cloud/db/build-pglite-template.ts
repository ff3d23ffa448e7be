/**
 * `npm run build` runs this from dist/: it makes the PGlite template (pglite-template.ts) beside
 * the built module, unless the one there is current. A new database, initdb and migrations, in a
 * temporary folder, packed and removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './open-database.ts';
import { TEMPLATE_FILE, templateIsCurrent, writeTemplate } from './pglite-template.ts';

if (!templateIsCurrent()) {
  // The old template goes first: the new one is made by initdb and every migration, never on
  // top of an old copy (whose migrations may differ from those of the same numbers now).
  rmSync(TEMPLATE_FILE, { force: true });
  const building = mkdtempSync(join(tmpdir(), 'cww-pglite-template-'));
  try {
    const folder = join(building, 'db');
    const db = await openDatabase(folder);
    await db.close();
    writeTemplate(folder);
    console.error(`made ${TEMPLATE_FILE}`);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
