/**
 * The PGlite template (cloud/db/pglite-template.ts): a new database made once at build time, so
 * that a till's first start copies it instead of running initdb. A copy must be the database it
 * was made from, private, and a template of another PGlite must never be used.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { migrations } from '../../cloud/db/migrations/index.ts';
import { copyTemplate, templateIsCurrent, writeTemplate } from '../../cloud/db/pglite-template.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'cww-template-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every file under `root`, by its path: its mode and content. */
function files(root: string): Map<string, { mode: string; content: Buffer }> {
  const found = new Map<string, { mode: string; content: Buffer }>();
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else {
        found.set(relative(root, child), {
          mode: (statSync(child).mode & 0o777).toString(8),
          content: readFileSync(child),
        });
      }
    }
  };
  walk(root);
  return found;
}

test('when a template is made from a migrated folder and copied into a new one, then the copy holds the same files, private, and opens as that database', async () => {
  const source = await freshPgliteFolder();
  const template = join(scratch, 'made.tar.gz');
  try {
    writeTemplate(source, template);
    assert.ok(templateIsCurrent(template), 'the template is stamped with this PGlite and schema');
    const copy = join(scratch, 'copy');
    assert.equal(await copyTemplate(copy, template), true);

    const made = files(source);
    const copied = files(copy);
    assert.deepEqual([...copied.keys()].sort(), [...made.keys()].sort());
    for (const [path, file] of copied) {
      assert.equal(file.mode, '600', path);
      assert.ok(file.content.equals(made.get(path)?.content ?? Buffer.alloc(0)), path);
    }

    const db = await openDatabase(copy);
    try {
      const { rows } = await db.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      assert.deepEqual(
        rows.map((row) => Number(row.version)),
        migrations.map((migration) => migration.version),
      );
      await db.query(
        "INSERT INTO customers (id, name, credits, credit_cost) VALUES (gen_random_uuid(), 'T', 1, 1)",
      );
    } finally {
      await db.close();
    }
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
});

test('when the template was made by another PGlite, then it is not used and nothing is written', async () => {
  const template = join(scratch, 'other.tar.gz');
  writeFileSync(template, '');
  writeFileSync(template.replace(/\.tar\.gz$/, '.json'), '{"pglite":"0.0.1","migrations":"x"}\n');
  assert.equal(templateIsCurrent(template), false);
  const target = join(scratch, 'untouched');
  assert.equal(await copyTemplate(target, template), false);
  assert.throws(() => statSync(target), /ENOENT/);
});
