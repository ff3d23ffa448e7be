import { fsyncSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** Emscripten's NODEFS as PGlite's module carries it (the parts used here). */
interface EmscriptenNodeFs {
  realPath(node: unknown): string;
  stream_ops: { fsync?: (stream: { nfd: number; node: { mode: number } }) => void };
}

type NodeFsOptions = Parameters<NodeFS['init']>[1];

/** A mode's file-type bits, and the type of a folder. */
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;

/**
 * PGlite's NodeFS made durable. As shipped, PGlite (0.5.16) starts PostgreSQL with `-F`
 * (fsync off: PGlite.defaultStartParams) and Emscripten's NODEFS has no `fsync` among its
 * stream operations (dist/chunk-XZUEO4BZ.js, NODEFS.stream_ops), so `_fd_sync` does nothing:
 * a committed transaction is only in the operating system's cache, and a power cut can lose
 * it, or leave data pages written without their WAL. Here NODEFS gets an `fsync` that syncs the
 * file for real, and the database runs with `fsync=on` and `wal_sync_method=fsync` (Emscripten's
 * fdatasync is a no-op, `__syscall_fdatasync`): PostgreSQL's own rules then hold, the WAL is on
 * disk before a commit returns, data files before a checkpoint ends.
 *
 * A folder's fsync is best effort (Windows cannot open one; PostgreSQL itself ignores that
 * there); a file's failed fsync is an I/O error, as PostgreSQL expects.
 */
export class DurableNodeFS extends NodeFS {
  readonly #onSync: ((path: string) => void) | undefined;

  /** `onSync` hears each synced path (the power-cut model of the tests). */
  constructor(dataDir: string, onSync?: (path: string) => void) {
    super(dataDir);
    this.#onSync = onSync;
  }

  override async init(pg: PGlite, options: NodeFsOptions) {
    const { emscriptenOpts } = await super.init(pg, options);
    const syncFiles = (module: {
      NODEFS: EmscriptenNodeFs;
      FS: { ErrnoError: new (errno: number) => Error };
    }) => {
      const nodefs = module.NODEFS;
      nodefs.stream_ops.fsync = (stream) => {
        const folder = (stream.node.mode & S_IFMT) === S_IFDIR;
        try {
          fsyncSync(stream.nfd);
        } catch {
          if (!folder) throw new module.FS.ErrnoError(29); // EIO
        }
        this.#onSync?.(nodefs.realPath(stream.node));
      };
    };
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...(emscriptenOpts.preRun ?? []), syncFiles as never],
      },
    };
  }
}

/** PGlite's start parameters with PostgreSQL's durability on (see DurableNodeFS). */
export function durableStartParams(params: readonly string[]): string[] {
  return [
    ...params.filter((param) => param !== '-F'),
    '-c',
    'fsync=on',
    '-c',
    'wal_sync_method=fsync',
  ];
}
