import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CardList } from '../../common/ledger-contract.ts';
import type { Logger } from '../logger.ts';

/** Where the till keeps the shop's card list it learnt last, in its data folder. */
export const CARD_LIST_FILE = 'card-list.json';

/** A card's block as this till knows it: since when (null: from a refusal), the ledger's words. */
export interface KnownBlock {
  since: string | null;
  detail?: string;
}

/** A change waiting for a card, as the card list names it. */
export type WaitingChange = CardList['waiting'][number];

export interface CardListWatcherOptions {
  ledger: { getCardList(apiKey: string, heldSeq?: number): Promise<CardList | null> };
  /** The key in effect (it may change while the service runs). */
  apiKey: () => string;
  /** Which shop's list a stored one is: the key's fingerprint (never the key itself). */
  fingerprint: (apiKey: string) => string;
  dataDir: string;
  /**
   * Where the list is kept (default: `CARD_LIST_FILE` in `dataDir`, written whole then
   * renamed). The shop simulation keeps it on its simulated disk.
   */
  file?: CardListFile;
  /** Every this long (docs/integrators.md: 30 s, so a block is known within a minute). */
  everyMs: number;
  log: Logger;
}

/** The till's copy of the list, as text: undefined when there is none. */
export interface CardListFile {
  /** For the log. */
  name: string;
  read(): string | undefined;
  write(text: string): void;
}

interface StoredList {
  keyFingerprint: string;
  list: CardList;
}

/**
 * The shop's card list as this till knows it (docs/cloud-api.md, "Blocking a card"): the
 * blocked cards, the changes waiting for cards and the cards held for an operator's word,
 * polled from `GET /v1/card-list` every `everyMs` with the list's seq as ETag (a 304 while
 * nothing changed), so a block reaches every till within a minute and an offline till learns
 * it at its first poll back. Kept in the data folder, so a till that starts offline still
 * refuses a card it knew blocked (its float would otherwise sell to it). A block the ledger
 * answers in a refusal is noted at once and the list fetched again.
 */
export class CardListWatcher {
  readonly #options: CardListWatcherOptions;
  readonly #file: CardListFile;
  #stored: StoredList | null;
  /**
   * Blocks the ledger refused with since the list was fetched, with its words (cleared by the
   * next list).
   */
  readonly #refused = new Map<string, string | undefined>();
  /** Cards the ledger said are not blocked, though the list held says so (until the next). */
  readonly #lifted = new Set<string>();
  /** Changes this till applied since the list was fetched. */
  readonly #applied = new Set<string>();
  /** Held cards this till read online since the list was fetched (the ledger took its word). */
  readonly #read = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #again = false;
  #failing = false;
  #closed = false;

  constructor(options: CardListWatcherOptions) {
    this.#options = options;
    this.#file = options.file ?? cardListFileIn(options.dataDir);
    this.#stored = readStored(this.#file, options.log);
  }

  /** The list in effect for the key in use, or null before one was learnt. */
  get list(): CardList | null {
    const stored = this.#stored;
    const key = this.#options.apiKey();
    return stored && stored.keyFingerprint === this.#options.fingerprint(key) ? stored.list : null;
  }

