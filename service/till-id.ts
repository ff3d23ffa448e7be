import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a till keeps its identity at the ledger, in its data folder. */
export const TILL_ID_FILE = 'till-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * This till's identity at the ledger (docs/cloud-api.md, "Tills"): every movement it makes
 * names it, and only this till resolves them, so it must outlive restarts and upgrades. The
 * configured one when given (the tray app keeps it in its settings, so a lost data folder does
 * not lose it), else the one in the data folder, created once (mode 0600, written whole). A file
 * that holds anything but a UUID is not guessed around: movements may name the id it held.
 */
export async function loadTillId(dataDir: string, configured?: string): Promise<string> {
  const file = join(dataDir, TILL_ID_FILE);
  let stored: string | undefined;
  try {
    stored = (await readFile(file, 'utf8')).trim().toLowerCase();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (stored !== undefined && !UUID.test(stored)) {
    throw new Error(`${file} does not hold a till id (a UUID); repair it or move it away`);
  }
  const tillId = configured?.toLowerCase() ?? stored ?? randomUUID();
  if (tillId !== stored) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${tillId}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }
  return tillId;
}
