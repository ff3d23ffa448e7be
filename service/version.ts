import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * This package's version (package.json), as `--version`, the banner and the till's heartbeat
 * say it. Built (dist/service) and source (service/) files sit at different depths.
 */
export function packageVersion(): string {
  if (version !== undefined) return version;
  for (const candidate of [
    new URL('../../package.json', import.meta.url),
    new URL('../package.json', import.meta.url),
  ]) {
    try {
      version = (JSON.parse(readFileSync(candidate, 'utf8')) as { version: string }).version;
      return version;
    } catch {
      // The other depth.
    }
  }
  return 'unknown';
}
