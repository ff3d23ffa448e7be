import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openSettingsFile } from '../../../main/settings-file.ts';
import type { KeyValueStore } from '../../../main/settings-store.ts';

const folder = mkdtempSync(join(tmpdir(), 'cww-settings-file-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** electron-store as it opens a file: it reads and parses it in its constructor. */
function electronStore(file: string): () => KeyValueStore {
  return () => {
    const store = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    return { get: (key) => store[key], set: () => undefined, store };
  };
}

describe('opening the settings file', () => {
  test('when the file is not JSON, then it is moved aside, a fresh store opens and the window is told why', () => {
    const file = join(folder, 'settings.json');
    const backup = join(folder, 'settings.unreadable-1.json');
    writeFileSync(file, '{"port": 4178, "apiKey": {"encr');
    const opened = openSettingsFile(electronStore(file), file, backup);
    assert.deepEqual(opened.store.store, {});
    assert.equal(
      readFileSync(backup, 'utf8'),
      '{"port": 4178, "apiKey": {"encr',
      'kept for support',
    );
    assert.equal(existsSync(file), false);
    assert.match(
      opened.recovery ?? '',
      /could not be read .* moved to .*settings\.unreadable-1\.json/,
    );
    assert.match(opened.recovery ?? '', /Enter the API key again/);
  });

  test('when the file reads, then it is used as it is and there is nothing to tell', () => {
    const file = join(folder, 'good.json');
    writeFileSync(file, '{"port": 4178}');
    const opened = openSettingsFile(electronStore(file), file, join(folder, 'unused.json'));
    assert.deepEqual(opened.store.store, { port: 4178 });
    assert.equal(opened.recovery, null);
  });
});
