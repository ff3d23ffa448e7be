/**
 * The movement journal's lines and what they fold into: a movement is the fold of its lines
 * (foldEntry), and entriesOf gives back the lines that rebuild it (compaction). Types and pure
 * functions only; movement-journal.ts keeps the file.
 */
import type { MovementKind as LedgerMovementKind } from '../../common/ledger-contract.ts';
import type { DesfirePersonalizationStep } from '../card/desfire/desfire-wallet-session.ts';
import type { WriteIntent } from '../card/card-face.ts';
import type { FloatEntry } from './float-entries.ts';

/**
 * A till's recharge and payout, and the movements of a card's own rules it makes
 * (docs/cloud-api.md, "Lost cards, refunds and bonuses"): a blocked card emptied (block-clear),
 * a replacement picked up, a correction applied, a cashier's undo (refund).
 */
export type MovementKind = LedgerMovementKind;

/** What the caller asked for, kept to recognize an Idempotency-Key reused with another body. */
export interface Idempotency {
  /** `<key fingerprint>:<Idempotency-Key>`: keys of different API keys never meet. */
  scope: string;
  requestHash: string;
}

/**
 * A recharge paid from this till's float (docs/integrators.md, "When the internet drops"): its
 * float, its sequence number there (its id names both), its credits and the credit cost it was
 * sold at, known before the card is written.
 */
export interface FloatSale {
  floatId: string;
  seq: number;
  credits: number;
  creditCost: string;
  /** What the card held (the card face's `before`): the report carries it as `cardBefore`. */
  cardBefore: string;
  /** Of `credits`, the bonus given by the shop's tiers (absent: none). */
  bonusCredits?: number;
}

/** One line of the journal. Lines are only ever appended; a movement is the fold of its lines. */
export type JournalEntry =
  | FloatEntry
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
      /** Paid from the float: no ledger call before the answer. */
      float?: FloatSale;
      /** The POS's reference of the sale (`Pos-Reference`), kept with the movement. */
      reference?: string;
      /** A cashier's undo (kind `refund`): the recharge it takes back. */
      refunds?: string;
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
      /** Of `credits`, the bonus the shop's tiers gave (absent: none). */
      bonusCredits?: number;
      intent?: WriteIntent;
      at: string;
    }
  /**
   * The card write's outcome, once certain. `torn`: decided from a card showing this write torn
   * (the target slot invalid), which proves what the card held before (see tornFirstWrite).
   * `learnt`: the ledger's word (another till or an operator decided it), the card not seen:
   * the card decides it when it is seen again, and a compensating movement follows if they
   * disagree. `byLedger`: the ledger's word for good, the card seen but unable to tell (it shows
   * neither side of the write, or another write since).
   */
  | {
      type: 'card';
      id: string;
      outcome: 'committed' | 'not-written';
      torn?: boolean;
      learnt?: boolean;
      byLedger?: boolean;
      at: string;
    }
  /** The ledger acknowledged: posted, voided, or it never held the movement. */
  | { type: 'resolved'; id: string; state: 'posted' | 'voided' | 'absent'; at: string }
  /** A float recharge reported while its card write was undecided: the ledger holds it pending. */
  | { type: 'reported'; id: string; at: string }
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
  float?: FloatSale;
  /** A float recharge the ledger holds pending: reported while its card write was undecided. */
  reportedUndecided?: boolean;
  /** The POS's reference of the sale, when it sent one. */
  reference?: string;
  /** A cashier's undo: the recharge it takes back. */
  refunds?: string;
  startedAt: string;
  reserved?: { credits: number; amount: string; bonusCredits?: number; intent?: WriteIntent };
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
  /**
   * `card` is the ledger's word, the card seen but unable to tell: a write taken as not written
   * may have landed (another till that saw it compensates it), so its Idempotency-Key does not
   * run again (AnswerStore.replay).
   */
  byLedger?: boolean;
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

export type MovementEntry = Exclude<
  JournalEntry,
  FloatEntry | { type: 'personalizing' | 'personalized' }
>;

/** Folds one line into the movements it belongs to (a line of an unknown movement is dropped). */
export function foldEntry(movements: Map<string, Movement>, entry: MovementEntry): void {
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
      ...(entry.float ? { float: entry.float } : {}),
      ...(entry.reference === undefined ? {} : { reference: entry.reference }),
      ...(entry.refunds === undefined ? {} : { refunds: entry.refunds }),
      startedAt: entry.at,
    });
    return;
  }
  const movement = movements.get(entry.id);
  if (!movement) return;
  switch (entry.type) {
    case 'reserved':
      movement.reserved = {
        credits: entry.credits,
        amount: entry.amount,
        ...(entry.bonusCredits ? { bonusCredits: entry.bonusCredits } : {}),
        intent: entry.intent,
      };
      break;
    case 'card':
      movement.card = entry.outcome;
      movement.cardAt = entry.at;
      if (entry.torn) movement.torn = true;
      if (entry.learnt) movement.learnt = true;
      else delete movement.learnt;
      if (entry.byLedger) movement.byLedger = true;
      else delete movement.byLedger;
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
    case 'reported':
      movement.reportedUndecided = true;
      break;
  }
}

/** The lines that rebuild a movement, for compaction. */
export function entriesOf(movement: Movement): JournalEntry[] {
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
      ...(movement.float ? { float: movement.float } : {}),
      ...(movement.reference === undefined ? {} : { reference: movement.reference }),
      ...(movement.refunds === undefined ? {} : { refunds: movement.refunds }),
      at: movement.startedAt,
    },
  ];
  if (movement.reserved)
    entries.push({ type: 'reserved', id, ...movement.reserved, at: movement.startedAt });
  if (movement.card) {
    const torn = movement.torn ? { torn: true } : {};
    const learnt = movement.learnt ? { learnt: true } : {};
    const byLedger = movement.byLedger ? { byLedger: true } : {};
    entries.push({
      type: 'card',
      id,
      outcome: movement.card,
      ...torn,
      ...learnt,
      ...byLedger,
      at: movement.cardAt ?? movement.startedAt,
    });
  }
  if (movement.resolved) {
    entries.push({ type: 'resolved', id, state: movement.resolved, at: movement.startedAt });
  }
  if (movement.reportedUndecided) entries.push({ type: 'reported', id, at: movement.startedAt });
  if (movement.answer) entries.push({ type: 'answered', id, ...movement.answer });
  if (movement.conflict !== undefined) {
    entries.push({ type: 'conflict', id, detail: movement.conflict, at: movement.startedAt });
  }
  return entries;
}
