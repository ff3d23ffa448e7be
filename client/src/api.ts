// Generated from docs/openapi.yaml by scripts/generate-client-types.ts (npm run client:types).
// Do not edit: test/unit/client-types.test.ts fails when this file and the document disagree.

/** The version of the API these types describe (the document's info.version). */
export const API_VERSION = '2.5.5';

/** What to fix, for a person reading it: which field and which rule, which origin or Host, or which ledger URL. Not for matching in code: match `error`. */
export type ErrorDetail = string;

/** The card's UID, uppercase hex, no separators (4 or 7 bytes). */
export type CardId = string;

export type Card = {
  cardId: CardId;
  credits: number;
  rechargeAmount: null;
};

export type CustomerInfo = {
  credits: string;
  creditCost: string;
};

/** Exactly one of credits or amount (null counts as absent); no other field. */
export type RechargeRequest = {
  credits?: number | null;
  /** Euros, at most two decimals, worth at least one credit. */
  amount?: number | null;
};

export type RechargeResult = {
  cardId: CardId;
  /** The balance after the recharge. */
  credits: number;
  /** Euros charged: the credits paid for x creditCost (a bonus is free). */
  rechargeAmount: number;
  /** Of the credits this recharge put on the card, the bonus the shop's tiers gave (a recharge by `amount` only). Absent: no bonus. Online it is the ledger's; a float recharge sold offline gives the bonus of the tiers the till learnt last. */
  bonusCredits?: number;
  /** The ledger movement (a UUID): `GET /movements/{id}` finds it again. Null when nothing moved (a payout of a card at 0). Absent only in a replay of an answer stored by a version before 2.1. */
  movementId?: string | null;
  /** When the card write was proven, by the till's clock (the ledger counts the shop's day by it); null when nothing moved. */
  occurredAt?: string | null;
  /** The `Pos-Reference` sent with the request, or null. */
  reference?: string | null;
};

export type DischargeResult = {
  cardId: CardId;
  dischargedCredits: number;
  dischargedAmount: number;
  /** The ledger movement (a UUID): `GET /movements/{id}` finds it again. Null when nothing moved (a payout of a card at 0). Absent only in a replay of an answer stored by a version before 2.1. */
  movementId?: string | null;
  /** When the card write was proven, by the till's clock (the ledger counts the shop's day by it); null when nothing moved. */
  occurredAt?: string | null;
  /** The `Pos-Reference` sent with the request, or null. */
  reference?: string | null;
};

export type SettleResult = {
  cardId: CardId;
  /** Other tills' movements the card decided now, and movements the provider decided without the card that the card was checked against (their `state` is the provider's). */
  settled: Array<
    SettledMovement & {
      state: 'posted' | 'voided';
      /** The compensating movement made because the card disagrees. */
      compensatedBy?: string;
    }
  >;
  /** Pending movements of the card it cannot decide here. */
  undecided: Array<
    SettledMovement & {
      reason: string;
    }
  >;
  /** Replacements and corrections that waited for the card at the ledger, applied on it now, each with its own movement (absent when none waited). */
  cardChanges?: Array<AppliedCardChange>;
};

export type AppliedCardChange = {
  /** The movement that applied it. */
  movementId: string;
  /** A lost card's account put on this card, or an operator's correction taken off it. */
  kind: 'replacement' | 'correction';
  /** The card change at the ledger it applied. */
  changeId: string;
  /** Credits put on the card (replacement) or taken off it (correction). */
  credits: number;
};

export type SettledMovement = {
  id: string;
  /** The till that made it; null for a worker that names no till. */
  tillId: string | null;
  kind: 'recharge' | 'discharge' | 'refund' | 'correction' | 'replacement' | 'block-clear';
  credits: number;
};

export type PersonalizeResult = {
  cardId: CardId;
  /** The card's balance (kept by personalization). */
  credits: number;
  /** True when its own key already opened the card and nothing was written. */
  alreadyPersonalized: boolean;
};

export type SimulatorPlaceRequest = {
  uid?: string;
  credits?: number;
  type?: 'mifare-classic' | 'desfire';
};

export type SimulatorPutBackRequest = {
  cardId: CardId;
};

export type SimulatorFaultRequest = {
  fault: 'tear-before-commit' | 'tear-after-commit' | 'wrong-key' | 'corrupt' | 'slow' | 'none';
  delayMs?: number;
};

