/**
 * The till float's lines in the movement journal (docs/integrators.md, "When the internet
 * drops") and what they fold into: the float this till sells from, as its ledger calls left it
 * (each call's request journaled before it is sent, its answer after), float recharges found on
 * cards, the shop as last learnt, and when the ledger last answered. A float recharge itself is
 * a movement of the journal (journal-entries.ts, `float`). Types and pure functions only.
 */
import type { LedgerCustomer } from '../cloud/ledger-client.ts';

export type FloatEntry =
  /** An open request, before it is sent (its id makes it idempotent). */
  | { type: 'float-open'; requestId: string; keyFingerprint: string; at: string }
  /** The float the ledger gave (the open's answer), or its state carried over by compaction. */
  | {
      type: 'float';
      floatId: string;
      requestId: string;
      keyFingerprint: string;
      prefix: string;
      idsIssued: number;
      granted: number;
      /** Compaction: credits sold, and the highest sequence number, of its dropped movements. */
      soldBefore?: number;
      seqBefore?: number;
      at: string;
    }
  /** A top-up, before it is sent. */
  | { type: 'float-topup'; floatId: string; id: string; credits: number; ids: number; at: string }
  /** Its answer: what it granted, and the ids the float hands out since. */
  | {
      type: 'float-granted';
      floatId: string;
      id: string;
      granted: number;
      idsIssued: number;
      at: string;
    }
  /** The float is closing (this till's final report and close on their way), then closed. */
  | { type: 'float-closing'; floatId: string; at: string }
  | { type: 'float-closed'; floatId: string; at: string }
  /**
   * The ledger holds an open float of this till that this journal does not know (a lost
   * journal): nothing is sold from it until it is closed (`lost` false again).
   */
  | { type: 'float-lost'; floatId: string; lost: boolean; at: string }
  /** A float recharge of another float, seen on a card: reported as found. */
  | { type: 'found'; movementId: string; cardId: string; credits: number; at: string }
  | { type: 'found-reported'; movementId: string; at: string }
  /** The shop as last learnt for a key: what the till works from while offline. */
  | { type: 'shop'; keyFingerprint: string; customer: LedgerCustomer; at: string }
  /**
   * The ledger answered at `seenAt` (journaled now and then: the offline limit counts from it);
   * lines written before 2.5.0 have none, and were written when it answered (`at`).
   */
  | { type: 'ledger-seen'; seenAt?: string; at: string };

export const FLOAT_ENTRY_TYPES: ReadonlySet<string> = new Set([
  'float-open',
  'float',
  'float-topup',
  'float-granted',
  'float-closing',
  'float-closed',
  'float-lost',
  'found',
  'found-reported',
  'shop',
  'ledger-seen',
]);

export function isFloatEntry(entry: { type: string }): entry is FloatEntry {
  return FLOAT_ENTRY_TYPES.has(entry.type);
}

/** The float this till sells from (or sold from, until its close is done). */
export interface TillFloat {
  floatId: string;
  requestId: string;
  keyFingerprint: string;
  prefix: string;
  idsIssued: number;
  /** Granted to it in all, as its answers said. */
  granted: number;
  /** Top-ups asked for, by id; `granted` once answered. */
  topUps: Map<string, { credits: number; ids: number; granted?: number }>;
  soldBefore: number;
  seqBefore: number;
  closing: boolean;
  closed: boolean;
  openedAt: string;
}

/** What the float's lines fold into. */
export interface FloatFolds {
  /** An open request without its answer yet. */
  opening?: { requestId: string; keyFingerprint: string; at: string };
  float?: TillFloat;
  /** An open float of this till the journal does not know: held until an operator closes it. */
  lost?: { floatId: string; at: string };
  found: Map<string, { cardId: string; credits: number; at: string; reportedAt?: string }>;
  shops: Map<string, { customer: LedgerCustomer; at: string }>;
  ledgerSeenAt?: string;
}

export function emptyFloatFolds(): FloatFolds {
  return { found: new Map(), shops: new Map() };
}

