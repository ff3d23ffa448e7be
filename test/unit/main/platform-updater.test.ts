import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The real electron-updater package, imported the way main/ imports it (no injection), by the
// built main/platform-updater.js under Node's own ES module loader, as in Electron's main
// process. Not under tsx: its interop lists getters as named exports and hid the bug.

const root = fileURLToPath(new URL('../../..', import.meta.url));
const built = join(root, 'dist', 'main', 'platform-updater.js');
const resources = mkdtempSync(join(tmpdir(), 'cww-resources-'));
after(() => rmSync(resources, { recursive: true, force: true }));

function importAsElectronDoes(): Record<string, unknown> {
  assert.ok(
    existsSync(built) &&
      statSync(built).mtimeMs >= statSync(join(root, 'main', 'platform-updater.ts')).mtimeMs,
    `${built} is missing or older than its source: run npm run build first`,
  );
  const child = spawnSync(
    process.execPath,
    [join(root, 'test', 'support', 'import-updater-child.mjs'), built, resources],
    { encoding: 'utf8' },
  );
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}');
}

describe("electron-updater's updater, loaded as main/ loads it", () => {
  test('when the package is imported by an ES module under Node, then the updater for this OS is found, one per app', () => {
    const found = importAsElectronDoes();
    assert.deepEqual(
      { updater: found.updater, same: found.same, error: found.error },
      { updater: 'AppImageUpdater', same: true, error: undefined },
      JSON.stringify(found),
    );
  });

  test('when its named export is read, then it is undefined and the default export holds it: why main/ takes the default (electron-builder#7976)', () => {
    const found = importAsElectronDoes();
    assert.deepEqual(
      { namedExport: found.namedExport, defaultExport: found.defaultExport },
      { namedExport: 'undefined', defaultExport: 'object' },
    );
  });
});
