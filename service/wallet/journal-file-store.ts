import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Where the journal's lines live: a file in the data folder (FileJournalStore), or memory in
 * the deterministic simulation. `append` resolves only once the line is durable.
 */
export interface JournalStore {
  read(): Promise<string>;
  /** Replaces the whole content durably (compaction at open), then appends go after it. */
  rewrite(text: string): Promise<void>;
  append(line: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file system calls FileJournalStore makes: node's, or in the deterministic simulation one
 * that loses what was not made durable, and tears the last line, when its till crashes.
 */
export interface JournalFiles {
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<unknown>;
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  open(path: string, flags: 'r' | 'w' | 'a', mode?: number): Promise<JournalFile>;
  rename(from: string, to: string): Promise<void>;
}

export interface JournalFile {
  write(text: string): Promise<unknown>;
  sync(): Promise<void>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

const nodeFiles: JournalFiles = { mkdir, readFile, open, rename };

/** The journal in `movements.jsonl`: fdatasync per line, compaction by write-and-rename. */
export class FileJournalStore implements JournalStore {
  readonly #path: string;
  readonly #files: JournalFiles;
  #file: JournalFile | undefined;

  constructor(dataDir: string, files: JournalFiles = nodeFiles) {
    this.#path = join(dataDir, 'movements.jsonl');
    this.#files = files;
  }

  async read(): Promise<string> {
    await this.#files.mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
    try {
      return await this.#files.readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return '';
    }
  }

  async rewrite(text: string): Promise<void> {
    const fresh = `${this.#path}.tmp`;
    const file = await this.#files.open(fresh, 'w', 0o600);
    try {
      await file.write(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await this.#files.rename(fresh, this.#path);
    const dir = await this.#files.open(dirname(this.#path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.#file = await this.#files.open(this.#path, 'a', 0o600);
  }

  async append(line: string): Promise<void> {
    const file = this.#file;
    if (!file) throw new Error('movement journal is closed');
    await file.write(line);
    await file.datasync();
  }

  async close(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
  }
}
