import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_SETTINGS,
  migrateSettings,
  needsRestart,
  settingsProblems,
  SETTINGS_VERSION,
  type Settings,
} from '../../../main/settings.ts';
import { SettingsStore, type KeyValueStore, type SecretBox } from '../../../main/settings-store.ts';

const KEY = 'shop-key-0123456789abcdef';
const valid: Settings = { ...DEFAULT_SETTINGS, apiKey: KEY };

function memoryStore(initial: Record<string, unknown> = {}): KeyValueStore {
  const store: Record<string, unknown> = { ...initial };
  return { get: (key) => store[key], set: (key, value) => void (store[key] = value), store };
}

/** safeStorage stand-in: "encrypts" by reversing, so the test can see it was not stored plain. */
function secretBox(available: boolean, backend?: string): SecretBox {
  return {
    isEncryptionAvailable: () => available,
    encryptString: (text) => Buffer.from([...text].reverse().join('')),
    decryptString: (buffer) => [...buffer.toString()].reverse().join(''),
    getSelectedStorageBackend: backend
      ? () => backend as ReturnType<NonNullable<SecretBox['getSelectedStorageBackend']>>
      : undefined,
  };
}

describe('settings schema', () => {
  test('when every field is valid, then there is no problem', () => {
    assert.deepEqual(settingsProblems(valid), []);
  });

  test('when fields are wrong, then each is named in words an operator understands', () => {
    const problems = settingsProblems({
      ...valid,
      apiKey: 'short',
      allowedOrigins: ['https://a.example/x', 'https://*.b.example'],
      port: 0,
      cardKey: 'XYZ',
      walletSector: 0,
      cloudUrl: 'ftp://x',
    });
    assert.deepEqual(
      problems.map((problem) => problem.field),
      ['apiKey', 'allowedOrigins', 'allowedOrigins', 'port', 'cloudUrl', 'cardKey', 'walletSector'],
    );
    assert.match(problems[1]?.message ?? '', /https:\/\/a\.example\/x: not an exact origin/);
  });

  test('when only the key, origins, port or login item change, then the service takes them live; otherwise it restarts', () => {
    assert.equal(
      needsRestart(valid, {
        ...valid,
        apiKey: `${KEY}x`,
        allowedOrigins: ['https://a.example'],
        port: 5000,
        startAtLogin: true,
      }),
      false,
    );
    assert.equal(needsRestart(valid, { ...valid, walletSector: 2 }), true);
    assert.equal(needsRestart(valid, { ...valid, cloudUrl: 'https://ledger.example' }), true);
  });
});

describe('settings migration', () => {
  test('when stored settings have no version (0), then ledgerUrl becomes cloudUrl and defaults fill the rest', () => {
    const migrated = migrateSettings({ ledgerUrl: 'https://ledger.example', port: 5000 });
    assert.equal(migrated.version, SETTINGS_VERSION);
    assert.equal(migrated.cloudUrl, 'https://ledger.example');
    assert.equal(migrated.port, 5000);
    assert.equal(migrated.walletSector, 1);
    assert.equal('ledgerUrl' in migrated, false);
  });

  test('when settings come from a newer version, then they are refused, not guessed at', () => {
    assert.throws(() => migrateSettings({ version: SETTINGS_VERSION + 1 }), /newer version/);
  });
});

describe('settings store', () => {
  test('when encryption is available, then the key is stored encrypted and read back', () => {
    const store = memoryStore();
    const settings = new SettingsStore(store, secretBox(true, 'gnome_libsecret'));
    settings.save(valid);
    assert.deepEqual(store.store.apiKey, {
      encrypted: Buffer.from([...KEY].reverse().join('')).toString('base64'),
    });
    assert.equal(
      JSON.stringify(store.store).includes(KEY),
      false,
      'the key is not in the store in clear',
    );
    assert.equal(settings.load(() => 'unused-generated-key-0000').apiKey, KEY);
    assert.equal(settings.plainTextKeyStorage, false);
  });

  for (const [what, box] of [
    ['no encryption is available', secretBox(false)],
    ["Linux's basic_text fallback is all there is", secretBox(true, 'basic_text')],
  ] as const) {
    test(`when ${what}, then the key is stored as plain text and that is reported`, () => {
      const store = memoryStore();
      const settings = new SettingsStore(store, box);
      settings.save(valid);
      assert.deepEqual(store.store.apiKey, { plain: KEY });
      assert.equal(settings.plainTextKeyStorage, true);
    });
  }

  test('when nothing is stored yet, then defaults and a generated key are saved', () => {
    const store = memoryStore();
    const settings = new SettingsStore(store, secretBox(true)).load(
      () => 'generated-key-0123456789',
    );
    assert.equal(settings.apiKey, 'generated-key-0123456789');
    assert.equal(store.store.version, SETTINGS_VERSION);
    assert.equal(store.store.port, DEFAULT_SETTINGS.port);
  });

  test('when invalid settings are saved, then it throws and the store is unchanged', () => {
    const store = memoryStore();
    const settings = new SettingsStore(store, secretBox(true));
    settings.save(valid);
    const before = JSON.stringify(store.store);
    assert.throws(
      () => settings.save({ ...valid, allowedOrigins: ['https://a.example/path'] }),
      /not an exact origin/,
    );
    assert.equal(JSON.stringify(store.store), before);
  });
});
