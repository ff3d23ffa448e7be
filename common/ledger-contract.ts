/**
 * The cloud ledger's contract v1 as both sides see it: the JSON shapes of its answers and the
 * error codes a client acts on. The ledger (cloud/) produces them, the worker's ledger client
 * (service/cloud/) reads them; neither imports the other, both import this.
 */
export type MovementKind = 'recharge' | 'discharge';
export type MovementState = 'pending' | 'posted' | 'voided';

/** `GET /v1/customer`. */
export interface Customer {
  customerId: string;
  name: string;
  credits: number;
  creditCost: string;
}

/** A movement as every `/v1/movements` call answers it. */
export interface Movement {
  id: string;
  kind: MovementKind;
  cardId: string;
  state: MovementState;
  credits: number;
  amount: string;
  creditCost: string;
  customerCredits: number;
  createdAt: string;
  resolvedAt: string | null;
  /** The till that made it (null: made before tills were named). */
  tillId: string | null;
  /** What the card held when its write was planned (the till's card format), or null. */
  cardBefore: string | null;
  /** The movement whose disagreement with its card this one sets right, or null. */
  compensates: string | null;
  /** The till that posted or voided it, when it said so. */
  resolvedByTill: string | null;
  /** The evidence an operator gave to resolve another till's movement, or null. */
  evidence: string | null;
  /**
   * True while an operator's post or void made without the card (no till) waits for a till to
   * read the card: the card is held (CardMovementPending) until a till confirms the operator's
   * word from the card or compensates it (docs/cloud-api.md, "Tills").
   */
  awaitsCard: boolean;
  /** What the card showed when a till confirmed an operator's word from it, or null. */
  cardEvidence: string | null;
  /**
   * When a posted movement happened by its till's clock (the card write proven: the post's
   * `occurredAt`, else the ledger's time of the post); null unless posted. Day reports count a
   * shop's local day of it; `resolvedAt` is the ledger's own time.
   */
  occurredAt: string | null;
}

/**
 * `POST /v1/movements`: the caller picks the id (the idempotency key, so every call is safe to
 * repeat); exactly one of credits and amount.
 */
export interface MovementRequest {
  id: string;
  kind: MovementKind;
  cardId: string;
  credits?: number;
  /** Euros, a decimal string with at most 2 decimals; recharge only. */
  amount?: string;
  /**
   * Recharge only, optional: what the card held before this recharge, as the till read it. A
   * card holding more than its account plus its pending movements is flagged
   * `card-above-account`; with `refuseAboveAccount`, the recharge is then refused
   * (CardAccountExceeded) and nothing is reserved. Not part of the movement's identity.
   */
  cardCredits?: number;
  refuseAboveAccount?: boolean;
  /**
   * The till making it (a UUID the till keeps for good). Part of the movement's identity. A
   * card with another till's movement pending at this shop is refused (CardMovementPending):
   * that movement's card write may still have to be decided on the card.
   */
  tillId?: string;
  /**
   * What the card held when the write was planned, in the till's card format (1 to 200
   * visible ASCII characters; opaque to the ledger): with the movement's kind and credits, any
   * till can tell from the card whether the write landed. Not part of the identity.
   */
  cardBefore?: string;
  /**
   * The id of an earlier movement of this shop and card that the ledger resolved against what
   * the card shows: this movement sets the books right (no card write goes with it). Refused
   * ones (NoCredits, CardAccountExceeded) flag the card `compensation-refused`.
   */
  compensates?: string;
}

/**
 * The optional body of `POST /v1/movements/{id}/post` and `/void`: the till resolving it, and
 * the evidence when that is not the till that made it (an operator's decision, from the card
 * or otherwise). Without evidence, another till's movement is refused (MovementOfAnotherTill).
 */
export interface ResolveRequest {
  tillId?: string;
  evidence?: string;
  /**
   * A post's time by the till's clock: when the card write was proven (an ISO 8601 timestamp).
   * Not part of the identity; ignored by a void.
   */
  occurredAt?: string;
}

/**
 * Why a card is suspect: each refused overdraw, each recharge of a card that held more than its
 * account, and legacy overdraws found by migration 3.
 */
export type CardFlagKind =
  | 'discharge-exceeds-account'
  | 'card-above-account'
  | 'overdrawn-before-accounts'
  /** A compensating movement the ledger refused: the card and the books disagree. */
  | 'compensation-refused';

export interface CardFlag {
  kind: CardFlagKind;
  /** The discharge or recharge that raised it. */
  movementId: string | null;
  /** The credits the discharge asked for; for `card-above-account`, what the card held. */
  requestedCredits: number | null;
  /** What the card's account held then (negative: the overdraw written off by migration 3). */
  accountCredits: number | null;
  createdAt: string;
}

/**
 * `GET /v1/cards/{cardId}`: what the key's shop has put on one card. `credits` is what a
 * discharge may still take: imported + posted recharges - posted discharges - pending
 * discharges. A card the shop never moved has an account of 0.
 */
