/**
 * The cloud ledger as a real child process (`card-wallet-cloud serve --port 0`), for tests of
 * the ledger and of the worker that calls it. Resolves once the process printed its
 * `listening on http://127.0.0.1:PORT` line; stop() is SIGTERM and a wait for exit 0.
 *
 *   const ledger = await startLedgerProcess({ database: await freshPgliteFolder(), seed });
 *   ... fetch(`${ledger.url}/v1/customer`, { headers: { 'X-Api-Key': key } }) ...
 *   await ledger.stop();
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Seed } from '../../cloud/seed.ts';

export type { Seed } from '../../cloud/seed.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface LedgerProcessOptions {
  /** A postgres:// URL or a PGlite folder (see freshPgliteFolder). */
  database: string;
  /** A seed object (written to a temp file) or the path of a seed file. */
  seed?: Seed | string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  poolSize?: number;
  /** Extra environment variables of the child. */
  env?: NodeJS.ProcessEnv;
  /** The CLI to run: default cloud/cli.ts through tsx; a .js path (dist/cloud/cli.js) runs as is. */
  cli?: string;
  /** How long to wait for the `listening on` line (default 90 s: a new PGlite folder takes ~10 s). */
  startTimeoutMs?: number;
}

export interface LedgerProcess {
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  port: number;
  pid: number;
  /** What the process wrote on stderr so far (the last 64 kB), for failure messages. */
  stderr(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after timeoutMs); resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Sends a signal without waiting (default SIGKILL: a crash). */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves when the process has exited, with its code (null when killed by a signal). */
  exited: Promise<number | null>;
}

const children = new Set<number>();
let exitHookInstalled = false;

export async function startLedgerProcess(options: LedgerProcessOptions): Promise<LedgerProcess> {
  const cli = options.cli ?? join(repoRoot, 'cloud', 'cli.ts');
  const args = [
    ...(cli.endsWith('.ts') ? ['--import', 'tsx'] : []),
    cli,
    'serve',
    '--port',
    String(options.port ?? 0),
    '--database',
    options.database,
  ];
  if (options.host) args.push('--host', options.host);
  if (options.poolSize) args.push('--pool-size', String(options.poolSize));
  let seedDir: string | undefined;
  if (typeof options.seed === 'string') {
    args.push('--seed', resolve(options.seed));
  } else if (options.seed) {
    seedDir = mkdtempSync(join(tmpdir(), 'cww-seed-'));
    const seedPath = join(seedDir, 'seed.json');
    writeFileSync(seedPath, JSON.stringify(options.seed));
    args.push('--seed', seedPath);
  }

  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the ledger process did not start');
  children.add(pid);
  installExitHook();

  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-65_536);
  });
  const exited = new Promise<number | null>((resolveExit) => {
    child.once('exit', (code) => {
      children.delete(pid);
      if (seedDir) rmSync(seedDir, { recursive: true, force: true });
      resolveExit(code);
    });
  });

  const url = await new Promise<string>((resolveUrl, reject) => {
    let stdout = '';
    const timeoutMs = options.startTimeoutMs ?? 90_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ledger did not listen within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the ledger exited (${code}) before listening; stderr:\n${stderr}`));
    });
  });
  // Keep draining stdout so the child never blocks on a full pipe.
  child.stdout.resume();

  return {
    url,
    port: Number(new URL(url).port),
    pid,
    stderr: () => stderr,
    exited,
    kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * A new, empty PGlite ledger folder (migrated) in the temp dir. Creating a PGlite database
 * takes seconds (initdb in WebAssembly), so the first call of a machine makes a template
 * folder once and every call copies it; pass the result as `database`, and remove it with
 * `rmSync(folder, { recursive: true, force: true })` when done.
 */
export async function freshPgliteFolder(): Promise<string> {
  const template = await pgliteTemplate();
  const folder = mkdtempSync(join(tmpdir(), 'cww-ledger-'));
  cpSync(template, folder, { recursive: true });
  return folder;
}

let templateReady: Promise<string> | undefined;

function pgliteTemplate(): Promise<string> {
  templateReady ??= (async () => {
    const { migrations } = await import('../../cloud/db/migrations/index.ts');
    const pglitePackage = join(repoRoot, 'node_modules', '@electric-sql', 'pglite', 'package.json');
    const { version } = JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string };
    // Each migration's number too: a migration renumbered with the same SQL makes a database
    // the ledger refuses ("schema at version N, newer than this ledger").
    const schema = createHash('sha256')
      .update(migrations.map(({ version, sql }) => `${version}\n${sql}`).join('\n'))
      .digest('hex')
      .slice(0, 12);
    const template = join(tmpdir(), `cww-pglite-template-${version}-${schema}`);
    if (existsSync(template)) return template;
    const building = mkdtempSync(join(tmpdir(), 'cww-pglite-building-'));
    const { openDatabase } = await import('../../cloud/db/open-database.ts');
    const db = await openDatabase(join(building, 'db'));
    await db.close();
    try {
      renameSync(join(building, 'db'), template); // atomic: a concurrent builder loses quietly
    } catch {
      // another process made it first
    }
    rmSync(building, { recursive: true, force: true });
    return template;
  })();
  return templateReady;
}

/** Children still running when this process ends (or is told to end) are killed, by PID. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  };
  process.on('exit', killAll);
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.once(name, () => {
      killAll();
      process.kill(process.pid, name); // then die of the signal as before
    });
  }
}
