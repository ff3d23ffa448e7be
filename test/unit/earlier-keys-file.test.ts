import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { KEYS_FILE, openEarlierKeysFile } from '../../service/earlier-keys-file.ts';

const A = 'first-key-0123456789abcdef';
const B = 'second-key-0123456789abcde';
const C = 'third-key-0123456789abcdef';

describe("the headless host's record of replaced API keys", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cww-keys-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const stored = () => JSON.parse(readFileSync(join(dir, KEYS_FILE), 'utf8')) as unknown;

  test('when the service starts for the first time, then there is no earlier key and the file is private', () => {
    assert.deepEqual(openEarlierKeysFile(dir, A).keys, []);
    assert.deepEqual(stored(), { current: A, earlier: [] });
    assert.equal(statSync(join(dir, KEYS_FILE)).mode & 0o777, 0o600);
  });

  test('when it starts with another key, then the previous one is an earlier key until released', () => {
    openEarlierKeysFile(dir, A);
    const second = openEarlierKeysFile(dir, B);
    assert.deepEqual(second.keys, [A]);
    // A crash before the release: the next start still has it.
    assert.deepEqual(openEarlierKeysFile(dir, C).keys, [A, B]);
    const third = openEarlierKeysFile(dir, C);
    third.release(A);
    assert.deepEqual(stored(), { current: C, earlier: [B] });
    assert.deepEqual(openEarlierKeysFile(dir, C).keys, [B]);
  });

  test('when the operator goes back to a replaced key, then it is the current key, not an earlier one', () => {
    openEarlierKeysFile(dir, A);
    openEarlierKeysFile(dir, B);
    assert.deepEqual(openEarlierKeysFile(dir, A).keys, [B]);
    assert.deepEqual(stored(), { current: A, earlier: [B] });
  });

  test('when the file is not a record of keys, then the start fails saying which file, without its text', () => {
    for (const text of ['{"current": "', '{"current": 5, "earlier": []}', `{"current": "${A}"}`]) {
      writeFileSync(join(dir, KEYS_FILE), text);
      assert.throws(
        () => openEarlierKeysFile(dir, B),
        (error: Error) =>
          error.message.includes(KEYS_FILE) &&
          error.message.includes('repair it or move it away') &&
          !error.message.includes(A),
      );
      assert.equal(readFileSync(join(dir, KEYS_FILE), 'utf8'), text, 'left as it was');
    }
  });
});
