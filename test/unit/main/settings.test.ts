import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { saveSettings } from '../../../main/save-settings.ts';
import {
  DEFAULT_SETTINGS,
  editedSettings,
  migrateSettings,
  needsRestart,
  settingsProblems,
  serviceConfig,
  SETTINGS_VERSION,
  windowSettings,
  type Settings,
} from '../../../main/settings.ts';
import { parseConfig } from '../../../service/config.ts';
import { SettingsStore, type KeyValueStore, type SecretBox } from '../../../main/settings-store.ts';

const KEY = 'shop-key-0123456789abcdef';
const valid: Settings = { ...DEFAULT_SETTINGS, apiKey: KEY };

function memoryStore(initial: Record<string, unknown> = {}): KeyValueStore {
  const store: Record<string, unknown> = { ...initial };
  return {
    get: (key) => store[key],
    set: (key, value) => void (store[key] = value),
    get store() {
      return store;
    },
    set store(value) {
      for (const key of Object.keys(store)) delete store[key];
      Object.assign(store, value);
    },
  };
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

  test('when the card simulator is turned on or off, then the service core restarts with it', () => {
    assert.equal(valid.simulator, false, 'off by default');
    assert.equal(needsRestart(valid, { ...valid, simulator: true }), true);
    assert.equal(needsRestart({ ...valid, simulator: true }, valid), true);
    assert.equal(
      parseConfig(serviceConfig({ ...valid, simulator: true }, '/tmp/data')).simulator,
      true,
    );
    assert.equal(parseConfig(serviceConfig(valid, '/tmp/data')).simulator, false);
  });

  for (const simulator of [undefined, 'true', 1, null]) {
    test(`when the simulator setting is ${JSON.stringify(simulator) ?? 'missing'}, then it is refused, never read as on or off`, () => {
      assert.deepEqual(settingsProblems({ ...valid, simulator } as unknown as Settings), [
        { field: 'simulator', message: 'The card simulator setting must be on or off.' },
      ]);
    });
  }
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

  test('when stored settings predate the simulator setting, then they load with it off', () => {
    assert.equal(migrateSettings({ ledgerUrl: 'https://ledger.example' }).simulator, false);
    const store = memoryStore({ version: 1, port: 5000, apiKey: { plain: KEY } });
    const loaded = new SettingsStore(store, secretBox(false)).load(() => 'unused-key-0123456789');
    assert.equal(loaded.simulator, false);
    assert.equal(loaded.port, 5000);
  });

  test('when the stored simulator setting is not a boolean (a hand-edited file), then defaults load with it off', () => {
    const store = memoryStore({ version: 1, simulator: 'yes', apiKey: { plain: KEY } });
    const settings = new SettingsStore(store, secretBox(false));
    assert.equal(settings.load(() => 'generated-key-0123456789').simulator, false);
    assert.match(settings.recovery ?? '', /card simulator setting must be on or off/);
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

describe('settings against the service schema', () => {
  for (const cloudUrl of ['https://exa mple.com', 'https://host:99999']) {
    test(`when the ledger URL is ${cloudUrl}, then the window refuses it (the service would not start)`, () => {
      assert.deepEqual(
        settingsProblems({ ...valid, cloudUrl }).map((problem) => problem.field),
        ['cloudUrl'],
      );
    });
  }

  test('when the window accepts settings, then the service config parses them', () => {
    assert.deepEqual(settingsProblems({ ...valid, cloudUrl: 'https://ledger.example:8443' }), []);
    assert.doesNotThrow(() => parseConfig(serviceConfig(valid, '/tmp/data')));
  });
});

describe('settings recovery', () => {
  /** safeStorage that refuses to decrypt until `unlock()`, as a denied keychain or locked keyring. */
  function lockedBox() {
    let locked = true;
    const box: SecretBox = {
      ...secretBox(true, 'gnome_libsecret'),
      decryptString: (buffer) => {
        if (locked)
          throw new Error(
            'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
          );
        return [...buffer.toString()].reverse().join('');
      },
    };
    return { box, unlock: () => (locked = false) };
  }

  test('when the key cannot be decrypted (keychain denied, keyring locked), then nothing is replaced: the ledger URL, origins and port load as stored, no key is generated, the file is untouched, and it says why', () => {
    const store = memoryStore();
    const shop = {
      ...valid,
      port: 5000,
      cloudUrl: 'https://ledger.example.com',
      allowedOrigins: ['https://pos.example.com'],
    };
    new SettingsStore(store, secretBox(true, 'gnome_libsecret')).save(shop);
    const before = JSON.stringify(store.store);
    const backups: Record<string, unknown>[] = [];
    const { box, unlock } = lockedBox();
    const settings = new SettingsStore(store, box, (raw) => backups.push(raw));
    let generated = 0;
    const loaded = settings.load(() => {
      generated += 1;
      return 'generated-key-0123456789';
    });
    assert.deepEqual(
      { port: loaded.port, cloudUrl: loaded.cloudUrl, allowedOrigins: loaded.allowedOrigins },
      {
        port: 5000,
        cloudUrl: 'https://ledger.example.com',
        allowedOrigins: ['https://pos.example.com'],
      },
    );
    assert.equal(loaded.apiKey, '', 'no key: the service waits');
    assert.equal(generated, 0, 'no new key was made');
    assert.equal(JSON.stringify(store.store), before, 'the file is as it was');
    assert.deepEqual(backups, []);
    assert.equal(settings.recovery, null);
    assert.match(
      settings.locked ?? '',
      /The API key could not be decrypted .*Unlock it and click Retry/,
    );
    // The operator unlocks the keyring and retries: the stored key is back.
    unlock();
    assert.equal(settings.load(() => 'generated-key-0123456789').apiKey, KEY);
    assert.equal(settings.locked, null);
  });

  test('when the key cannot be decrypted and the operator enters it again, then it is saved with the stored settings, and the locked entry is kept (as stored) among the earlier keys', () => {
    const store = memoryStore();
    new SettingsStore(store, secretBox(true, 'gnome_libsecret')).save({ ...valid, port: 5000 });
    const lockedEntry = store.store.apiKey;
    // The keyring lost its key for good (a new user profile): decrypting fails, encrypting works.
    const { box } = lockedBox();
    const settings = new SettingsStore(store, box);
    const loaded = settings.load(() => 'unused-generated-key-0000');
    settings.save({ ...loaded, apiKey: 'the-key-the-pos-uses-0123' });
    assert.equal(settings.locked, null);
    assert.equal(store.store.port, 5000);
    assert.deepEqual(store.store.earlierApiKeys, [lockedEntry]);
    assert.deepEqual(settings.earlierApiKeys, [], 'not readable: not handed to the service');
  });

  test('when the stored settings are invalid, then they are backed up and defaults load', () => {
    const backups: Record<string, unknown>[] = [];
    const store = memoryStore({ version: 1, port: 'x', apiKey: { plain: KEY } });
    const settings = new SettingsStore(store, secretBox(true), (raw) => backups.push(raw));
    assert.equal(settings.load(() => 'generated-key-0123456789').port, DEFAULT_SETTINGS.port);
    assert.equal(backups.length, 1);
    assert.notEqual(settings.recovery, null);
  });

  test('when settings are saved, then they are written as one object (a crash cannot leave a mix)', () => {
    const writes: unknown[] = [];
    const store = memoryStore();
    const counted: KeyValueStore = {
      get: store.get,
      set: (key, value) => {
        writes.push(key);
        store.set(key, value);
      },
      get store() {
        return store.store;
      },
      set store(value) {
        writes.push(value);
        for (const key of Object.keys(store.store)) delete store.store[key];
        Object.assign(store.store, value);
      },
    };
    new SettingsStore(counted, secretBox(true)).save(valid);
    assert.equal(writes.length, 1);
    assert.equal(counted.store.port, DEFAULT_SETTINGS.port);
  });

  describe('replaced API keys (movements made with them are resolved with them)', () => {
    const NEW_KEY = 'new-shop-key-0123456789abc';
    const open = (store: KeyValueStore) => {
      const settings = new SettingsStore(store, secretBox(true, 'gnome_libsecret'));
      settings.load(() => 'unused-generated-key-0000');
      return settings;
    };
    /** Settings holding KEY, as a first save writes them. */
    const seed = (store: KeyValueStore) =>
      new SettingsStore(store, secretBox(true, 'gnome_libsecret')).save(valid);

    test('when the key is changed, then the old one is kept encrypted in the same write, and after a restart', () => {
      const store = memoryStore();
      seed(store);
      const settings = open(store);
      settings.save({ ...valid, apiKey: NEW_KEY });
      assert.deepEqual(settings.earlierApiKeys, [KEY]);
      assert.equal(JSON.stringify(store.store).includes(KEY), false, 'never in clear');
      assert.deepEqual(open(store).earlierApiKeys, [KEY], 'a restart still has it');
    });

    test('when the service releases a replaced key, then it is forgotten, also after a restart', () => {
      const store = memoryStore();
      seed(store);
      const settings = open(store);
      settings.save({ ...valid, apiKey: NEW_KEY });
      settings.releaseEarlierKey(KEY);
      assert.deepEqual(settings.earlierApiKeys, []);
      assert.deepEqual(open(store).earlierApiKeys, []);
      assert.equal(open(store).load(() => 'unused').apiKey, NEW_KEY);
    });

    test('when a live change releases the old key before the new settings are saved, then it is not kept', () => {
      const store = memoryStore();
      seed(store);
      const settings = open(store);
      settings.releaseEarlierKey(KEY); // the service applied the change and needs KEY no more
      settings.save({ ...valid, apiKey: NEW_KEY });
      assert.deepEqual(settings.earlierApiKeys, []);
    });

    test('when the operator goes back to a replaced key, then it is the current key, not an earlier one', () => {
      const store = memoryStore();
      seed(store);
      const settings = open(store);
      settings.save({ ...valid, apiKey: NEW_KEY });
      settings.save(valid);
      assert.deepEqual(settings.earlierApiKeys, [NEW_KEY]);
    });

    test('when a stored earlier key cannot be decrypted, then the settings load and that key is kept as stored until it decrypts again', () => {
      const store = memoryStore();
      seed(store);
      open(store).save({ ...valid, apiKey: NEW_KEY });
      const backups: unknown[] = [];
      let calls = 0;
      const failsOnEarlier: SecretBox = {
        ...secretBox(true, 'gnome_libsecret'),
        decryptString: (buffer) => {
          calls += 1;
          if (calls > 1) throw new Error('keyring locked');
          return [...buffer.toString()].reverse().join('');
        },
      };
      const stored = JSON.stringify(store.store.earlierApiKeys);
      const settings = new SettingsStore(store, failsOnEarlier, (raw) => backups.push(raw));
      assert.equal(settings.load(() => 'generated-key-0123456789').apiKey, NEW_KEY);
      assert.deepEqual(backups, []);
      assert.equal(settings.recovery, null);
      assert.equal(settings.locked, null);
      assert.deepEqual(settings.earlierApiKeys, []);
      settings.save({ ...valid, apiKey: NEW_KEY, port: 5001 });
      assert.equal(JSON.stringify(store.store.earlierApiKeys), stored, 'kept as stored');
    });
  });
});

describe('the card master key and autoPersonalize', () => {
  // A test master key (public: never a real one).
  const MASTER = '000102030405060708090a0b0c0d0e0f';
  const withMaster: Settings = { ...valid, cardMasterKey: MASTER };

  test('when nothing says otherwise, then no master key is set and autoPersonalize is on, also for settings saved before they existed', () => {
    assert.equal(valid.cardMasterKey, null);
    assert.equal(valid.autoPersonalize, true);
    const store = memoryStore({ version: 1, port: 5000, apiKey: { plain: KEY } });
    const loaded = new SettingsStore(store, secretBox(false)).load(() => 'unused-key-0123456789');
    assert.equal(loaded.cardMasterKey, null);
    assert.equal(loaded.autoPersonalize, true);
  });

  test('when a master key is saved with encryption available, then it is stored encrypted, never in clear, and read back', () => {
    const store = memoryStore();
    const settings = new SettingsStore(store, secretBox(true, 'gnome_libsecret'));
    settings.save(withMaster);
    assert.deepEqual(store.store.cardMasterKey, {
      encrypted: Buffer.from([...MASTER].reverse().join('')).toString('base64'),
    });
    assert.equal(JSON.stringify(store.store).includes(MASTER), false, JSON.stringify(store.store));
    assert.equal(settings.load(() => 'unused-generated-key-0000').cardMasterKey, MASTER);
    settings.save(valid);
    assert.equal(store.store.cardMasterKey, null, 'cleared');
    assert.equal(settings.load(() => 'unused-generated-key-0000').cardMasterKey, null);
  });

  test('when the OS offers no encryption, then the master key is stored as plain text, as the API key is', () => {
    const store = memoryStore();
    new SettingsStore(store, secretBox(false)).save(withMaster);
    assert.deepEqual(store.store.cardMasterKey, { plain: MASTER });
  });

  test('when the stored master key is bare text (a hand-edited file), then the settings are set aside and defaults load', () => {
    const backups: unknown[] = [];
    const store = memoryStore({ version: 1, apiKey: { plain: KEY }, cardMasterKey: MASTER });
    const settings = new SettingsStore(store, secretBox(true, 'gnome_libsecret'), (raw) =>
      backups.push(raw),
    );
    assert.equal(settings.load(() => 'generated-key-0123456789').cardMasterKey, null);
    assert.equal(backups.length, 1, 'the unreadable settings are kept');
    assert.notEqual(settings.recovery, null);
  });

  test('when the stored master key does not decrypt (keyring locked), then the settings are locked, not replaced, and say so', () => {
    const store = memoryStore({
      version: 1,
      apiKey: { plain: KEY },
      cardMasterKey: { encrypted: 'bm90IGEga2V5' },
    });
    const box: SecretBox = {
      ...secretBox(true, 'gnome_libsecret'),
      decryptString: () => {
        throw new Error('keyring locked');
      },
    };
    const settings = new SettingsStore(store, box);
    const loaded = settings.load(() => 'generated-key-0123456789');
    assert.equal(loaded.apiKey, KEY);
    assert.equal(settings.masterKeyLocked, true);
    assert.match(
      settings.locked ?? '',
      /The card master key could not be decrypted \(keyring locked\)/,
    );
    assert.equal(settings.recovery, null);
  });

  for (const cardMasterKey of ['00112233', `${MASTER}00`, 'g'.repeat(32), '', 42]) {
    test(`when the master key is ${JSON.stringify(cardMasterKey)}, then the operator is told what it must be, without the value`, () => {
      const problems = settingsProblems({ ...valid, cardMasterKey } as unknown as Settings);
      assert.deepEqual(problems, [
        {
          field: 'cardMasterKey',
          message:
            'The card master key must be 32 hex digits (16 bytes), e.g. from "openssl rand -hex 16"; leave it empty to keep the one set.',
        },
      ]);
    });
  }

  for (const autoPersonalize of [undefined, 'true', null]) {
    test(`when autoPersonalize is ${JSON.stringify(autoPersonalize) ?? 'missing'}, then it is refused, never read as on or off`, () => {
      assert.deepEqual(settingsProblems({ ...valid, autoPersonalize } as unknown as Settings), [
        {
          field: 'autoPersonalize',
          message: 'Personalizing cards on their first recharge must be on or off.',
        },
      ]);
    });
  }

  test('when the master key or autoPersonalize changes, then the service core restarts with them', () => {
    assert.equal(needsRestart(valid, withMaster), true);
    assert.equal(needsRestart(withMaster, valid), true);
    assert.equal(needsRestart(valid, { ...valid, autoPersonalize: false }), true);
    const config = parseConfig(serviceConfig({ ...withMaster, autoPersonalize: false }, '/d'));
    assert.equal(config.cardMasterKey, MASTER.toUpperCase());
    assert.equal(config.autoPersonalize, false);
    assert.equal(parseConfig(serviceConfig(valid, '/d')).cardMasterKey, undefined);
  });

  test('when refuseCardsAboveAccount is stored before it existed, then it is off; changing it restarts the core with it', () => {
    assert.equal(DEFAULT_SETTINGS.refuseCardsAboveAccount, false);
    assert.equal(migrateSettings({ version: 1, port: 4178 }).refuseCardsAboveAccount, false);
    assert.equal(needsRestart(valid, { ...valid, refuseCardsAboveAccount: true }), true);
    const config = parseConfig(serviceConfig({ ...valid, refuseCardsAboveAccount: true }, '/d'));
    assert.equal(config.refuseCardsAboveAccount, true);
    assert.deepEqual(
      settingsProblems({ ...valid, refuseCardsAboveAccount: 'yes' } as unknown as Settings),
      [
        {
          field: 'refuseCardsAboveAccount',
          message: 'Refusing cards above their account must be on or off.',
        },
      ],
    );
  });

  test('when the window is sent the settings, then it learns only whether a master key is set', () => {
    const shown = windowSettings(withMaster);
    assert.equal(shown.cardMasterKeySet, true);
    assert.equal(JSON.stringify(shown).includes(MASTER), false, JSON.stringify(shown));
    assert.equal(windowSettings(valid).cardMasterKeySet, false);
  });

  test('when the window saves, then an absent master key keeps the stored one, null clears it and text replaces it', () => {
    const { cardMasterKey: _kept, ...edit } = withMaster;
    assert.equal(editedSettings(withMaster, edit).cardMasterKey, MASTER);
    assert.equal(editedSettings(withMaster, { ...edit, cardMasterKey: null }).cardMasterKey, null);
    const other = 'ffeeddccbbaa99887766554433221100';
    assert.equal(editedSettings(valid, { ...edit, cardMasterKey: other }).cardMasterKey, other);
  });

  test('when the window saves without touching the master key, then nothing restarts; with a new one, the core restarts with it', async () => {
    const restarts: Settings[] = [];
    let saved = withMaster;
    const steps = {
      service: { applySettings: async () => undefined },
      persist: (next: Settings) => void (saved = next),
      restart: async (next: Settings) => void restarts.push(next),
    };
    const { cardMasterKey: _kept, ...edit } = withMaster;
    assert.deepEqual(await saveSettings(saved, { ...edit, port: 5000 }, steps), {
      ok: true,
      restarted: false,
    });
    assert.equal(saved.cardMasterKey, MASTER);
    const refused = await saveSettings(saved, { ...edit, cardMasterKey: 'not-a-key' }, steps);
    assert.deepEqual(refused.ok ? [] : refused.problems.map((problem) => problem.field), [
      'cardMasterKey',
    ]);
    assert.equal(saved.cardMasterKey, MASTER, 'a refused save changes nothing');
    const other = 'FFEEDDCCBBAA99887766554433221100';
    assert.deepEqual(await saveSettings(saved, { ...edit, cardMasterKey: other }, steps), {
      ok: true,
      restarted: true,
    });
    assert.deepEqual(
      restarts.map((next) => next.cardMasterKey),
      [other],
    );
  });
});

describe("the till id (this till's identity at the ledger)", () => {
  const TILL = '3d0f1f9c-8a3e-4f5e-9d7a-2f1b6c0e4a10';
  const OTHER = '7b2c6a1e-0f4d-4c8b-a1e2-9d3f5b6c7a80';
  const withTill: Settings = { ...valid, tillId: TILL };
  /** The window's edit: what it sends, without the till id it was shown. */
  const { cardMasterKey: _master, tillId: _till, ...edit } = withTill;

  test('when the window saves without a till id (absent, or null for an empty field), then this till keeps its id and nothing restarts for it', async () => {
    for (const sent of [edit, { ...edit, tillId: null }]) {
      let saved: Settings | undefined;
      const result = await saveSettings(withTill, sent, {
        service: { applySettings: async () => undefined },
        persist: (next) => void (saved = next),
        restart: async () => assert.fail('no restart'),
      });
      assert.deepEqual(result, { ok: true, restarted: false });
      assert.equal(saved?.tillId, TILL, JSON.stringify(sent));
    }
  });

  test('when the operator enters another till id, then it replaces this one (lower-case, as the service writes it) and the service restarts with it', async () => {
    const restarts: Settings[] = [];
    const result = await saveSettings(
      withTill,
      { ...edit, tillId: ` ${OTHER.toUpperCase()} ` },
      {
        service: { applySettings: async () => undefined },
        persist: () => undefined,
        restart: async (next) => void restarts.push(next),
      },
    );
    assert.deepEqual(result, { ok: true, restarted: true });
    assert.deepEqual(
      restarts.map((next) => next.tillId),
      [OTHER],
    );
    assert.equal(parseConfig(serviceConfig(restarts[0] as Settings, '/tmp/data')).tillId, OTHER);
  });

  for (const tillId of ['till-1', `${TILL}0`, '', 42]) {
    test(`when the till id entered is ${JSON.stringify(tillId)}, then the operator is told what it must be and nothing is saved`, async () => {
      const result = await saveSettings(
        withTill,
        { ...edit, tillId: tillId as string },
        {
          service: undefined,
          persist: () => assert.fail('nothing is saved'),
          restart: async () => assert.fail('no restart'),
        },
      );
      assert.deepEqual(result.ok ? [] : result.problems, [
        {
          field: 'tillId',
          message:
            'The till id must be a UUID (8-4-4-4-12 hex digits), as support or your provider gave it; leave it as it is otherwise.',
        },
      ]);
    });
  }

  test('when the settings hold no till id, then the service config names none (the service uses its data folder); when they hold one, the service takes it', () => {
    assert.equal(parseConfig(serviceConfig(valid, '/tmp/data')).tillId, undefined);
    assert.equal(parseConfig(serviceConfig(withTill, '/tmp/data')).tillId, TILL);
  });

  test('when the service made the till id, then the store keeps it in a write of that field alone, and saves without one keep it, also after a restart', () => {
    const store = memoryStore();
    const settings = new SettingsStore(store, secretBox(true, 'gnome_libsecret'));
    const loaded = settings.load(() => KEY);
    assert.equal(loaded.tillId, null, 'none before the service started');
    const before = { ...store.store };
    assert.equal(settings.keepTillId(TILL.toUpperCase()), TILL);
    assert.deepEqual(store.store, { ...before, tillId: TILL }, 'only the till id was written');
    // A save that names none (a window that loaded the settings before) keeps it.
    assert.equal(settings.save({ ...loaded, port: 5000 }).tillId, TILL);
    assert.equal(store.store.tillId, TILL);
    const restarted = new SettingsStore(store, secretBox(true, 'gnome_libsecret'));
    assert.equal(restarted.load(() => 'unused-generated-key-0000').tillId, TILL);
    // A stored id is not replaced by the service's: the service runs with the stored one.
    assert.equal(restarted.keepTillId(OTHER), TILL);
    assert.equal(store.store.tillId, TILL);
  });

  test('when an installer wrote the till id alone (in capitals), then it loads lower-case with a generated key, and the service is given it', () => {
    const store = memoryStore({ tillId: TILL.toUpperCase() });
    const loaded = new SettingsStore(store, secretBox(true)).load(() => KEY);
    assert.equal(loaded.tillId, TILL);
    assert.equal(loaded.apiKey, KEY);
    assert.equal(store.store.tillId, TILL);
    assert.equal(parseConfig(serviceConfig(loaded, '/tmp/data')).tillId, TILL);
  });

  test('when the stored settings are invalid, then defaults load but for the till id, which is kept; an invalid till id is backed up with the rest', () => {
    const kept = new SettingsStore(
      memoryStore({ version: 1, port: 'x', apiKey: { plain: KEY }, tillId: TILL }),
      secretBox(true),
    );
    const loaded = kept.load(() => 'generated-key-0123456789');
    assert.notEqual(kept.recovery, null);
    assert.equal(loaded.port, DEFAULT_SETTINGS.port);
    assert.equal(loaded.tillId, TILL);
    const backups: Record<string, unknown>[] = [];
    const dropped = new SettingsStore(
      memoryStore({ version: 1, apiKey: { plain: KEY }, tillId: 'till-1' }),
      secretBox(true),
      (raw) => backups.push(raw),
    );
    assert.equal(dropped.load(() => 'generated-key-0123456789').tillId, null);
    assert.deepEqual(
      backups.map((raw) => raw.tillId),
      ['till-1'],
    );
  });

  test('when the keys are locked, then the till id loads as stored, and a save with the key entered again keeps it', () => {
    const store = memoryStore();
    new SettingsStore(store, secretBox(true, 'gnome_libsecret')).save(withTill);
    const locked = new SettingsStore(store, {
      ...secretBox(true, 'gnome_libsecret'),
      decryptString: () => {
        throw new Error('Error while decrypting the ciphertext provided to safeStorage.');
      },
    });
    const loaded = locked.load(() => 'unused-generated-key-0000');
    assert.notEqual(locked.locked, null);
    assert.equal(loaded.tillId, TILL);
    locked.save({ ...loaded, apiKey: 'the-key-the-pos-uses-0123', tillId: null });
    assert.equal(store.store.tillId, TILL);
  });
});
