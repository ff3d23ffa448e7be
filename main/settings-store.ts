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

interface StoredSettings extends Omit<Settings, 'apiKey'> {
  version: number;
  /** The API key, encrypted by safeStorage (base64), or plain when the OS offers no encryption. */
  apiKey: { encrypted: string } | { plain: string } | null;
}

/**
 * The settings in one typed store: validated on every save, migrated on load, the API key
 * encrypted with Electron's safeStorage where the OS offers it. On Linux without a keyring
 * safeStorage falls back to a hard-coded password ('basic_text'): that is plain text in all but
 * name, so it is stored and reported as plain text, and the window warns about it.
 */
export class SettingsStore {
  readonly #store: KeyValueStore;
  readonly #safeStorage: SecretBox;
  readonly #backup: (raw: Record<string, unknown>) => void;
  #recovery: string | null = null;

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

  /** True when the key cannot be encrypted on this computer. */
  get plainTextKeyStorage(): boolean {
    if (!this.#safeStorage.isEncryptionAvailable()) return true;
    return this.#safeStorage.getSelectedStorageBackend?.() === 'basic_text';
  }

  /** The settings, migrated to the current version; `generateKey` supplies a first key. */
  load(generateKey: () => string): Settings {
    this.#recovery = null;
    try {
      return this.#load(generateKey);
    } catch (error) {
      // A keychain that denies access, a locked Linux keyring (safeStorage.decryptString throws)
      // or a hand-edited file must not lock the operator out: keep a copy, start from defaults.
      const raw = { ...this.#store.store };
      this.#backup(raw);
      this.#recovery = `The saved settings could not be read (${(error as Error).message}); they were backed up and defaults are in use. Enter the API key again.`;
      const settings: Settings = { ...DEFAULT_SETTINGS, apiKey: generateKey() };
      this.save(settings);
      return settings;
    }
  }

  #load(generateKey: () => string): Settings {
    const migrated = migrateSettings(this.#store.store) as unknown as StoredSettings;
    const apiKey = this.#readKey(migrated.apiKey) ?? generateKey();
    const settings: Settings = { ...DEFAULT_SETTINGS, ...withoutVersion(migrated), apiKey };
    const problems = settingsProblems(settings);
    if (problems.length > 0) throw new Error(problems.map((problem) => problem.message).join(' '));
    if (migrated.version !== this.#store.get('version') || migrated.apiKey === null)
      this.save(settings);
    return settings;
  }

  /** Saves all or nothing: invalid settings throw and leave the store as it was. */
  save(settings: Settings): void {
    const problems = settingsProblems(settings);
    if (problems.length > 0) throw new Error(problems.map((problem) => problem.message).join(' '));
    const { apiKey, ...rest } = settings;
    const stored: StoredSettings = {
      ...rest,
      version: SETTINGS_VERSION,
      apiKey: this.#writeKey(apiKey),
    };
    this.#store.store = { ...stored };
  }

  #writeKey(apiKey: string): StoredSettings['apiKey'] {
    if (this.plainTextKeyStorage) return { plain: apiKey };
    return { encrypted: this.#safeStorage.encryptString(apiKey).toString('base64') };
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

function withoutVersion(stored: StoredSettings): Omit<Settings, 'apiKey'> {
  const { version: _version, apiKey: _apiKey, ...rest } = stored;
  return rest;
}
