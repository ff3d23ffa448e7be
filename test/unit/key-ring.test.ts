/**
 * The key ring: a movement is resolved with the key of the shop that made it, so a replaced key
 * is kept while a movement made with it is unresolved, then forgotten (and may be revoked).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { fingerprint } from '../support/money-rig.ts';

function ring(first: string) {
  let current = first;
  const keys = new KeyRing(() => current, fingerprint);
  const released: string[] = [];
  keys.on('released', (key) => released.push(key));
  return { keys, released, use: (key: string) => (current = key) };
}

describe('KeyRing', () => {
  test('when only the current key is held, then it is found by its fingerprint and no other is', () => {
    const { keys } = ring('key-a');
    assert.equal(keys.fingerprintOf('key-a'), fingerprint('key-a'));
    assert.equal(keys.keyFor(fingerprint('key-a')), 'key-a');
    assert.equal(keys.keyFor(fingerprint('key-b')), undefined);
    assert.deepEqual(keys.all(), ['key-a']);
  });

  test('when a replaced key still has unresolved movements, then it is kept (after the current one) until they are resolved, then released', () => {
    const { keys, released, use } = ring('key-a');
    use('key-b');
    let unresolved = true;
    keys.retire('key-a', (print) => unresolved && print === fingerprint('key-a'));
    assert.deepEqual(keys.all(), ['key-b', 'key-a']);
    assert.equal(keys.keyFor(fingerprint('key-a')), 'key-a');
    assert.deepEqual(released, []);
    unresolved = false;
    keys.releaseIdle(() => unresolved);
    assert.deepEqual(released, ['key-a']);
    assert.deepEqual(keys.all(), ['key-b']);
    assert.equal(keys.keyFor(fingerprint('key-a')), undefined);
  });

  test('when a replaced key has no unresolved movement, then it is released at once', () => {
    const { keys, released, use } = ring('key-a');
    use('key-b');
    keys.retire('key-a', () => false);
    assert.deepEqual(released, ['key-a']);
    assert.deepEqual(keys.all(), ['key-b']);
  });

  test('when the current key is "retired", then nothing changes', () => {
    const { keys, released } = ring('key-a');
    keys.retire('key-a', () => false);
    assert.deepEqual(released, []);
    assert.deepEqual(keys.all(), ['key-a']);
  });

  test('when the operator goes back to a kept key, then it is the current key again, listed once and never released', () => {
    const { keys, released, use } = ring('key-a');
    use('key-b');
    keys.retire('key-a', () => true);
    use('key-a');
    assert.deepEqual(keys.all(), ['key-a'], 'listed once');
    keys.releaseIdle(() => false);
    assert.deepEqual(released, []);
    assert.deepEqual(keys.all(), ['key-a']);
    // Replaced again later: kept again while needed.
    use('key-c');
    keys.retire('key-a', () => true);
    assert.deepEqual(keys.all(), ['key-c', 'key-a']);
  });

  test('when several keys were replaced, then each is released on its own', () => {
    const { keys, released, use } = ring('key-a');
    use('key-b');
    keys.retire('key-a', () => true);
    use('key-c');
    keys.retire('key-b', () => true);
    assert.deepEqual(keys.all(), ['key-c', 'key-a', 'key-b']);
    keys.releaseIdle((print) => print === fingerprint('key-a'));
    assert.deepEqual(released, ['key-b']);
    assert.deepEqual(keys.all(), ['key-c', 'key-a']);
  });
});
