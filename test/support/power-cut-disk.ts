import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * A power cut for a folder, modelled as the simulation's disk models one
 * (test/simulation/sim-files.ts): what survives is what was made durable. A file keeps the
 * content it had at its last fsync (none: it is lost); a folder's removals and renames count
 * once the folder is synced. Everything there at the start counts as durable (the folder was
 * closed cleanly before). A SIGKILL, by contrast, keeps all that was written: the operating
 * system's cache outlives the process.
 *
 * Feed it every synced path (`synced`, PGlite's onSync); `cut()` leaves the folder as the
 * disk would hold it after the power came back.
 */
export class PowerCutDisk {
  readonly #folder: string;
  readonly #durable: string;

  constructor(folder: string) {
    this.#folder = folder;
    this.#durable = join(mkdtempSync(join(tmpdir(), 'cww-durable-')), 'copy');
    if (existsSync(folder)) cpSync(folder, this.#durable, { recursive: true });
    else mkdirSync(this.#durable, { recursive: true });
  }

  /** A path was fsynced: its content (a file) or its entries (a folder) are now durable. */
  readonly synced = (path: string): void => {
    const inside = relative(this.#folder, path);
    if (inside.startsWith('..')) return;
    const copy = join(this.#durable, inside);
    if (statSync(path).isDirectory()) {
      if (!existsSync(copy)) return;
      const present = new Set(readdirSync(path));
      for (const name of readdirSync(copy))
        if (!present.has(name)) rmSync(join(copy, name), { recursive: true, force: true });
      return;
    }
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(path, copy);
  };

  /** The power is cut: the folder holds only what was durable. */
  cut(): void {
    rmSync(this.#folder, { recursive: true, force: true });
    cpSync(this.#durable, this.#folder, { recursive: true });
  }

  dispose(): void {
    rmSync(dirname(this.#durable), { recursive: true, force: true });
  }
}
