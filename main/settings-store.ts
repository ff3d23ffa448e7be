import type { SafeStorage } from 'electron';
import {
  DEFAULT_SETTINGS,
  isTillId,
  migrateSettings,
  normalTillId,
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

/** What a stored key read as: the key, not a key at all, or locked (decrypting it failed). */
const LOCKED = Symbol('locked');

/** Stored secrets that did not decrypt; the plain settings as they were stored. */
class SecretsLocked extends Error {
  constructor(
    message: string,
    readonly settings: Settings,
  ) {
    super(message);
  }
}

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
  #locked: string | null = null;
  /**
   * Stored entries that did not decrypt, kept as stored so that a keychain that answers again
   * finds them: the locked API key and master key (until replaced), earlier keys.
   */
  #lockedEntries: { apiKey?: StoredKey; cardMasterKey?: StoredKey; earlier: StoredKey[] } = {
    earlier: [],
  };
  #earlierKeys: string[] = [];
  /**
   * Keys the service released before they were saved as earlier keys: a live key change
   * applies (and may release the old key at once) before the new settings are saved.
   */
  readonly #releasedEarly = new Set<string>();
  /** The key of the last load or save (undefined before, and after a recovery). */
  #currentKey: string | undefined;
  /** The till id stored: a save that does not name one keeps it (see Settings.tillId). */
  #tillId: string | null = null;

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

  /**
   * Why the stored API key or card master key cannot be read now (the keychain denied access,
   * the keyring is locked), or null. Nothing was changed: the settings load as stored, without
   * those keys, and the service waits for the operator to unlock and retry (load again), or to
   * enter the key again (save).
   */
  get locked(): string | null {
    return this.#locked;
  }

  /** Whether the stored card master key is among the locked secrets. */
  get masterKeyLocked(): boolean {
    return this.#lockedEntries.cardMasterKey !== undefined;
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

  /**
   * The service's till id, when the settings hold none yet (it created one in its data folder):
   * kept here too, in one atomic write of that field alone. A stored id is never replaced here:
   * the stored id is returned.
   */
  keepTillId(tillId: string): string {
    if (this.#tillId !== null) return this.#tillId;
    const kept = normalTillId(tillId);
    if (!isTillId(kept)) throw new Error(`not a till id: ${tillId}`);
    this.#store.store = { ...this.#store.store, tillId: kept };
    this.#tillId = kept;
    return kept;
  }

  /** True when the keys cannot be encrypted on this computer. */
  get plainTextKeyStorage(): boolean {
    if (!this.#safeStorage.isEncryptionAvailable()) return true;
    return this.#safeStorage.getSelectedStorageBackend?.() === 'basic_text';
  }

  /**
   * The settings, migrated to the current version; `generateKey` supplies a first key. When a
   * stored key does not decrypt, they load without it and `locked` says why (see there).
   */
  load(generateKey: () => string): Settings {
    this.#recovery = null;
    this.#locked = null;
    this.#lockedEntries = { earlier: [] };
    this.#earlierKeys = [];
    this.#currentKey = undefined;
    this.#tillId = null;
    try {
      return this.#load(generateKey);
    } catch (error) {
      // A keychain that denies access or a locked Linux keyring (safeStorage.decryptString
      // throws) is not a reason to replace the shop's key or forget its ledger: one "Deny" would
      // stop every POS call until someone typed it all in again.
      if (error instanceof SecretsLocked) {
        this.#locked = error.message;
        return error.settings;
      }
      // A hand-edited file that does not validate must not lock the operator out: keep a copy,
      // start from defaults.
      const raw = { ...this.#store.store };
      this.#backup(raw);
      this.#recovery = `The saved settings could not be read (${(error as Error).message}); they were backed up and defaults are in use. Enter the API key again.`;
      // But for the till's identity, when it reads as one: movements at the ledger name it.
      const tillId = normalTillId(typeof raw.tillId === 'string' ? raw.tillId : null);
      const settings: Settings = {
        ...DEFAULT_SETTINGS,
        apiKey: generateKey(),
        tillId: isTillId(tillId) ? tillId : null,
      };
      // The backup keeps the keys the recovered file held; none is carried over.
      this.#earlierKeys = [];
      this.#lockedEntries = { earlier: [] };
      this.#currentKey = undefined;
      this.#tillId = null;
      this.save(settings);
      return settings;
    }
  }

  #load(generateKey: () => string): Settings {
    const migrated = migrateSettings(this.#store.store) as unknown as StoredSettings;
    const failures: string[] = [];
    const read = (stored: unknown, what: string) => {
      const key = this.#readKeyOrLocked(stored);
      if (key === LOCKED) failures.push(`the ${what}`);
      return key;
    };
    const storedKey = read(migrated.apiKey, 'API key');
    const apiKey = storedKey === LOCKED ? '' : (storedKey ?? generateKey());
    const storedMasterKey =
      migrated.cardMasterKey === null ? null : read(migrated.cardMasterKey, 'card master key');
    if (storedMasterKey === undefined) throw new Error('cardMasterKey is not a stored key');
    const earlier = migrated.earlierApiKeys ?? [];
    if (!Array.isArray(earlier)) throw new Error('earlierApiKeys is not a list of keys');
    for (const stored of earlier) {
      const key = this.#readKeyOrLocked(stored);
      if (key === undefined) throw new Error('earlierApiKeys holds something that is not a key');
      // Not needed to run: kept as stored until it decrypts again.
      if (key === LOCKED) this.#lockedEntries.earlier.push(stored);
      else this.#earlierKeys.push(key);
    }
    const settings: Settings = {
      ...DEFAULT_SETTINGS,
      ...withoutVersion(migrated),
      apiKey,
      cardMasterKey: storedMasterKey === LOCKED ? null : storedMasterKey,
      // An installer may have written it in capitals.
      tillId: normalTillId(migrated.tillId ?? null),
    };
    this.#tillId = settings.tillId;
    const problems = settingsProblems(settings).filter(
      (problem) => !(failures.length > 0 && problem.field === 'apiKey'),
    );
    if (problems.length > 0) throw new Error(problems.map((problem) => problem.message).join(' '));
    if (failures.length > 0) {
      if (storedKey === LOCKED) this.#lockedEntries.apiKey = migrated.apiKey as StoredKey;
      if (storedMasterKey === LOCKED)
        this.#lockedEntries.cardMasterKey = migrated.cardMasterKey as StoredKey;
      throw new SecretsLocked(
        `${sentence(failures)} could not be decrypted (${this.#lastDecryptError}): the system's keychain denied access or the keyring is locked. Nothing was changed. Unlock it and click Retry, or enter the key again and save.`,
        settings,
      );
    }
    this.#currentKey = apiKey;
    if (migrated.version !== this.#store.get('version') || migrated.apiKey === null)
      this.save(settings);
    return settings;
  }

  /**
   * Saves all or nothing: invalid settings throw and leave the store as it was. A new API key
   * keeps the one it replaces as an earlier key in the same write, so no crash can lose a key
   * that unresolved movements need; settings without a till id keep the stored one. Returns the
   * settings as stored.
   */
  save(edit: Settings): Settings {
    const settings: Settings = { ...edit, tillId: normalTillId(edit.tillId) ?? this.#tillId };
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
    // Saved while locked, with the key entered again: the locked one may still be needed for
    // movements made with it, so it is kept (as stored) among the earlier keys.
    const lockedEarlier = [
      ...this.#lockedEntries.earlier,
      ...(this.#lockedEntries.apiKey ? [this.#lockedEntries.apiKey] : []),
    ];
    const stored: StoredSettings = {
      ...rest,
      version: SETTINGS_VERSION,
      apiKey: this.#writeKey(apiKey),
      cardMasterKey: cardMasterKey === null ? null : this.#writeKey(cardMasterKey),
      earlierApiKeys: this.#writeKeys([...earlier], lockedEarlier),
    };
    this.#store.store = { ...stored };
    this.#earlierKeys = [...earlier];
    this.#currentKey = apiKey;
    this.#lockedEntries = { earlier: lockedEarlier };
    this.#locked = null;
    this.#tillId = settings.tillId;
    return settings;
  }

  #writeKeys(
    keys: readonly string[] = this.#earlierKeys,
    locked: readonly StoredKey[] = this.#lockedEntries.earlier,
  ): StoredKey[] {
    return [...keys.map((key) => this.#writeKey(key)), ...locked];
  }

  #writeKey(secret: string): StoredKey {
    if (this.plainTextKeyStorage) return { plain: secret };
    return { encrypted: this.#safeStorage.encryptString(secret).toString('base64') };
  }

  /** What decrypting said the last time it failed. */
  #lastDecryptError = '';

  /** The key, undefined when `stored` is not a stored key, LOCKED when it does not decrypt. */
  #readKeyOrLocked(stored: unknown): string | undefined | typeof LOCKED {
    if (typeof stored !== 'object' || stored === null) return undefined;
    if ('plain' in stored && typeof stored.plain === 'string') return stored.plain;
    if ('encrypted' in stored && typeof stored.encrypted === 'string') {
      try {
        return this.#safeStorage.decryptString(Buffer.from(stored.encrypted, 'base64'));
      } catch (error) {
        this.#lastDecryptError = (error as Error).message.replace(/\.$/, '');
        return LOCKED;
      }
    }
    return undefined;
  }
}

/** "the API key", "the API key and the card master key". */
function sentence(parts: readonly string[]): string {
  const text = parts.join(' and ');
  return text.charAt(0).toUpperCase() + text.slice(1);
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
