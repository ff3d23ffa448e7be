/**
 * KeyRing.retire of the key that is still the current one: nothing to keep, and nothing else
 * changes (an earlier key is released only when asked to, or when another key is retired).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { fingerprint } from '../support/money-rig.ts';

describe('KeyRing.retire', () => {
  test('when the key retired is the current one, then it stays current and no earlier key is released', () => {
    let current = 'key-a';
    const keys = new KeyRing(() => current, fingerprint);
    const released: string[] = [];
    keys.on('released', (key) => released.push(key));
    current = 'key-b';
    keys.retire('key-a', () => true);
    assert.deepEqual(keys.all(), ['key-b', 'key-a']);
    keys.retire('key-b', () => false);
    assert.deepEqual(released, []);
    assert.deepEqual(keys.all(), ['key-b', 'key-a']);
    assert.equal(keys.keyFor(fingerprint('key-b')), 'key-b');
  });
});
