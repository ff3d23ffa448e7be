// Where Electron's binary is, if it is installed, without touching the electron package: in
// Electron 45 `require('electron')` downloads the binary when it is missing, which must never
// happen on a machine without internet (CI, the headless service).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const electronDir = fileURLToPath(new URL('../node_modules/electron/', import.meta.url));

/** The Electron executable, or undefined when it is not installed here. */
export function installedElectron() {
  const pathFile = join(electronDir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(electronDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}