export interface CardAccount {
  cardId: string;
  credits: number;
  /** The balance imported for this card (`card-wallet-cloud card import`), or null. */
  importedCredits: number | null;
  /** True once any flag was raised; the flags say why. */
  suspect: boolean;
  flags: CardFlag[];
  /** This shop's movements of this card, newest first (at most 100). */
  movements: Movement[];
}

/** A till's card reader as the tray reports it (the heartbeat's `reader`). */
export interface TillReader {
  /**
   * `ready`: a reader is attached and PC/SC answers; `no-reader`: PC/SC answers, no contactless
   * reader is attached; `unavailable`: PC/SC cannot be used (`problem` says why); `stopped`:
   * the till's reader manager is not running (starting or stopping).
   */
  state: 'ready' | 'no-reader' | 'unavailable' | 'stopped';
  /** The reader in use, as PC/SC names it, or null. */
  name: string | null;
  /** Why PC/SC cannot be used, as the tray's codes say it (`service-stopped`, ...), or null. */
  problem: string | null;
}

/**
 * What a till's float holds by its own journal, in a heartbeat. Optional: the till float
 * (pool -> float, recharges paid from it and reported later) fills it; a till without a float
 * leaves it out or sends null.
 */
export interface TillFloatReport {
  /** Credits left in the float by the till's journal. */
  credits: number;
  /** Float recharges the till has sold and not yet reported to the ledger, and their credits. */
  unreportedMovements: number;
  unreportedCredits: number;
  /** Since when the till sells offline (its last ledger call failed), or null. */
  offlineSince: string | null;
}

/** `POST /v1/tills/{tillId}/heartbeat`: a till's state, every minute and on each change. */
export interface TillHeartbeat {
  /** The worker's version. */
  version: string;
  reader: TillReader;
  /** This till's movements the ledger has not confirmed yet (its outbox and undecided writes). */
  pendingMovements: number;
  /** Movements pending at the ledger until their card is presented again. */
  waitingMovements: number;
  float?: TillFloatReport | null;
}

/** A till as the ledger knows it: the heartbeat's answer, and the back office's tills. */
export interface TillState {
  tillId: string;
  /** The name the shop's owner gave it ("front counter"), or null. */
  name: string | null;
  firstSeenAt: string;
  /** Its last heartbeat, or null when it never sent one. */
  lastSeenAt: string | null;
  version: string | null;
  reader: TillReader | null;
  pendingMovements: number | null;
  waitingMovements: number | null;
  float: TillFloatReport | null;
}

/** The error codes of contract v1 (`{ "error": code }`) with their HTTP statuses. */
export const ledgerErrorCodes = {
  missingApiKey: { code: 'Unauthorized: missing api key', status: 401 },
  invalidApiKey: { code: 'Unauthorized: invalid api key', status: 401 },
  keyNotAssigned: { code: 'KeyNotAssigned', status: 403 },
  invalidMovement: { code: 'InvalidMovement', status: 400 },
  amountBelowOneCredit: { code: 'AmountBelowOneCredit', status: 422 },
  noCredits: { code: 'NoCredits', status: 422 },
  /** A discharge for more than the card's account at this shop; the card is flagged suspect. */
  cardAccountExceeded: { code: 'CardAccountExceeded', status: 422 },
  invalidCardId: { code: 'InvalidCardId', status: 400 },
  movementIdConflict: { code: 'MovementIdConflict', status: 409 },
  movementNotFound: { code: 'MovementNotFound', status: 404 },
  movementAlreadyVoided: { code: 'MovementAlreadyVoided', status: 409 },
  movementAlreadyPosted: { code: 'MovementAlreadyPosted', status: 409 },
  /** Another till's movement of this card is pending: decide it first (at that till). */
  cardMovementPending: { code: 'CardMovementPending', status: 409 },
  /** A till resolving a movement another till made, without evidence. */
  movementOfAnotherTill: { code: 'MovementOfAnotherTill', status: 409 },
  /** `compensates` names no resolved movement of this shop and card. */
  invalidCompensation: { code: 'InvalidCompensation', status: 422 },
  /**
   * The create was planned from the card state its card's latest posted movement was planned
   * from: that write landed, so the card left the state (a create that came late).
   */
  cardStateMovedOn: { code: 'CardStateMovedOn', status: 409 },
  /** `compensates` names a movement another compensation already set right. */
  movementCompensated: { code: 'MovementCompensated', status: 409 },
  notFound: { code: 'NotFound', status: 404 },
  invalidRequest: { code: 'InvalidRequest', status: 400 },
  invalidQuery: { code: 'InvalidQuery', status: 400 },
  /** A till heartbeat's body is not one (`detail` names the field). */
  invalidHeartbeat: { code: 'InvalidHeartbeat', status: 400 },
  payloadTooLarge: { code: 'PayloadTooLarge', status: 413 },
  unsupportedMediaType: { code: 'UnsupportedMediaType', status: 415 },
  tooManyRequests: { code: 'TooManyRequests', status: 429 },
  databaseUnavailable: { code: 'DatabaseUnavailable', status: 503 },
} as const;

export type LedgerErrorCode = (typeof ledgerErrorCodes)[keyof typeof ledgerErrorCodes]['code'];