export function foldFloatEntry(folds: FloatFolds, entry: FloatEntry): void {
  const float = folds.float;
  const ours = (floatId: string) => (float?.floatId === floatId ? float : undefined);
  switch (entry.type) {
    case 'float-open':
      folds.opening = {
        requestId: entry.requestId,
        keyFingerprint: entry.keyFingerprint,
        at: entry.at,
      };
      break;
    case 'float':
      delete folds.opening;
      folds.float = {
        floatId: entry.floatId,
        requestId: entry.requestId,
        keyFingerprint: entry.keyFingerprint,
        prefix: entry.prefix,
        idsIssued: entry.idsIssued,
        granted: entry.granted,
        topUps: new Map(),
        soldBefore: entry.soldBefore ?? 0,
        seqBefore: entry.seqBefore ?? 0,
        closing: false,
        closed: false,
        openedAt: entry.at,
      };
      break;
    case 'float-topup':
      ours(entry.floatId)?.topUps.set(entry.id, { credits: entry.credits, ids: entry.ids });
      break;
    case 'float-granted': {
      const current = ours(entry.floatId);
      const topUp = current?.topUps.get(entry.id);
      if (!current || !topUp || topUp.granted !== undefined) break;
      topUp.granted = entry.granted;
      current.granted += entry.granted;
      current.idsIssued = Math.max(current.idsIssued, entry.idsIssued);
      break;
    }
    case 'float-closing': {
      const current = ours(entry.floatId);
      if (current) current.closing = true;
      break;
    }
    case 'float-closed': {
      const current = ours(entry.floatId);
      if (current) current.closed = true;
      break;
    }
    case 'float-lost':
      if (entry.lost) folds.lost = { floatId: entry.floatId, at: entry.at };
      else if (folds.lost?.floatId === entry.floatId) delete folds.lost;
      break;
    case 'found':
      if (!folds.found.has(entry.movementId)) {
        folds.found.set(entry.movementId, {
          cardId: entry.cardId,
          credits: entry.credits,
          at: entry.at,
        });
      }
      break;
    case 'found-reported': {
      const found = folds.found.get(entry.movementId);
      if (found) found.reportedAt = entry.at;
      break;
    }
    case 'shop':
      folds.shops.set(entry.keyFingerprint, { customer: entry.customer, at: entry.at });
      break;
    case 'ledger-seen':
      folds.ledgerSeenAt = entry.seenAt ?? entry.at;
      break;
  }
}

/**
 * The lines that rebuild the folds, for compaction. `dropped`: what the float's movements that
 * compaction drops sold (credits) and the highest sequence number they used. Found recharges
 * reported longer ago than `keepMs` are dropped (seen again, one is reported again: the ledger
 * answers it `known`).
 */
export function floatEntriesOf(
  folds: FloatFolds,
  dropped: { sold: number; seq: number },
  now: number,
  keepMs: number,
): FloatEntry[] {
  const entries: FloatEntry[] = [];
  if (folds.opening) entries.push({ type: 'float-open', ...folds.opening });
  const float = folds.float;
  if (float && !float.closed) {
    entries.push({
      type: 'float',
      floatId: float.floatId,
      requestId: float.requestId,
      keyFingerprint: float.keyFingerprint,
      prefix: float.prefix,
      idsIssued: float.idsIssued,
      granted: float.granted,
      soldBefore: float.soldBefore + dropped.sold,
      seqBefore: Math.max(float.seqBefore, dropped.seq),
      at: float.openedAt,
    });
    for (const [id, topUp] of float.topUps) {
      // Answered ones are in `granted`; one asked but unanswered is asked again, the same id.
      if (topUp.granted !== undefined) continue;
      entries.push({
        type: 'float-topup',
        floatId: float.floatId,
        id,
        credits: topUp.credits,
        ids: topUp.ids,
        at: float.openedAt,
      });
    }
    if (float.closing)
      entries.push({ type: 'float-closing', floatId: float.floatId, at: float.openedAt });
  }
  if (folds.lost)
    entries.push({
      type: 'float-lost',
      floatId: folds.lost.floatId,
      lost: true,
      at: folds.lost.at,
    });
  for (const [movementId, found] of folds.found) {
    if (found.reportedAt !== undefined && now - Date.parse(found.reportedAt) > keepMs) continue;
    entries.push({
      type: 'found',
      movementId,
      cardId: found.cardId,
      credits: found.credits,
      at: found.at,
    });
    if (found.reportedAt !== undefined) {
      entries.push({ type: 'found-reported', movementId, at: found.reportedAt });
    }
  }
  for (const [keyFingerprint, shop] of folds.shops) {
    entries.push({ type: 'shop', keyFingerprint, customer: shop.customer, at: shop.at });
  }
  if (folds.ledgerSeenAt !== undefined)
    entries.push({ type: 'ledger-seen', at: folds.ledgerSeenAt });
  return entries;
}
