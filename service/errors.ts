/**
 * The one error type of the service. `code` is the text integrators see in `{ "error": code }`
 * (the spec's codes are kept to the letter); `status` is the HTTP status. `detail`, when set,
 * is answered beside the code: what the caller should fix (the field and the rule, the origin,
 * the ledger's URL), in words, never a secret, a stack or a file path. Anything thrown that is
 * not an AppError becomes a 500 `UnexpectedError` with no detail in the response.
 */
export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail: string | undefined;

  constructor(
    code: string,
    status: number,
    message?: string,
    options?: ErrorOptions & { detail?: string },
  ) {
    super(message ?? options?.detail ?? code, options);
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.detail = options?.detail;
  }
}

/** An error whose `detail` tells the caller what to fix (it is also its message, for the log). */
const withDetail = (code: string, status: number, detail: string | undefined) =>
  new AppError(code, status, undefined, detail === undefined ? undefined : { detail });

/** The spec's error codes and the service's own, each with its HTTP status. */
export const errors = {
  missingApiKey: () => new AppError('Unauthorized: missing api key', 401),
  invalidApiKey: () => new AppError('Unauthorized: invalid api key', 401),
  missingCustomer: () => new AppError('Missing customerId from auth flow', 400),
  /** `detail` names the field and the rule, e.g. "amount: at most 2 decimals (got 0.301)". */
  invalidCreditsOrAmount: (detail: string) =>
    withDetail('Invalid credits or amount value', 400, detail),
  /** A body with a field the endpoint does not take (`/dischargecard` takes none). */
  invalidBody: (detail: string) => withDetail('InvalidBody', 400, detail),
  noCard: (cause?: unknown) => new AppError('NoCard', 400, 'No card on the reader', { cause }),
  authenticationFail: (cause?: unknown) =>
    new AppError('AuthenticationFail', 400, 'The card could not be authenticated', { cause }),
  /** `detail`: what is known instead (offline: what this till's float can still sell). */
  customerReadError: (cause?: unknown, detail?: string) =>
    new AppError('CustomerReadError', 400, detail ?? 'The customer record could not be read', {
      cause,
      ...(detail === undefined ? {} : { detail }),
    }),
  /** `detail`: why, when it is not the pool (offline: the float, its cap, its time limit). */
  noCredits: (detail?: string) =>
    new AppError(
      'NoCredits',
      500,
      detail ?? "The shop's credit pool cannot cover it",
      detail === undefined ? undefined : { detail },
    ),
  negativeCredits: () => new AppError('NegativeCredits', 500, 'The card holds a negative balance'),
  /** `detail`: why, when it is known (offline: a payout needs the ledger). */
  errorTrackingDischargeMovement: (cause?: unknown, detail?: string) =>
    new AppError('ErrorTrackingDischargeMovement', 500, detail, {
      cause,
      ...(detail === undefined ? {} : { detail }),
    }),
  tooManyRequests: () => new AppError('TooManyRequests', 429),
  // Not named by the spec: 500s with their own clear code, never a stack trace.
  corruptCard: () =>
    new AppError('CorruptCard', 500, 'Neither wallet slot on the card is valid; it is not written'),
  noReader: () => new AppError('NoReader', 500, 'No card reader is connected'),
  cardNotResponding: (cause?: unknown) =>
    new AppError('CardNotResponding', 500, 'The card did not answer in time', { cause }),
  cardBusy: () => new AppError('CardBusy', 500, 'Too many card operations are waiting'),
  cardWriteUnverified: () =>
    new AppError('CardWriteUnverified', 500, 'The block read back differs from what was written'),
  cardRemovedDuringWrite: (cause?: unknown) =>
    new AppError(
      'CardRemovedDuringWrite',
      500,
      'The card left while it was being written; present it again to settle the movement',
      { cause },
    ),
  /**
   * A DESFire card's answer to a write (Credit, Debit, WriteRecord or the commit) did not verify:
   * the card may hold the change or not. The till aborted the card's transaction; the movement
   * is settled from the card's records when it is read again under a fresh authentication.
   */
  cardAnswerUnverified: (cause?: unknown) =>
    new AppError(
      'CardAnswerUnverified',
      500,
      "The card's answer to the write could not be verified; present the card again to settle the movement",
      { cause },
    ),
  cardRemovedDuringPersonalization: (cause?: unknown) =>
    new AppError(
      'CardRemovedDuringPersonalization',
      500,
      'The card left while it was being personalized; present it again and personalize it again',
      { cause },
    ),
  personalizationTorn: () =>
    new AppError(
      'PersonalizationTorn',
      500,
      'The card left while its keys were being written and no key opens it now; keep it aside for the operator',
    ),
  cardMasterKeyNotSet: () =>
    new AppError(
      'CardMasterKeyNotSet',
      409,
      'Cards are personalized only with a card master key configured',
    ),
  cardAccountExceeded: () =>
    new AppError(
      'CardAccountExceeded',
      500,
      'The ledger pays out no more than the shop has put on this card; the card is not written',
    ),
  cardRecordMismatch: () =>
    new AppError(
      'CardRecordMismatch',
      500,
      'The card holds credits its own movement records do not account for; the ledger flagged it and nothing moved',
    ),
  cardBalanceOverflow: () =>
    new AppError('CardBalanceOverflow', 500, 'The new balance does not fit on the card'),
  movementUnsettled: () =>
    new AppError(
      'MovementUnsettled',
      500,
      'An earlier movement on this card could not be settled; the card is not written',
    ),
  /** `detail` names the ledger's URL and what went wrong there (no answer, or not a ledger). */
  ledgerUnavailable: (cause?: unknown, detail?: string) =>
    new AppError('LedgerUnavailable', 500, detail ?? 'The cloud ledger could not be reached', {
      cause,
      ...(detail === undefined ? {} : { detail }),
    }),
  cardOperationFailed: (cause?: unknown) =>
    new AppError('CardOperationFailed', 500, 'The card operation failed', { cause }),
  unexpected: () => new AppError('UnexpectedError', 500),
  // Idempotency-Key (the integrator guide explains each).
  invalidIdempotencyKey: () =>
    withDetail(
      'InvalidIdempotencyKey',
      400,
      'Idempotency-Key: must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
    ),
  /** The `Pos-Reference` header (or a lookup's `reference`) is not a reference. */
  invalidReference: (detail: string) => withDetail('InvalidReference', 400, detail),
  /** `GET /movements/{id}`: neither this till's journal nor the ledger has it. */
  movementNotFound: (detail: string) => withDetail('MovementNotFound', 404, detail),
  idempotencyKeyInUse: () =>
    new AppError('IdempotencyKeyInUse', 409, 'A request with this key is still running'),
  idempotencyKeyReused: () =>
    new AppError('IdempotencyKeyReused', 422, 'This key was used with another request'),
  idempotencyKeyOtherCard: () =>
    new AppError(
      'IdempotencyKeyOtherCard',
      409,
      'This key was used for another card; present that card to get its answer, or use a new key',
    ),
  // Money movements the ledger decided otherwise (docs/integrators.md, "Reconciliation").
  movementVoided: () =>
    new AppError(
      'MovementVoided',
      500,
      'The ledger voided the movement before the card was written; nothing moved',
    ),
  movementConflict: () =>
    new AppError(
      'MovementConflict',
      500,
      'The card holds this movement but the ledger voided it and refused to record it again; the card is flagged for the operator',
    ),
  // The cashier's undo (POST /cards/undo; docs/integrators.md, "Undoing a recharge"): each
  // refusal its own code, `detail` the ledger's words; nothing moved, the card is untouched.
  /** The recharge named is no recharge of this shop and of the card on the reader that landed. */
  undoRechargeNotFound: (detail: string) => withDetail('UndoRechargeNotFound', 500, detail),
  /** The card on the reader is not the card the recharge was written to. */
  undoOfAnotherCard: (detail: string) => withDetail('UndoOfAnotherCard', 500, detail),
  /** Another till made the recharge: a cashier undoes only their own till's. */
  undoOfAnotherTill: (detail?: string) =>
    withDetail(
      'UndoOfAnotherTill',
      500,
      detail ?? "another till made this recharge: a cashier undoes only their own till's",
    ),
  /** An undo (or an operator's correction) took the recharge back already. */
  alreadyUndone: (detail?: string) =>
    withDetail('AlreadyUndone', 500, detail ?? 'this recharge was taken back already'),
  /** A movement of the card came after the recharge: it is no longer the card's newest write. */
  undoNotNewest: (detail?: string) =>
    withDetail(
      'UndoNotNewest',
      500,
      detail ?? "this recharge is no longer the card's newest write",
    ),
  /** The shop's undo window (by the till's clock) has passed, or the shop allows no undo. */
  undoWindowPassed: (detail?: string) =>
    withDetail(
      'UndoWindowPassed',
      500,
      detail ?? "the shop's undo window for this recharge has passed",
    ),
  /** The ledger refused the undo for a reason of its own: `detail` says its code and words. */
  undoRefused: (detail: string) => withDetail('UndoRefused', 500, detail),
  /**
   * A replacement or correction waits for the card: an undo does not apply it, and once it is
   * applied the recharge is no longer the card's newest write.
   */
  undoChangeWaiting: (detail?: string) =>
    withDetail(
      'CardChangeWaiting',
      500,
      `${detail ?? 'a replacement or correction waits for this card at the ledger'}; nothing moved: an undo does not apply it, and once it is applied the recharge can no longer be undone (an operator can correct it)`,
    ),
  /** The card holds nothing of the recharge any more (machines spent it all). */
  nothingToUndo: (detail?: string) =>
    withDetail('NothingToUndo', 500, detail ?? 'the card holds nothing of this recharge'),
  // Several tills of one shop (docs/integrators.md, "Several tills").
  /** `detail` names the movement and its till, as the ledger does. */
  /**
   * The shop blocked the card (lost, stolen, replaced): no till recharges or pays it out, and
   * `/readcard` refuses it too. `detail` says since when (and why, when the ledger said).
   */
  cardBlocked: (detail?: string) =>
    withDetail(
      'CardBlocked',
      500,
      detail ??
        'The shop blocked this card: it is not recharged or paid out; keep it for the shop owner',
    ),
  /**
   * The ledger holds a replacement or correction for the card that this till could not apply
   * now (its card list could not be fetched): nothing moved. `detail`: the ledger's words.
   */
  cardChangeWaiting: (detail?: string) =>
    withDetail(
      'CardChangeWaiting',
      500,
      `${detail ?? 'a replacement or correction waits for this card at the ledger'}; nothing moved: present the card again once the till reaches the ledger`,
    ),
  movementPendingAtOtherTill: (detail?: string) =>
    withDetail(
      'MovementPendingAtOtherTill',
      500,
      detail ??
        "This card's last movement at another till is not finished; present the card at that till, or settle it here (POST /cards/settle)",
    ),
  /**
   * The card may carry float recharges of a till that has not reported them all (the ledger's
   * FloatReportPending): nothing is decided on it until they are; not a fraud flag.
   */
  floatRechargeUnreported: (detail?: string) =>
    withDetail(
      'FloatRechargeUnreported',
      500,
      detail === undefined
        ? "This card carries float recharges another till has not reported yet; it is paid out or recharged from the pool once they are (or once an operator closed that till's float)"
        : `${detail}; the card is paid out or recharged from the pool once they are reported (or once an operator closed that till's float)`,
    ),
  /**
   * The ledger holds the card for a movement an operator decided without it (the card list
   * says so), and the till is offline: only a till that reads the card online settles that, so
   * its float sells nothing to the card meanwhile.
   */
  cardHeldAtLedger: (detail: string) => withDetail('CardHeldAtLedger', 500, detail),
  /** The ledger refused a holder label for the card on the reader (`detail`: its code, why). */
  holderLabelRefused: (detail: string) => withDetail('HolderLabelRefused', 500, detail),
  // HTTP framing and the security checks in front of every route.
  forbiddenHost: (host: string | undefined, serviceUrl: string) =>
    withDetail(
      'ForbiddenHost',
      403,
      `Host ${host ?? '(none)'} is not this service: call ${serviceUrl}`,
    ),
  forbiddenOrigin: (origin: string) =>
    withDetail(
      'ForbiddenOrigin',
      403,
      `Origin ${origin} is not on this till's allowlist: the shop adds it in the tray app (or --allowed-origins)`,
    ),
  invalidJson: (detail = 'the body is not valid JSON') => withDetail('InvalidJson', 400, detail),
  payloadTooLarge: (limitBytes?: number) =>
    withDetail(
      'PayloadTooLarge',
      413,
      limitBytes === undefined ? undefined : `the body is over ${limitBytes} bytes`,
    ),
  unsupportedMediaType: (detail = 'the body must be application/json') =>
    withDetail('UnsupportedMediaType', 415, detail),
  requestAborted: () => new AppError('RequestAborted', 400),
  notFound: (detail?: string) => withDetail('NotFound', 404, detail),
  methodNotAllowed: (detail?: string) => withDetail('MethodNotAllowed', 405, detail),
  tooManyEventStreams: () =>
    new AppError('TooManyRequests', 429, 'Too many event streams for this key'),
  // Live settings (the tray window): never an HTTP answer (SETTINGS_ONLY_CODES).
  invalidSetting: (problems: string) => new AppError('InvalidSetting', 400, problems),
  portInUse: (port: number) => new AppError('PortInUse', 500, `port ${port} is in use`),
  listenFailed: (port: number, code: string | undefined) =>
    new AppError('ListenFailed', 500, `port ${port}: ${code}`),
  // The card simulator's control API (only when the simulator is on).
  invalidSimulatorRequest: (detail: string) => withDetail('InvalidSimulatorRequest', 400, detail),
  // The tray window shows these texts too (main/simulator-ipc.ts).
  noSimulatedCard: () => withDetail('NoSimulatedCard', 409, 'No simulated card is in the field'),
  simulatedCardExists: (cardId: string) =>
    withDetail('SimulatedCardExists', 409, `Card ${cardId} exists; put it back instead`),
  unknownSimulatedCard: (cardId: string) =>
    withDetail('UnknownSimulatedCard', 404, `The simulator has never seen card ${cardId}`),
} as const;

/** The codes only the tray's live settings see (WorkerService.applySettings), never HTTP. */
export const SETTINGS_ONLY_CODES: readonly string[] = [
  'InvalidSetting',
  'PortInUse',
  'ListenFailed',
];