export type SimulatedCard = {
  cardId: CardId;
  /** The wallet balance on the card; null when it cannot be read (corrupt). */
  credits: number | null;
};

export type SimulatorStatus = {
  card: SimulatedCard | null;
  cards: Array<SimulatedCard>;
};

export type RateLimitWindow = {
  limit: number;
  windowSeconds: number;
};

/** Each endpoint's fixed window (per API key). */
export type SimulatorRateLimits = {
  readcard: RateLimitWindow;
  info: RateLimitWindow;
  writecard: RateLimitWindow;
  dischargecard: RateLimitWindow;
  personalize: RateLimitWindow;
  settle: RateLimitWindow;
  undo: RateLimitWindow;
  movements: RateLimitWindow;
};

/** The windows to set; `null` sets an endpoint back to the spec's window. */
export type SimulatorRateLimitsRequest = {
  readcard?: RateLimitWindow | null;
  info?: RateLimitWindow | null;
  writecard?: RateLimitWindow | null;
  dischargecard?: RateLimitWindow | null;
  personalize?: RateLimitWindow | null;
  settle?: RateLimitWindow | null;
  undo?: RateLimitWindow | null;
  movements?: RateLimitWindow | null;
};

/** A movement of the shop as the ledger has it, or this till's journal until the ledger does. */
export type MovementRecord = {
  movementId: string;
  kind: 'recharge' | 'discharge';
  cardId: CardId;
  credits: number;
  /** Euros. */
  amount: number;
  /** The POS's reference (null: none). */
  reference: string | null;
  /** The till that made it. */
  tillId: string | null;
  /** The ledger's state; until the ledger has it, the journal's. */
  state: 'pending' | 'posted' | 'voided';
  /** When its card write was proven, by its till's clock; null while it has not been. */
  occurredAt: string | null;
  /** The movement that set right its disagreement with its card (docs/integrators.md, "Several tills"), or null. */
  compensatedBy: string | null;
  /** Whether the ledger has it (false until a till reports it); null when the ledger could not be asked. */
  atLedger: boolean | null;
};

export type MovementList = {
  /** Newest first. */
  movements: Array<MovementRecord>;
};

export type AmountQuote = {
  /** The amount asked, in euros. */
  amount: string;
  /** floor(amount / creditCost). */
  paidCredits: number;
  /** What the shop's bonus tiers add. */
  bonusCredits: number;
  /** paidCredits + bonusCredits: what the card gets. */
  credits: number;
  /** What the recharge charges: paidCredits x creditCost. */
  rechargeAmount: string;
  creditCost: string;
  /** True when the ledger could not be reached and the quote is by the price and tiers this till learnt last. */
  offline: boolean;
};

export type HolderLabelRequest = {
  /** A name or phone number (trimmed, one line); null deletes the label. */
  label: string | null;
};

export type HolderLabelResult = {
  /** False when the card had this label (or none) already. */
  changed: boolean;
  cardId: CardId;
  /** The label now; null when none. */
  holderLabel: string | null;
};

export type UndoRequest = {
  /** The recharge to undo, its `movementId` as `/writecard` answered it. */
  movementId: string;
};

export type UndoResult = {
  cardId: CardId;
  /** The balance after the undo. */
  credits: number;
  /** Credits taken off the card (bonus credits first), back in the shop's pool. */
  refundedCredits: number;
  /** Euros the cashier gives back, the paid credits taken at the recharge's credit cost. */
  refundedAmount: number;
  /** The recharge undone. */
  refunds: string;
  /** The refund movement at the ledger (a UUID), of kind `refund`. */
  movementId: string;
  /** When the card write was proven, by the till's clock. */
  occurredAt: string;
  /** Always null (an undo takes no `Pos-Reference`; `refunds` names its recharge). */
  reference: null;
};

