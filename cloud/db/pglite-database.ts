import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { uptime } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { Database, QueryResult, Queryable } from './database.ts';
import { ledgerErrors } from '../errors.ts';
import { DurableNodeFS, durableStartParams } from './pglite-durable-fs.ts';
import { copyTemplate } from './pglite-template.ts';

/** Present while a process has the folder open; holds that process's pid. */
export const LOCK_FILE = 'card-wallet-cloud.lock';

/**
 * Opens (creating when new) a PGlite database in `folder`. PGlite is one connection in this
 * process, so every query and transaction here runs one after another; a lock file keeps a
 * second process (a running `serve`, an admin command) from opening the same folder.
 *
 * The folder holds every balance and card account, so it is private to its owner: created
 * 0700, and everything in it made 0700 (folders) or 0600 (files) on open and on close.
 * PGlite writes the files of a new database with mode 0666 and folders with 0755 (its
 * in-memory initdb copies them out as such), and a few later files with the process's umask;
 * the folder's own 0700 keeps those unreachable while it is open.
 *
 * A new database starts from the template (every migration applied) unless `template` is
 * false: then it is empty, for a test that migrates it step by step.
 */
export async function openPgliteDatabase(
  folder: string,
  options: {
    template?: boolean;
    /** Hears each path PostgreSQL syncs (tests model a power cut with it). */
    onSync?: (path: string) => void;
  } = {},
): Promise<Database> {
  const dataDir = resolve(folder);
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_FOLDER });
  chmodSync(dataDir, PRIVATE_FOLDER);
  const lockPath = join(dataDir, LOCK_FILE);
  acquireLock(lockPath, dataDir);
  let pglite: PGlite;
  try {
    const exists =
      existsSync(join(dataDir, 'PG_VERSION')) ||
      (options.template !== false && (await copyTemplate(dataDir)));
    compileWebAssembly(exists ? 'baseline' : 'optimised');
    // Durable: a committed transaction survives a power cut (pglite-durable-fs.ts).
    pglite = await PGlite.create({
      fs: new DurableNodeFS(dataDir, options.onSync),
      startParams: durableStartParams(START_PARAMS),
    });
    makePrivate(dataDir);
  } catch (error) {
    rmSync(lockPath, { force: true });
    throw error;
  }
  const serial = new Serializer();

  const wrap = (target: PGlite | Transaction): Queryable => ({
    query: async <Row>(sql: string, params: readonly unknown[] = []) =>
      toResult<Row>(await target.query<Row>(sql, params as unknown[])),
    exec: async (sql) => {
      await target.exec(sql);
    },
  });
  const direct = wrap(pglite);
  let closed = false;

  return {
    kind: 'pglite',
    description: dataDir,
    query: (sql, params) => serial.run(() => direct.query(sql, params)),
    exec: (sql) => serial.run(() => direct.exec(sql)),
    transaction: (fn) => serial.run(() => pglite.transaction((tx) => fn(wrap(tx)))),
    async close() {
      if (closed) return;
      closed = true;
      await serial.run(() => pglite.close());
      makePrivate(dataDir);
      rmSync(lockPath, { force: true });
    },
  };
}

/**
 * PostgreSQL's memory inside PGlite, sized for what it is here: one connection to a database of
 * a few shops. PGlite keeps initdb's defaults (128 MB of shared buffers, 100 connections'
 * worth of shared state), and PostgreSQL initialises its shared memory at start, so every
 * PGlite held them resident: about 110 MB more than these settings (docs/benchmarks.md,
 * "Standalone footprint"). A till's ledger is a few hundred kB; the operating system's cache
 * holds what the buffers do not.
 */
const START_PARAMS = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=1MB',
  '-c',
  'max_connections=3',
  '-c',
  'wal_buffers=64kB',
];

/**
 * PGlite is 9 MB of WebAssembly. V8 compiles it at once with its baseline compiler (Liftoff),
 * then recompiles hot functions with its optimising one (TurboFan) on background threads,
 * whose memory stays with the process: about 75 MB of a standalone worker's 240 MB idle
 * (docs/benchmarks.md, "Standalone footprint"). Baseline code is fast enough for a till's
 * ledger (a movement is two calls of a few statements), so a database that exists is opened
 * with it. Not a new one without a template (a source tree): initdb, PostgreSQL's bootstrap,
 * takes several times as long on baseline code. V8 reads the flag when it compiles a module,
 * so it is set before each PGlite is made. It touches WebAssembly only: JavaScript is still
 * optimised, and the one other module a worker could compile (fetch's HTTP parser; the
 * worker's own calls use node:http) is small.
 */
function compileWebAssembly(code: 'baseline' | 'optimised'): void {
  setFlagsFromString(code === 'baseline' ? '--liftoff-only' : '--no-liftoff-only');
}

const PRIVATE_FOLDER = 0o700;
const PRIVATE_FILE = 0o600;

/** Folders 0700 and files 0600, all the way down (symbolic links are left alone). */
function makePrivate(path: string): void {
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) {
      chmodSync(child, PRIVATE_FOLDER);
      makePrivate(child);
    } else if (entry.isFile()) {
      chmodSync(child, PRIVATE_FILE);
    }
  }
}

function toResult<Row>(result: { rows: Row[]; affectedRows?: number }): QueryResult<Row> {
  return { rows: result.rows, rowCount: Math.max(result.rows.length, result.affectedRows ?? 0) };
}

/** Runs tasks one at a time, in call order; a failing task does not stop the next ones. */
class Serializer {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

function acquireLock(lockPath: string, dataDir: string): void {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(lockPath, 'wx', PRIVATE_FILE);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    // A lock from before this boot (a power cut or a crash of the machine) is stale whatever
    // its pid: after a restart that pid may belong to another program.
    const fromThisBoot = statSync(lockPath).mtimeMs >= Date.now() - uptime() * 1000;
    if (fromThisBoot && Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
      throw ledgerErrors.databaseInUse(
        `${dataDir} is open in process ${holder}${holder === process.pid ? ' (this one)' : ''}; ` +
          'stop it first (PGlite allows one process per folder)',
      );
    }
    rmSync(lockPath, { force: true }); // left by a process that is gone
  }
  throw ledgerErrors.databaseInUse(`could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
