import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DesfirePersonalizationStep } from '../card/desfire/desfire-wallet-session.ts';
import type { WriteIntent } from '../card/wallet-card.ts';
import { phaseOf } from './movement-phases.ts';

export type MovementKind = 'recharge' | 'discharge';

/** What the caller asked for, kept to recognize an Idempotency-Key reused with another body. */
export interface Idempotency {
  /** `<key fingerprint>:<Idempotency-Key>`: keys of different API keys never meet. */
  scope: string;
  requestHash: string;
}

/** One line of the journal. Lines are only ever appended; a movement is the fold of its lines. */
export type JournalEntry =
  | {
      type: 'started';
      id: string;
      kind: MovementKind;
      cardId: string;
      keyFingerprint: string;
      idempotency?: Idempotency;
      /**
       * A compensating movement (no card write): the movement whose disagreement with its card
       * it sets right, and its credits (docs/integrators.md, "Several tills").
       */
      compensates?: string;
      credits?: number;
      /**
       * Found pending at the ledger, made by this till but unknown to this journal (a journal
       * lost): its planned write rebuilt from the ledger's `cardBefore`, decided on the card.
       */
      adopted?: boolean;
      at: string;
    }
  /**
   * The ledger holds a pending movement; the card write that will follow is planned (a
   * compensating movement has none).
   */
  | {
      type: 'reserved';
      id: string;
      credits: number;
      amount: string;
      intent?: WriteIntent;
      at: string;
    }
  /**
   * The card write's outcome, once certain. `torn`: decided from a card showing this write torn
   * (the target slot invalid), which proves what the card held before (see tornFirstWrite).
   * `learnt`: the ledger's word (another till or an operator decided it), the card not seen:
   * the card decides it when it is seen again, and a compensating movement follows if they
   * disagree.
   */
  | {
      type: 'card';
      id: string;
      outcome: 'committed' | 'not-written';
      torn?: boolean;
      learnt?: boolean;
      at: string;
    }
  /** The ledger acknowledged: posted, voided, or it never held the movement. */
  | { type: 'resolved'; id: string; state: 'posted' | 'voided' | 'absent'; at: string }
  /** The answer the caller got, replayed for the same Idempotency-Key. */
  | { type: 'answered'; id: string; status: number; body: unknown; at: string }
  /** The ledger refused a compensating movement: the card and the books disagree. */
  | { type: 'conflict'; id: string; detail: string; at: string }
  /**
   * A card's personalization is about to write a step (MIFARE Classic: its slots, then its
   * trailer; DESFire: its PICC key, its wallet application, its keys): until 'personalized', a
   * card left half done is this worker's to finish (docs/card-security.md).
   */
  | { type: 'personalizing'; cardId: string; step: PersonalizationStep; at: string }
  | { type: 'personalized'; cardId: string; at: string };

export type PersonalizationStep = 'slots' | 'trailer' | DesfirePersonalizationStep;

export interface Movement {
  id: string;
  kind: MovementKind;
  cardId: string;
  keyFingerprint: string;
  idempotency?: Idempotency;
  compensates?: string;
  /** A compensating movement's credits, known before the ledger is asked. */
  credits?: number;
  adopted?: boolean;
  startedAt: string;
  reserved?: { credits: number; amount: string; intent?: WriteIntent };
  card?: 'committed' | 'not-written';
  /**
   * When `card` was journaled, by this till's clock: for a committed write this till proved,
   * when it happened (the post's `occurredAt` at the ledger).
   */
  cardAt?: string;
  /** The card showed this write torn when it was decided. */
  torn?: boolean;
  /** `card` is the ledger's word: the card has not been seen since. */
  learnt?: boolean;
  resolved?: 'posted' | 'voided' | 'absent';
  answer?: { status: number; body: unknown; at: string };
  /** Why the ledger refused this compensating movement. */
  conflict?: string;
}

/**
 * When a movement happened by this till's clock, as its post tells the ledger (`occurredAt`):
 * when its card write was proven, or, for a compensating movement (no write), when it started.
 */
export function occurredAtOf(movement: Movement): string {
  return movement.cardAt ?? movement.startedAt;
}

