import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { asyncSecretBox } from '../../../main/secret-box.ts';
import { SettingsStore, type KeyValueStore } from '../../../main/settings-store.ts';
import { FakeSafeStorage } from '../../support/electron-mock.ts';

const KEY = 'shop-key-0123456789abcdef';

function memoryStore(initial: Record<string, unknown>): KeyValueStore {
  const store: Record<string, unknown> = { ...initial };
  return {
    get: (key) => store[key],
    set: (key, value) => void (store[key] = value),
    store,
  };
}

/** Settings saved with a key (and an earlier key) encrypted by the keychain. */
function savedSettings(safeStorage: FakeSafeStorage): KeyValueStore {
  const encrypted = (text: string) => ({
    encrypted: safeStorage.encryptString(text).toString('base64'),
  });
  return memoryStore({
    version: 1,
    apiKey: encrypted(KEY),
    earlierApiKeys: [encrypted('shop-key-earlier-0123456789')],
  });
}

describe("the stored keys and safeStorage's asynchronous API", () => {
  test('when the settings load, then the keys are decrypted asynchronously: no synchronous call holds the main process on a locked keyring', async () => {
    const safeStorage = new FakeSafeStorage();
    const store = savedSettings(safeStorage);
    const box = asyncSecretBox(safeStorage as never);
    await box.read(store);
    const loaded = new SettingsStore(store, box).load(() => 'unused');
    assert.equal(loaded.apiKey, KEY);
    assert.equal(safeStorage.syncDecrypts, 0);
  });

  test('when the keyring is locked, then the settings wait for it (locked), and Retry after unlocking reads the keys', async () => {
    const safeStorage = new FakeSafeStorage();
    const store = savedSettings(safeStorage);
    safeStorage.denied = true;
    const box = asyncSecretBox(safeStorage as never);
    await box.read(store);
    const settings = new SettingsStore(store, box);
    settings.load(() => 'unused');
    assert.match(settings.locked ?? '', /temporarily unavailable/);
    assert.equal(safeStorage.syncDecrypts, 0, 'no synchronous call waits for the prompt');
    safeStorage.denied = false;
    await box.read(store);
    assert.equal(settings.load(() => 'unused').apiKey, KEY);
    assert.equal(settings.locked, null);
  });

  test('when the asynchronous API cannot read a stored key (not unavailable: unreadable), then the synchronous call reads it, as before', async () => {
    const safeStorage = new FakeSafeStorage();
    const store = savedSettings(safeStorage);
    const readable = safeStorage.decryptStringAsync.bind(safeStorage);
    safeStorage.decryptStringAsync = async (buffer: Buffer) =>
      buffer.toString().includes('earlier')
        ? readable(buffer)
        : Promise.reject(new Error('Error while decrypting'));
    const box = asyncSecretBox(safeStorage as never);
    await box.read(store);
    assert.equal(new SettingsStore(store, box).load(() => 'unused').apiKey, KEY);
    assert.equal(safeStorage.syncDecrypts, 1);
  });
});
