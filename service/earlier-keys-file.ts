import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EarlierKeys } from './worker-service.ts';

/** Where the headless host keeps the keys in use, beside the generated `api-key` file. */
export const KEYS_FILE = 'api-keys-in-use.json';

interface KeysInUse {
  /** The key the last start used. */
  current: string;
  /** Keys replaced while movements made with them may be unresolved. */
  earlier: string[];
}

/**
 * The headless host's record of replaced API keys. The operator changes the key of a headless
 * service by changing its configuration and restarting; movements made with the previous key
 * must still be resolved with it (they belong to that key's shop), so at each start the key the
 * last start used joins the earlier keys when it differs from the configured one, and stays
 * until the service releases it. Kept in the data folder with mode 0600, like `api-key`: the same
 * protected place as a generated current key. Written whole, through a temporary file.
 */
export function openEarlierKeysFile(dataDir: string, currentKey: string): EarlierKeys {
  const file = join(dataDir, KEYS_FILE);
  const stored = readKeysInUse(file);
  const earlier = new Set(stored?.earlier ?? []);
  if (stored && stored.current !== currentKey) earlier.add(stored.current);
  // Back to a key replaced before: it is the current key again, not an earlier one.
  earlier.delete(currentKey);
  const write = () => {
    const next: KeysInUse = { current: currentKey, earlier: [...earlier] };
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  };
  write();
  return {
    keys: [...earlier],
    release(apiKey) {
      if (earlier.delete(apiKey)) write();
    },
  };
}

function readKeysInUse(file: string): KeysInUse | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: Partial<KeysInUse> = {};
  try {
    parsed = JSON.parse(text) as Partial<KeysInUse>;
  } catch {
    // answered below, without the text (it holds keys)
  }
  const isKey = (value: unknown): value is string => typeof value === 'string' && value !== '';
  if (!isKey(parsed.current) || !Array.isArray(parsed.earlier) || !parsed.earlier.every(isKey)) {
    // Not guessed around: movements may still need a key it holds.
    throw new Error(`${file} is not a record of API keys; repair it or move it away`);
  }
  return { current: parsed.current, earlier: parsed.earlier };
}
