import { existsSync, renameSync } from 'node:fs';
import type { KeyValueStore } from './settings-store.ts';

/**
 * Opens the settings file with `open` (electron-store). electron-store throws in its constructor
 * when the file is not JSON (a hand edit, a disk that lost the last write); the file is then
 * moved to `backup`, kept for support, and a fresh store is opened. `recovery` says so, so the
 * window can tell the operator that the defaults and a new API key are in use.
 */
export function openSettingsFile(
  open: () => KeyValueStore,
  file: string,
  backup: string,
): { store: KeyValueStore; recovery: string | null } {
  try {
    return { store: open(), recovery: null };
  } catch (error) {
    if (existsSync(file)) renameSync(file, backup);
    return {
      store: open(),
      recovery: `The settings file could not be read (${(error as Error).message}); it was moved to ${backup} and defaults are in use. Enter the API key again.`,
    };
  }
}
