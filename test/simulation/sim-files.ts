/**
 * A till's disk for the deterministic simulation, behind the journal's file-system seam
 * (JournalFiles in service/wallet/movement-journal.ts). Like a real one, it keeps only what was
 * made durable when the till crashes: a file's bytes after its last fsync/fdatasync may be
 * lost, or kept in part (a torn last line); directory changes (a create, a rename) after the
 * directory's last fsync may be lost. fsync takes virtual time, so a crash can come in the
 * middle of one.
 */
import type { JournalFile, JournalFiles } from '../../service/wallet/journal-file-store.ts';
import type { Life, Rng, Scheduler } from './scheduler.ts';

interface Inode {
  /** What a read sees. */
  current: string;
  /** What survives a crash for certain. */
  durable: string;
}

export class SimFiles implements JournalFiles {
  /** The process using the disk: a crashed one's calls fail (it cannot act any more). */
  life: Life | null = null;
  /** Crashes that kept part of an unsynced tail (a torn last line), for the run's counts. */
  tornTails = 0;
  /** An fsync begins (the world may crash the till in the middle of it). */
  onSync: () => void = () => undefined;
  #entries = new Map<string, Inode>();
  #durableEntries = new Map<string, Inode>();
  readonly #sched: Scheduler;

  constructor(sched: Scheduler) {
    this.#sched = sched;
  }

  async mkdir(): Promise<unknown> {
    this.#alive();
    return undefined;
  }

  async readFile(path: string): Promise<string> {
    this.#alive();
    const inode = this.#entries.get(path);
    if (!inode) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return inode.current;
  }

  async open(path: string, flags: 'r' | 'w' | 'a'): Promise<JournalFile> {
    this.#alive();
    const life = this.life;
    const sync = async (make: () => void) => {
      this.#alive(life);
      this.onSync();
      await this.#sched.sleep(this.#sched.rng.between(0, 3), life);
      make();
    };
    if (flags === 'r') {
      // Only the data folder is opened for reading: to make its entries durable.
      const handle: JournalFile = {
        write: async () => {
          throw new Error('EBADF: a directory is not written');
        },
        sync: () => sync(() => (this.#durableEntries = new Map(this.#entries))),
        datasync: () => sync(() => (this.#durableEntries = new Map(this.#entries))),
        close: async () => undefined,
      };
      return handle;
    }
    let inode = this.#entries.get(path);
    if (!inode || flags === 'w') {
      inode = { current: '', durable: '' };
      this.#entries.set(path, inode);
    }
    const file = inode;
    return {
      write: async (text: string) => {
        this.#alive(life);
        file.current += text;
      },
      sync: () => sync(() => (file.durable = file.current)),
      datasync: () => sync(() => (file.durable = file.current)),
      close: async () => undefined,
    };
  }

  async rename(from: string, to: string): Promise<void> {
    this.#alive();
    const inode = this.#entries.get(from);
    if (!inode) throw Object.assign(new Error(`ENOENT: ${from}`), { code: 'ENOENT' });
    this.#entries.set(to, inode);
    this.#entries.delete(from);
  }

  /** The till crashed: the disk keeps what was durable, and perhaps some of what was not. */
  crash(rng: Rng): void {
    // The file system may or may not have committed directory changes nobody synced.
    if (rng.chance(0.5)) this.#entries = new Map(this.#durableEntries);
    for (const inode of new Set(this.#entries.values())) {
      const tail = inode.current.startsWith(inode.durable)
        ? inode.current.slice(inode.durable.length)
        : '';
      // Lost, kept whole, or kept in part.
      const roll = rng.int(3);
      const kept = roll === 0 ? '' : roll === 1 ? tail : tail.slice(0, rng.int(tail.length));
      if (kept !== '' && kept !== tail && !kept.endsWith('\n')) this.tornTails += 1;
      inode.current = inode.durable + kept;
      inode.durable = inode.current;
    }
    this.#durableEntries = new Map(this.#entries);
  }

  /** The till's disk died: its data folder is gone (a new disk, a reinstalled till). */
  lose(): void {
    this.#entries = new Map();
    this.#durableEntries = new Map();
  }

  #alive(life: Life | null = this.life): void {
    if (!life?.alive) throw new Error('EIO: the process that opened this is gone');
  }
}
