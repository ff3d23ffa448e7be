import {
  ANSWER_RETENTION_MS,
  entriesOf,
  foldEntry,
  type JournalEntry,
  type Movement,
  type PersonalizationStep,
} from './journal-entries.ts';
import {
  emptyFloatFolds,
  floatEntriesOf,
  foldFloatEntry,
  isFloatEntry,
  type FloatFolds,
} from './float-entries.ts';
import { FileJournalStore, type JournalStore } from './journal-file-store.ts';
import { phaseOf } from './movement-phases.ts';

/**
 * The local movement journal: every step of a money movement is written here, and made
 * durable (fdatasync), before the step it enables happens: before the ledger is asked, before
 * the card is written. After a crash the journal says what may have happened, and the engine
 * finishes it. At open, movements that are done and whose answers are older than 24 h are
 * dropped (written to a new file, then renamed over the old one).
 */
export class MovementJournal {
  readonly #store: JournalStore;
  readonly #movements = new Map<string, Movement>();
  readonly #personalizing = new Map<string, { step: PersonalizationStep; at: string }>();
  #floats: FloatFolds = emptyFloatFolds();
  #open = false;
  #appending: Promise<void> = Promise.resolve();

  /** A data folder (the file store), or a store of its own. */
  constructor(where: string | JournalStore) {
    this.#store = typeof where === 'string' ? new FileJournalStore(where) : where;
  }

  get movements(): ReadonlyMap<string, Movement> {
    return this.#movements;
  }

  /** The till float's state (float-entries.ts). */
  get floats(): Readonly<FloatFolds> {
    return this.#floats;
  }

  /** Cards whose personalization began and has not been seen to end, by card id. */
  get personalizing(): ReadonlyMap<string, { step: PersonalizationStep; at: string }> {
    return this.#personalizing;
  }

  async open(now = Date.now()): Promise<void> {
    const text = await this.#store.read();
    const lines = text.split('\n');
    for (const [index, line] of lines.entries()) {
      if (line === '') continue;
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch {
        // Only the last line can be torn (a crash mid-append); it was never acted upon.
        if (index >= lines.length - 2) break;
        throw new Error(`movement journal: line ${index + 1} is not JSON`);
      }
      this.#fold(entry);
    }
    const dropped = { sold: 0, seq: 0 };
    const latestOfCard = new Map<string, string>();
    for (const movement of this.#movements.values()) latestOfCard.set(movement.cardId, movement.id);
    for (const [id, movement] of this.#movements) {
      // A key's landed write whose answer line a crash kept out is answered as of its card
      // line (answerFor): kept as long as an answer would be.
      const answeredAt =
        movement.answer?.at ??
        (movement.idempotency && movement.card === 'committed' ? movement.cardAt : undefined);
      // A torn write stays while it is its card's latest: it proves what the card held. A
      // learnt outcome too: the card still has to be seen.
      const proof =
        (movement.torn === true || movement.learnt === true) &&
        latestOfCard.get(movement.cardId) === id;
      const expired =
        answeredAt === undefined || now - Date.parse(answeredAt) > ANSWER_RETENTION_MS;
      if (phaseOf(movement) === 'done' && expired && !proof) {
        this.#movements.delete(id);
        // A float's dropped sales stay counted: what it sold, and the ids it used.
        if (movement.float && movement.float.floatId === this.#floats.float?.floatId) {
          if (movement.resolved === 'posted') dropped.sold += movement.float.credits;
          dropped.seq = Math.max(dropped.seq, movement.float.seq);
        }
      }
    }
    let compacted = '';
    // The float's folds become what the compacted file says (the dropped sales' credits and
    // ids carried in its `float` line), as a later start will read it.
    const floatEntries = floatEntriesOf(this.#floats, dropped, now, ANSWER_RETENTION_MS);
    this.#floats = emptyFloatFolds();
    for (const entry of floatEntries) {
      foldFloatEntry(this.#floats, entry);
      compacted += `${JSON.stringify(entry)}\n`;
    }
    for (const movement of this.#movements.values()) {
      for (const entry of entriesOf(movement)) compacted += `${JSON.stringify(entry)}\n`;
    }
    for (const [cardId, { step, at }] of this.#personalizing) {
      compacted += `${JSON.stringify({ type: 'personalizing', cardId, step, at })}\n`;
    }
    await this.#store.rewrite(compacted);
    this.#open = true;
  }

  /**
   * Appends and makes durable, several entries in one write and one fdatasync; resolves only
   * when they are on disk. A crash keeps a prefix of them (only the last line can be torn).
   */
  append(...entries: JournalEntry[]): Promise<void> {
    const write = this.#appending.then(async () => {
      if (!this.#open) throw new Error('movement journal is closed');
      await this.#store.append(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      for (const entry of entries) this.#fold(entry);
    });
    this.#appending = write.catch(() => undefined);
    return write;
  }

  #fold(entry: JournalEntry): void {
    if (entry.type === 'personalizing') {
      this.#personalizing.set(entry.cardId, { step: entry.step, at: entry.at });
    } else if (entry.type === 'personalized') {
      this.#personalizing.delete(entry.cardId);
    } else if (isFloatEntry(entry)) {
      foldFloatEntry(this.#floats, entry);
    } else {
      foldEntry(this.#movements, entry);
    }
  }

  async close(): Promise<void> {
    await this.#appending;
    this.#open = false;
    await this.#store.close();
  }
}
