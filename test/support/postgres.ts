/**
 * A real, throwaway PostgreSQL server for tests and benchmarks: `initdb` into a temp folder,
 * `postgres` on 127.0.0.1 (a free port) with its unix socket in that folder, stopped by PID.
 * As root the binaries run as the `postgres` user (PostgreSQL refuses root), in a folder it
 * owns. Binaries: $PG_BIN, else /usr/lib/postgresql/<newest>/bin, else the PATH.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import type { Database, Queryable } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust auth, no password). */
  url: string;
  port: number;
  /** The postmaster's PID. */
  pid: number;
  /** Its folder (data/ and the unix socket), removed by stop(). */
  dir: string;
  /** Fast shutdown (SIGINT to the postmaster), waits for it to exit, removes the folder. */
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string | number>;
  /** How long to wait for the server to accept connections (default 60 s). */
  readyTimeoutMs?: number;
}

const running = new Set<number>();
let exitHookInstalled = false;

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'cww-pg-'));
  const dataDir = join(dir, 'data');
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const run = (program: string, args: string[]) =>
    asRoot
      ? { command: 'setpriv', args: privilegeDrop(join(bin, program), args) }
      : { command: join(bin, program), args };

  const initdb = run('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  const init = spawnSync(initdb.command, initdb.args, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.error?.message}`);
  }

  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    max_connections: 200,
    shared_buffers: '64MB',
    fsync: 'off', // a throwaway server: durability is not under test, speed is welcome
    synchronous_commit: 'off',
    full_page_writes: 'off',
    logging_collector: 'off',
    ...options.settings,
  };
  const server = run('postgres', [
    '-D',
    dataDir,
    '-p',
    String(port),
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ]);
  const child = spawn(server.command, server.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    log = (log + chunk).slice(-8000);
  });
  // setpriv execs postgres in place, so the child's PID is the postmaster's.
  const pid = child.pid;
  if (pid === undefined) throw new Error('postgres did not start');
  running.add(pid);
  installExitHook();

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitReady(url, child, () => log, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stopPid(pid, child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    pid,
    dir,
    stop() {
      stopped ??= (async () => {
        await stopPid(pid, child);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

export interface PostgresLedger {
  /** The server's URL (postgres://...). */
  readonly url: string;
  /** The ledger's database on it, migrated. */
  readonly db: Database;
}

/**
 * For the tests of the calling suite (node:test; the file, or the describe it is called in): a
 * throwaway server started, and the ledger's database opened on it with a pool of `poolSize`
 * connections, before the first test; closed and stopped after the last. Read its fields in
 * tests and hooks, once the suite's `before` has run.
 */
export function postgresLedgerForSuite({ poolSize }: { poolSize: number }): PostgresLedger {
  let server: PostgresServer | undefined;
  let db: Database | undefined;
  before(async () => {
    server = await startPostgres();
    db = await openDatabase(server.url, { poolSize });
  });
  after(async () => {
    await db?.close();
    await server?.stop();
  });
  const started = () => {
    if (!server || !db) throw new Error('PostgreSQL is not started yet: read it in a test or hook');
    return { server, db };
  };
  return {
    get url() {
      return started().server.url;
    },
    get db() {
      return started().db;
    },
  };
}

export function postgresBinDir(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'dirname "$(command -v initdb)"'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  if (which.status === 0 && found && found !== '.') return found;
  throw new Error('PostgreSQL binaries not found: install postgresql or set PG_BIN');
}

function postgresUser(): { uid: number; gid: number } {
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('postgres:'));
  const fields = passwd?.split(':');
  if (!fields || fields.length < 4) throw new Error('running as root needs a "postgres" user');
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

function privilegeDrop(program: string, args: string[]): string[] {
  return ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', program, ...args];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function waitReady(
  url: string,
  child: ChildProcess,
  log: () => string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}):\n${log()}`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline)
      throw new Error(`postgres not ready after ${timeoutMs} ms:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopPid(pid: number, child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signal(pid, 'SIGINT'); // fast shutdown: roll back open transactions, exit
    const timer = setTimeout(() => signal(pid, 'SIGQUIT'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  running.delete(pid);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Servers still running when this process ends are told to quit at once (by PID). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const pid of running) signal(pid, 'SIGQUIT');
  };
  process.on('exit', killAll);
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.once(name, () => {
      killAll();
      process.kill(process.pid, name); // then die of the signal as before
    });
  }
}

/**
 * How many connections other than `db`'s own wait for a lock now (pg_stat_activity); with
 * `running`, only those whose statement contains it (a routine's name).
 */
export async function lockWaiters(db: Queryable, running?: string): Promise<number> {
  const { rows } = await db.query<{ waiting: number | string }>(
    `SELECT count(*) AS waiting FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()
       AND ($1::text IS NULL OR strpos(query, $1) > 0)`,
    [running ?? null],
  );
  return Number(rows[0]?.waiting);
}