/** How long an answer is kept for Idempotency-Key replays. */
export const ANSWER_RETENTION_MS = 24 * 60 * 60 * 1000;

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
  #open = false;
  #appending: Promise<void> = Promise.resolve();

  /** A data folder (the file store), or a store of its own. */
  constructor(where: string | JournalStore) {
    this.#store = typeof where === 'string' ? new FileJournalStore(where) : where;
  }

  get movements(): ReadonlyMap<string, Movement> {
    return this.#movements;
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
    const latestOfCard = new Map<string, string>();
    for (const movement of this.#movements.values()) latestOfCard.set(movement.cardId, movement.id);
    for (const [id, movement] of this.#movements) {
      // A key's landed write whose answer line a crash kept out is answered as of its card
      // line (answerFor): kept as long as an answer would be.
      const answeredAt = Date.parse(
        movement.answer?.at ??
          (movement.idempotency && movement.card === 'committed' ? movement.cardAt : undefined) ??
          '',
      );
      // A torn write stays while it is its card's latest: it proves what the card held. A
      // learnt outcome too: the card still has to be seen.
      const proof =
        (movement.torn === true || movement.learnt === true) &&
        latestOfCard.get(movement.cardId) === id;
      const expired = Number.isNaN(answeredAt) || now - answeredAt > ANSWER_RETENTION_MS;
      if (phaseOf(movement) === 'done' && expired && !proof) {
        this.#movements.delete(id);
      }
    }
    let compacted = '';
    for (const movement of this.#movements.values()) {
      for (const entry of entriesOf(movement)) compacted += `${JSON.stringify(entry)}\n`;
    }
    for (const [cardId, { step, at }] of this.#personalizing) {
      compacted += `${JSON.stringify({ type: 'personalizing', cardId, step, at })}\n`;
    }
    await this.#store.rewrite(compacted);
    this.#open = true;
  }

  /** Appends and makes durable; resolves only when the entry is on disk. */
  append(entry: JournalEntry): Promise<void> {
    const write = this.#appending.then(async () => {
      if (!this.#open) throw new Error('movement journal is closed');
      await this.#store.append(`${JSON.stringify(entry)}\n`);
      this.#fold(entry);
    });
    this.#appending = write.catch(() => undefined);
    return write;
  }

  #fold(entry: JournalEntry): void {
    if (entry.type === 'personalizing') {
      this.#personalizing.set(entry.cardId, { step: entry.step, at: entry.at });
    } else if (entry.type === 'personalized') {
      this.#personalizing.delete(entry.cardId);
    } else {
      fold(this.#movements, entry);
    }
  }

  async close(): Promise<void> {
    await this.#appending;
    this.#open = false;
    await this.#store.close();
  }
}

type MovementEntry = Exclude<JournalEntry, { type: 'personalizing' | 'personalized' }>;

function fold(movements: Map<string, Movement>, entry: MovementEntry): void {
  if (entry.type === 'started') {
    movements.set(entry.id, {
      id: entry.id,
      kind: entry.kind,
      cardId: entry.cardId,
      keyFingerprint: entry.keyFingerprint,
      idempotency: entry.idempotency,
      ...(entry.compensates === undefined
        ? {}
        : { compensates: entry.compensates, credits: entry.credits }),
      ...(entry.adopted ? { adopted: true } : {}),
      startedAt: entry.at,
    });
    return;
  }
  const movement = movements.get(entry.id);
  if (!movement) return;
  switch (entry.type) {
    case 'reserved':
      movement.reserved = { credits: entry.credits, amount: entry.amount, intent: entry.intent };
      break;
    case 'card':
      movement.card = entry.outcome;
      movement.cardAt = entry.at;
      if (entry.torn) movement.torn = true;
      if (entry.learnt) movement.learnt = true;
      else delete movement.learnt;
      break;
    case 'resolved':
      movement.resolved = entry.state;
      break;
    case 'answered':
      movement.answer = { status: entry.status, body: entry.body, at: entry.at };
      break;
    case 'conflict':
      movement.conflict = entry.detail;
      break;
  }
}

/** The lines that rebuild a movement, for compaction. */
function entriesOf(movement: Movement): JournalEntry[] {
  const { id } = movement;
  const entries: JournalEntry[] = [
    {
      type: 'started',
      id,
      kind: movement.kind,
      cardId: movement.cardId,
      keyFingerprint: movement.keyFingerprint,
      idempotency: movement.idempotency,
      ...(movement.compensates === undefined
        ? {}
        : { compensates: movement.compensates, credits: movement.credits }),
      ...(movement.adopted ? { adopted: true } : {}),
      at: movement.startedAt,
    },
  ];
  if (movement.reserved)
    entries.push({ type: 'reserved', id, ...movement.reserved, at: movement.startedAt });
  if (movement.card) {
    const torn = movement.torn ? { torn: true } : {};
    const learnt = movement.learnt ? { learnt: true } : {};
    entries.push({
      type: 'card',
      id,
      outcome: movement.card,
      ...torn,
      ...learnt,
      at: movement.cardAt ?? movement.startedAt,
    });
  }
  if (movement.resolved) {
    entries.push({ type: 'resolved', id, state: movement.resolved, at: movement.startedAt });
  }
  if (movement.answer) entries.push({ type: 'answered', id, ...movement.answer });
  if (movement.conflict !== undefined) {
    entries.push({ type: 'conflict', id, detail: movement.conflict, at: movement.startedAt });
  }
  return entries;
}
