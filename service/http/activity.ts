import { EventEmitter } from 'node:events';

/** One answered request, for the tray's "recent requests" list. */
export interface RequestRecord {
  at: Date;
  method: string;
  path: string;
  status: number;
  origin: string | null;
  keyFingerprint: string | null;
}

/** One refused request over a limit, for the tray's rate-limit panel. */
export interface RateLimitHit {
  at: Date;
  endpoint: string;
  /** `key` for the per-key endpoint windows, `address` for failed authentications. */
  scope: 'key' | 'address';
  keyFingerprint: string | null;
  origin: string | null;
}

/** The credits a card answer reported (read, recharged, or paid out to 0). */
export interface CardAnswer {
  at: Date;
  cardId: string;
  credits: number;
  /**
   * The card is flagged suspect: a payout the ledger refused (CardAccountExceeded: it holds more
   * than the shop put on it; CardRecordMismatch: its movement records do not explain it), or a
   * card this till found its newest movement record does not explain.
   */
  suspect?: true;
  /** Why: the ledger's refusal code, or the till's own finding (CardSuspicion). */
  suspectReason?: string;
}

interface ActivityEvents {
  request: [RequestRecord];
  'rate-limited': [RateLimitHit];
  'card-answer': [CardAnswer];
}

/** What the HTTP layer tells its host about traffic; the tray listens, the CLI may log. */
export class HttpActivity extends EventEmitter<ActivityEvents> {}
