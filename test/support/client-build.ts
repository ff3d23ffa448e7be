import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type * as ClientModule from '../../client/src/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = promisify(execFile);

export interface ClientBuild {
  /** Holds client/, scenarios/ and an empty index.html: a site to load them in a browser. */
  dir: string;
  /**
   * The package's build (what client/dist holds after `npm run build`): ES modules at the top,
   * `cjs/` and the one-file `browser/card-wallet-worker-client.js`.
   */
  clientDir: string;
  /** The folder holding test/client/client-scenarios.js, compiled for a browser. */
  scenariosDir: string;
}

/**
 * Builds the client package with its own tsconfig, and the shared scenarios for the browser,
 * into a fresh folder: the tests run what the sources make now, never a stale client/dist, and
 * two test files building at once do not write over each other.
 */
export async function buildClient(): Promise<ClientBuild> {
  const out = mkdtempSync(join(tmpdir(), 'cww-client-'));
  const clientDir = join(out, 'client');
  const scenariosDir = join(out, 'scenarios');
  await run(process.execPath, ['client/scripts/build.js', '--out', clientDir], { cwd: root });
  await run(
    process.execPath,
    [tsc, '-p', 'test/client/tsconfig.scenarios.json', '--outDir', scenariosDir],
    { cwd: root },
  );
  writeFileSync(join(out, 'index.html'), '<!doctype html><title>client tests</title>\n');
  return { dir: out, clientDir, scenariosDir };
}

/** The built client package, loaded in this process. */
export async function importClient(build: ClientBuild): Promise<typeof ClientModule> {
  return (await import(
    pathToFileURL(join(build.clientDir, 'index.js')).href
  )) as typeof ClientModule;
}
