import type { SafeStorage } from 'electron';
import {
  DEFAULT_SETTINGS,
  migrateSettings,
  settingsProblems,
  SETTINGS_VERSION,
  type Settings,
} from './settings.ts';

/** The part of electron-store main/ uses (so tests can pass a plain object). */
export interface KeyValueStore {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  /** Assigning replaces the whole file in one atomic write (electron-store writes via a temp file). */
  store: Record<string, unknown>;
}

/** The part of Electron's safeStorage used here. */
export type SecretBox = Pick<
  SafeStorage,
  'isEncryptionAvailable' | 'encryptString' | 'decryptString'
> &
  Partial<Pick<SafeStorage, 'getSelectedStorageBackend'>>;

/** A key encrypted by safeStorage (base64), or plain when the OS offers no encryption. */
type StoredKey = { encrypted: string } | { plain: string };

interface StoredSettings extends Omit<Settings, 'apiKey' | 'cardMasterKey'> {
  version: number;
  apiKey: StoredKey | null;
  /** The card master key, stored like the API key; null (or absent in older files): none. */
  cardMasterKey: StoredKey | null;
  /**
   * Keys the operator replaced while movements made with them may be unresolved (their shop's
   * movements are resolved with them), stored like the current key until the service releases
   * them. Absent in files written before it existed.
   */
  earlierApiKeys?: StoredKey[];
}

/**
 * The settings in one typed store: validated on every save, migrated on load, the API key and
 * the card master key encrypted with Electron's safeStorage where the OS offers it. On Linux
 * without a keyring safeStorage falls back to a hard-coded password ('basic_text'): that is
 * plain text in all but name, so it is stored and reported as plain text, and the window warns
 * about it.
 */
export class SettingsStore {
  readonly #store: KeyValueStore;
  readonly #safeStorage: SecretBox;
  readonly #backup: (raw: Record<string, unknown>) => void;
  #recovery: string | null = null;
  #earlierKeys: string[] = [];
  /**
   * Keys the service released before they were saved as earlier keys: a live key change
   * applies (and may release the old key at once) before the new settings are saved.
   */
  readonly #releasedEarly = new Set<string>();
  /** The key of the last load or save (undefined before, and after a recovery). */
  #currentKey: string | undefined;

  /** `backup` keeps settings that could not be read (e.g. as a file next to them). */
  constructor(
    store: KeyValueStore,
    safeStorage: SecretBox,
    backup: (raw: Record<string, unknown>) => void = () => undefined,
  ) {
    this.#store = store;
    this.#safeStorage = safeStorage;
    this.#backup = backup;
  }

  /**
   * Why the stored settings were set aside at the last load (null when they loaded): the window
   * shows it and asks for the API key again.
   */
  get recovery(): string | null {
    return this.#recovery;
  }

  /** Replaced keys the service still needs (see StoredSettings.earlierApiKeys). */
  get earlierApiKeys(): readonly string[] {
    return this.#earlierKeys;
  }