/** Every operation: its method and path, and its documented error codes by HTTP status. */
export const operations = {
  /** Health check */
  ping: {
    method: 'GET',
    path: '/ping',
    errors: {
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      431: ['BadRequest'],
    },
  },
  /** This document, as JSON */
  openapi: {
    method: 'GET',
    path: '/openapi.json',
    errors: {
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      431: ['BadRequest'],
    },
  },
  /** Read the card on the reader */
  readCard: {
    method: 'GET',
    path: '/readcard',
    errors: {
      400: ['Missing customerId from auth flow', 'NoCard', 'AuthenticationFail'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'MovementUnsettled',
        'CardBlocked',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** The shop's credits and the cost of one credit, from the cloud ledger */
  info: {
    method: 'GET',
    path: '/info',
    errors: {
      400: ['Missing customerId from auth flow', 'CustomerReadError'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: ['UnexpectedError', 'LedgerUnavailable'],
    },
  },
  /** Recharge the card on the reader */
  rechargeCard: {
    method: 'POST',
    path: '/writecard',
    errors: {
      400: [
        'Invalid credits or amount value',
        'InvalidJson',
        'InvalidIdempotencyKey',
        'InvalidReference',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      409: ['IdempotencyKeyInUse', 'IdempotencyKeyOtherCard'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      422: ['IdempotencyKeyReused'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'NoCredits',
        'CardAccountExceeded',
        'NegativeCredits',
        'CardBalanceOverflow',
        'CardRemovedDuringWrite',
        'CardAnswerUnverified',
        'CardRemovedDuringPersonalization',
        'PersonalizationTorn',
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'CardWriteUnverified',
        'MovementUnsettled',
        'MovementVoided',
        'MovementConflict',
        'MovementPendingAtOtherTill',
        'FloatRechargeUnreported',
        'CardHeldAtLedger',
        'CardBlocked',
        'CardChangeWaiting',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** Pay the card out (reset it to zero) */
  dischargeCard: {
    method: 'POST',
    path: '/dischargecard',
    errors: {
      400: [
        'InvalidBody',
        'InvalidJson',
        'InvalidIdempotencyKey',
        'InvalidReference',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      409: ['IdempotencyKeyInUse', 'IdempotencyKeyOtherCard'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      422: ['IdempotencyKeyReused'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'ErrorTrackingDischargeMovement',
        'CardAccountExceeded',
        'CardRecordMismatch',
        'NegativeCredits',
        'CardRemovedDuringWrite',
        'CardAnswerUnverified',
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'MovementUnsettled',
        'MovementVoided',
        'MovementConflict',
        'MovementPendingAtOtherTill',
        'FloatRechargeUnreported',
        'CardBlocked',
        'CardChangeWaiting',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** Decide other tills' pending movements of the card on the reader (an operator's action) */
  settleCard: {
    method: 'POST',
    path: '/cards/settle',
    errors: {
      400: [
        'InvalidBody',
        'InvalidJson',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'MovementUnsettled',
        'CardChangeWaiting',
        'CardRemovedDuringWrite',
        'CardAnswerUnverified',
        'MovementPendingAtOtherTill',
        'NegativeCredits',
        'CardBalanceOverflow',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** Undo this till's mistaken recharge of the card on the reader (a cashier's undo) */
  undoRecharge: {
    method: 'POST',
    path: '/cards/undo',
    errors: {
      400: [
        'InvalidBody',
        'InvalidJson',
        'InvalidIdempotencyKey',
        'InvalidReference',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      409: ['IdempotencyKeyInUse', 'IdempotencyKeyOtherCard'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      422: ['IdempotencyKeyReused'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'UndoRechargeNotFound',
        'UndoOfAnotherCard',
        'UndoOfAnotherTill',
        'AlreadyUndone',
        'UndoNotNewest',
        'UndoWindowPassed',
        'NothingToUndo',
        'UndoRefused',
        'NegativeCredits',
        'CardRemovedDuringWrite',
        'CardAnswerUnverified',
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'MovementUnsettled',
        'MovementVoided',
        'MovementConflict',
        'MovementPendingAtOtherTill',
        'FloatRechargeUnreported',
        'CardBlocked',
        'CardChangeWaiting',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** Give the card on the reader its own keys */
  personalizeCard: {
    method: 'POST',
    path: '/cards/personalize',
    errors: {
      400: [
        'InvalidBody',
        'InvalidJson',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      409: ['CardMasterKeyNotSet'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'CardRemovedDuringPersonalization',
        'PersonalizationTorn',
        'CardWriteUnverified',
        'CorruptCard',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'MovementUnsettled',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** What a recharge by amount buys, before paying (credits, bonus, total) */
  quote: {
    method: 'GET',
    path: '/quote',
    errors: {
      400: ['Invalid credits or amount value', 'Missing customerId from auth flow'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: ['LedgerUnavailable', 'UnexpectedError'],
    },
  },
  /** Set or delete the holder label of the card on the reader */
  setHolderLabel: {
    method: 'POST',
    path: '/cards/holder',
    errors: {
      400: [
        'InvalidBody',
        'InvalidJson',
        'RequestAborted',
        'Missing customerId from auth flow',
        'NoCard',
        'AuthenticationFail',
      ],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: [
        'HolderLabelRefused',
        'NoReader',
        'CardNotResponding',
        'CardBusy',
        'CardOperationFailed',
        'LedgerUnavailable',
        'UnexpectedError',
      ],
    },
  },
  /** A movement by its id (a receipt's movementId) */
  movement: {
    method: 'GET',
    path: '/movements/{id}',
    errors: {
      400: ['InvalidReference', 'Missing customerId from auth flow'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['MovementNotFound'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: ['LedgerUnavailable', 'UnexpectedError'],
    },
  },
  /** The shop's movements with a POS reference, newest first */
  movements: {
    method: 'GET',
    path: '/movements',
    errors: {
      400: ['InvalidReference', 'Missing customerId from auth flow'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: ['LedgerUnavailable', 'UnexpectedError'],
    },
  },
  /** The card simulator's field and the cards it knows (only with --simulator) */
  simulatorStatus: {
    method: 'GET',
    path: '/simulator',
    errors: {
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Put a new simulated card in the field (the one there is taken away) */
  simulatorPlace: {
    method: 'POST',
    path: '/simulator/place',
    errors: {
      400: ['InvalidSimulatorRequest', 'InvalidJson', 'RequestAborted'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      409: ['NoSimulatedCard', 'SimulatedCardExists'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Take the card out of the field (the simulator remembers it) */
  simulatorTakeAway: {
    method: 'POST',
    path: '/simulator/take-away',
    errors: {
      400: ['InvalidSimulatorRequest', 'InvalidJson', 'RequestAborted'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Put a card seen before back in the field, with its memory as it was */
  simulatorPutBack: {
    method: 'POST',
    path: '/simulator/put-back',
    errors: {
      400: ['InvalidSimulatorRequest', 'InvalidJson', 'RequestAborted'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['UnknownSimulatedCard', 'NotFound'],
      405: ['MethodNotAllowed'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Arm a fault on the card in the field */
  simulatorFault: {
    method: 'POST',
    path: '/simulator/fault',
    errors: {
      400: ['InvalidSimulatorRequest', 'InvalidJson', 'RequestAborted'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      409: ['NoSimulatedCard', 'SimulatedCardExists'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** The endpoints' rate limits in force (only with --simulator) */
  simulatorRateLimits: {
    method: 'GET',
    path: '/simulator/rate-limits',
    errors: {
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Set endpoints' rate limits, for integration tests (only with --simulator) */
  simulatorSetRateLimits: {
    method: 'POST',
    path: '/simulator/rate-limits',
    errors: {
      400: ['InvalidSimulatorRequest', 'InvalidJson', 'RequestAborted'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      404: ['NotFound'],
      405: ['MethodNotAllowed'],
      413: ['PayloadTooLarge'],
      415: ['UnsupportedMediaType'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
    },
  },
  /** Reader and card events, as Server-Sent Events */
  cardEvents: {
    method: 'GET',
    path: '/events',
    errors: {
      400: ['Missing customerId from auth flow'],
      401: ['Unauthorized: missing api key', 'Unauthorized: invalid api key'],
      403: ['ForbiddenOrigin', 'ForbiddenHost'],
      405: ['MethodNotAllowed'],
      429: ['TooManyRequests'],
      431: ['BadRequest'],
      500: ['UnexpectedError', 'LedgerUnavailable'],
    },
  },
} as const;

/** What each operation answers with a 2xx. */
export interface Answers {
  ping: 'pong';
  openapi: {
    openapi: string;
    info: Record<string, unknown>;
    paths: Record<string, unknown>;
  };
  readCard: Card;
  info: CustomerInfo;
  rechargeCard: RechargeResult;
  dischargeCard: DischargeResult;
  settleCard: SettleResult;
  undoRecharge: UndoResult;
  personalizeCard: PersonalizeResult;
  quote: AmountQuote;
  setHolderLabel: HolderLabelResult;
  movement: MovementRecord;
  movements: MovementList;
  simulatorStatus: SimulatorStatus;
  simulatorPlace: SimulatedCard;
  simulatorTakeAway: SimulatorStatus;
  simulatorPutBack: SimulatedCard;
  simulatorFault: SimulatedCard;
  simulatorRateLimits: SimulatorRateLimits;
  simulatorSetRateLimits: SimulatorRateLimits;
  cardEvents: string;
}