  /** The card's block, when the shop blocked it: since when. */
  blockOf(cardId: string): KnownBlock | undefined {
    if (this.#refused.has(cardId)) {
      const detail = this.#refused.get(cardId);
      return { since: null, ...(detail === undefined ? {} : { detail }) };
    }
    if (this.#lifted.has(cardId)) return undefined;
    const blocked = this.list?.blocked.find((entry) => entry.cardId === cardId);
    return blocked ? { since: blocked.since } : undefined;
  }

  /** The changes waiting for the card (a replacement onto it, a correction of it). */
  waitingFor(cardId: string): WaitingChange[] {
    return (
      this.list?.waiting.filter(
        (change) => change.cardId === cardId && !this.#applied.has(change.id),
      ) ?? []
    );
  }

  /** The movements decided without the card that the ledger holds it for (none once read here). */
  heldFor(cardId: string): NonNullable<CardList['held']> {
    if (this.#read.has(cardId)) return [];
    return this.list?.held?.filter((movement) => movement.cardId === cardId) ?? [];
  }

  /** This till read the held card online and the ledger took its word: polled now. */
  learntRead(cardId: string): void {
    this.#read.add(cardId);
    void this.poll();
  }

  /** This till applied the change: it waits no more, though the list held still says so. */
  applied(changeId: string): void {
    this.#applied.add(changeId);
  }

  /** Fetches the list now and waits for it (after one already on its way). */
  async refresh(): Promise<void> {
    await this.#polling;
    await this.poll();
  }

  /** The ledger refused a movement of the card as blocked: refused here too, and polled now. */
  learntBlocked(cardId: string, detail?: string): void {
    this.#refused.set(cardId, detail);
    this.#lifted.delete(cardId);
    void this.poll();
  }

  /** The ledger said the card is not blocked: taken here too, and polled now. */
  learntUnblocked(cardId: string): void {
    this.#refused.delete(cardId);
    this.#lifted.add(cardId);
    void this.poll();
  }

  /** The ledger said something waits for the card, or was taken meanwhile: polled now. */
  learntChanged(): void {
    void this.poll();
  }

  /** Polls at once, then every `everyMs`. */
  start(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setInterval(() => this.poll(), this.#options.everyMs);
    this.#timer.unref();
    this.poll();
  }

  /** Polls now (a new key, the ledger back); one poll at a time, another after it if asked. */
  poll(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#polling) {
      this.#again = true;
      return this.#polling;
    }
    this.#polling = this.#once().finally(() => {
      this.#polling = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        void this.poll();
      }
    });
    return this.#polling;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }

  async #once(): Promise<void> {
    const { ledger, apiKey, fingerprint, log } = this.#options;
    const key = apiKey();
    const keyFingerprint = fingerprint(key);
    const held = this.#stored?.keyFingerprint === keyFingerprint ? this.#stored.list : null;
    try {
      const list = await ledger.getCardList(key, held?.seq);
      if (this.#closed) return;
      if (this.#failing) log.info('card list: the ledger answers again');
      this.#failing = false;
      if (list === null) {
        // Unchanged, so what the ledger said meanwhile is in it (a block moves the seq on).
        this.#refused.clear();
        this.#lifted.clear();
        return;
      }
      this.#stored = { keyFingerprint, list };
      this.#refused.clear();
      this.#lifted.clear();
      this.#applied.clear();
      this.#read.clear();
      this.#write();
    } catch (error) {
      if (this.#closed) return;
      if (!this.#failing) {
        log.warn(
          `card list: the ledger did not answer (${(error as Error).message}); blocks known so far stay in effect`,
        );
      }
      this.#failing = true;
    }
  }

  #write(): void {
    try {
      this.#file.write(`${JSON.stringify(this.#stored)}\n`);
    } catch (error) {
      this.#options.log.warn(`card list: not kept on disk (${(error as Error).message})`);
    }
  }
}

/** `CARD_LIST_FILE` in the data folder. */
function cardListFileIn(dataDir: string): CardListFile {
  const path = join(dataDir, CARD_LIST_FILE);
  return {
    name: path,
    read: () => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    },
    write: (text) => {
      // Written whole, then renamed: a crash mid-write keeps the previous list.
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, text, { mode: 0o600 });
      renameSync(temporary, path);
    },
  };
}

function readStored(file: CardListFile, log: Logger): StoredList | null {
  const text = file.read();
  if (text === undefined) return null;
  try {
    const stored = JSON.parse(text) as StoredList;
    if (typeof stored.keyFingerprint !== 'string' || !Array.isArray(stored.list?.blocked)) {
      throw new Error('not a card list');
    }
    if (!Array.isArray(stored.list.waiting)) stored.list.waiting = [];
    return stored;
  } catch (error) {
    log.warn(`card list: ${file.name} ignored (${(error as Error).message}); fetched anew`);
    return null;
  }
}