  /** The service no longer needs this replaced key: it is forgotten (one atomic write). */
  releaseEarlierKey(apiKey: string): void {
    if (!this.#earlierKeys.includes(apiKey)) {
      if (apiKey === this.#currentKey) this.#releasedEarly.add(apiKey);
      return;
    }
    this.#earlierKeys = this.#earlierKeys.filter((key) => key !== apiKey);
    this.#store.store = { ...this.#store.store, earlierApiKeys: this.#writeKeys() };
  }

  /** True when the keys cannot be encrypted on this computer. */
  get plainTextKeyStorage(): boolean {
    if (!this.#safeStorage.isEncryptionAvailable()) return true;
    return this.#safeStorage.getSelectedStorageBackend?.() === 'basic_text';
  }

  /** The settings, migrated to the current version; `generateKey` supplies a first key. */
  load(generateKey: () => string): Settings {
    this.#recovery = null;
    this.#earlierKeys = [];
    this.#currentKey = undefined;
    try {
      return this.#load(generateKey);
    } catch (error) {
      // A keychain that denies access, a locked Linux keyring (safeStorage.decryptString throws)
      // or a hand-edited file must not lock the operator out: keep a copy, start from defaults.
      const raw = { ...this.#store.store };
      this.#backup(raw);
      this.#recovery = `The saved settings could not be read (${(error as Error).message}); they were backed up and defaults are in use. Enter the API key again.`;
      const settings: Settings = { ...DEFAULT_SETTINGS, apiKey: generateKey() };
      // The backup keeps the keys the recovered file held; none is carried over.
      this.#earlierKeys = [];
      this.#currentKey = undefined;
      this.save(settings);
      return settings;
    }
  }

  #load(generateKey: () => string): Settings {
    const migrated = migrateSettings(this.#store.store) as unknown as StoredSettings;
    const apiKey = this.#readKey(migrated.apiKey) ?? generateKey();
    const cardMasterKey =
      migrated.cardMasterKey === null ? null : this.#readKey(migrated.cardMasterKey);
    if (cardMasterKey === undefined) throw new Error('cardMasterKey is not a stored key');
    const earlier = migrated.earlierApiKeys ?? [];
    if (!Array.isArray(earlier)) throw new Error('earlierApiKeys is not a list of keys');
    this.#earlierKeys = earlier.map((stored) => {
      const key = this.#readKey(stored);
      if (key === undefined) throw new Error('earlierApiKeys holds something that is not a key');
      return key;
    });
    const settings: Settings = {
      ...DEFAULT_SETTINGS,
      ...withoutVersion(migrated),
      apiKey,
      cardMasterKey,
    };
    this.#currentKey = apiKey;
    const problems = settingsProblems(settings);
    if (problems.length > 0) throw new Error(problems.map((problem) => problem.message).join(' '));
    if (migrated.version !== this.#store.get('version') || migrated.apiKey === null)
      this.save(settings);
    return settings;
  }

  /**
   * Saves all or nothing: invalid settings throw and leave the store as it was. A new API key
   * keeps the one it replaces as an earlier key in the same write, so no crash can lose a key
   * that unresolved movements need.
   */
  save(settings: Settings): void {
    const problems = settingsProblems(settings);
    if (problems.length > 0) throw new Error(problems.map((problem) => problem.message).join(' '));
    const { apiKey, cardMasterKey, ...rest } = settings;
    const previous = this.#currentKey;
    const earlier = new Set(this.#earlierKeys);
    if (previous !== undefined && previous !== apiKey && !this.#releasedEarly.has(previous)) {
      earlier.add(previous);
    }
    this.#releasedEarly.clear();
    // Back to a replaced key: it is the current key again.
    earlier.delete(apiKey);
    const stored: StoredSettings = {
      ...rest,
      version: SETTINGS_VERSION,
      apiKey: this.#writeKey(apiKey),
      cardMasterKey: cardMasterKey === null ? null : this.#writeKey(cardMasterKey),
      earlierApiKeys: this.#writeKeys([...earlier]),
    };
    this.#store.store = { ...stored };
    this.#earlierKeys = [...earlier];
    this.#currentKey = apiKey;
  }

  #writeKeys(keys: readonly string[] = this.#earlierKeys): StoredKey[] {
    return keys.map((key) => this.#writeKey(key));
  }

  #writeKey(secret: string): StoredKey {
    if (this.plainTextKeyStorage) return { plain: secret };
    return { encrypted: this.#safeStorage.encryptString(secret).toString('base64') };
  }

  #readKey(stored: unknown): string | undefined {
    if (typeof stored !== 'object' || stored === null) return undefined;
    if ('plain' in stored && typeof stored.plain === 'string') return stored.plain;
    if ('encrypted' in stored && typeof stored.encrypted === 'string') {
      return this.#safeStorage.decryptString(Buffer.from(stored.encrypted, 'base64'));
    }
    return undefined;
  }
}

function withoutVersion(stored: StoredSettings): Omit<Settings, 'apiKey' | 'cardMasterKey'> {
  const {
    version: _version,
    apiKey: _apiKey,
    cardMasterKey: _cardMasterKey,
    earlierApiKeys: _earlier,
    ...rest
  } = stored;
  return rest;
}
