import type { SafeStorage } from 'electron';
import type { KeyValueStore, SecretBox } from './settings-store.ts';

type AsyncSafeStorage = SecretBox &
  Pick<SafeStorage, 'isAsyncEncryptionAvailable' | 'decryptStringAsync'>;

/** Every `{ encrypted }` value in the stored settings (the keys, the earlier keys). */
function encryptedValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(encryptedValues);
  if (typeof value !== 'object' || value === null) return [];
  const encrypted = (value as { encrypted?: unknown }).encrypted;
  if (typeof encrypted === 'string') return [encrypted];
  return Object.values(value).flatMap(encryptedValues);
}

/**
 * The stored keys decrypted with safeStorage's asynchronous API before the settings load, so
 * that a locked keyring or a Keychain prompt never holds the main process: Electron's docs say
 * the synchronous calls "can block the current thread to collect user input" and recommend
 * `decryptStringAsync` (docs/api/safe-storage.md). The settings store reads them from here
 * (its decryptString answers from what was decrypted, or fails as the async call did). A key
 * the asynchronous API cannot read (one it reports unreadable rather than unavailable) is read
 * with the synchronous call, as before: never worse than that. Saving still encrypts
 * synchronously: it happens on the operator's click, after the keys were readable.
 */
export function asyncSecretBox(safeStorage: AsyncSafeStorage): SecretBox & {
  /** Decrypts what `store` holds now (at start, and on the window's Retry). */
  read(store: KeyValueStore): Promise<void>;
} {
  let decrypted = new Map<string, { result: string } | { error: Error }>();
  return {
    async read(store) {
      const next = new Map<string, { result: string } | { error: Error }>();
      const stored = encryptedValues(store.store);
      if (stored.length > 0 && (await safeStorage.isAsyncEncryptionAvailable())) {
        for (const encrypted of stored) {
          try {
            const { result } = await safeStorage.decryptStringAsync(
              Buffer.from(encrypted, 'base64'),
            );
            next.set(encrypted, { result });
          } catch (error) {
            // Locked or denied: the settings load without it and the window offers Retry.
            if (/temporarily unavailable/i.test((error as Error).message))
              next.set(encrypted, { error: error as Error });
          }
        }
      }
      decrypted = next;
    },
    isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
    ...(safeStorage.getSelectedStorageBackend && {
      getSelectedStorageBackend: () => safeStorage.getSelectedStorageBackend?.() ?? 'unknown',
    }),
    encryptString: (text) => safeStorage.encryptString(text),
    decryptString(buffer) {
      const known = decrypted.get(buffer.toString('base64'));
      if (!known) return safeStorage.decryptString(buffer);
      if ('error' in known) throw known.error;
      return known.result;
    },
  };
}
