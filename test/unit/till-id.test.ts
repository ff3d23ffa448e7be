import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadTillId, TILL_ID_FILE } from '../../service/till-id.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'cww-till-'));
  folders.push(made);
  return made;
};
after(() => folders.forEach((made) => rmSync(made, { recursive: true, force: true })));

describe('the till id', () => {
  test('when a data folder has none, then one is created (a UUID, mode 0600) and kept across starts', async () => {
    const dataDir = folder();
    const first = await loadTillId(dataDir);
    assert.match(first, UUID);
    const file = join(dataDir, TILL_ID_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8'), `${first}\n`);
    assert.equal(await loadTillId(dataDir), first);
  });

  test('when one is configured (the tray keeps it in its settings), then it is used and written to the data folder', async () => {
    const dataDir = folder();
    await loadTillId(dataDir);
    const configured = '3D0F1F9C-8A3E-4F5E-9D7A-2F1B6C0E4A10';
    assert.equal(await loadTillId(dataDir, configured), configured.toLowerCase());
    assert.equal(await loadTillId(dataDir), configured.toLowerCase());
  });

  test('when the file holds something else, then starting fails naming it, and the file is left alone', async () => {
    const dataDir = folder();
    const file = join(dataDir, TILL_ID_FILE);
    writeFileSync(file, 'not-a-till\n');
    await assert.rejects(loadTillId(dataDir), (error: Error) => error.message.includes(file));
    assert.equal(readFileSync(file, 'utf8'), 'not-a-till\n');
  });
});
