/**
 * The one error type of the service. `code` is the text integrators see in `{ "error": code }`
 * (the spec's codes are kept to the letter); `status` is the HTTP status. Anything thrown that
 * is not an AppError becomes a 500 `UnexpectedError` with no detail in the response.
 */
export class AppError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(code: string, status: number, message?: string, options?: ErrorOptions) {
    super(message ?? code, options);
    this.name = 'AppError';
    this.code = code;
    this.status = status;
  }
}

/** The spec's error codes and the service's own, each with its HTTP status. */
export const errors = {
  missingApiKey: () => new AppError('Unauthorized: missing api key', 401),
  invalidApiKey: () => new AppError('Unauthorized: invalid api key', 401),
  missingCustomer: () => new AppError('Missing customerId from auth flow', 400),
  invalidCreditsOrAmount: (detail?: string) =>
    new AppError('Invalid credits or amount value', 400, detail),
  noCard: (cause?: unknown) => new AppError('NoCard', 400, 'No card on the reader', { cause }),
  authenticationFail: (cause?: unknown) =>
    new AppError('AuthenticationFail', 400, 'The card could not be authenticated', { cause }),
  customerReadError: (cause?: unknown) =>
    new AppError('CustomerReadError', 400, 'The customer record could not be read', { cause }),
  noCredits: () => new AppError('NoCredits', 500, "The shop's credit pool cannot cover it"),
  negativeCredits: () => new AppError('NegativeCredits', 500, 'The card holds a negative balance'),
  errorTrackingDischargeMovement: (cause?: unknown) =>
    new AppError('ErrorTrackingDischargeMovement', 500, undefined, { cause }),
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
  cardBalanceOverflow: () =>
    new AppError('CardBalanceOverflow', 500, 'The new balance does not fit on the card'),
  movementUnsettled: () =>
    new AppError(
      'MovementUnsettled',
      500,
      'An earlier movement on this card could not be settled; the card is not written',
    ),
  ledgerUnavailable: (cause?: unknown) =>
    new AppError('LedgerUnavailable', 500, 'The cloud ledger could not be reached', { cause }),
  cardOperationFailed: (cause?: unknown) =>
    new AppError('CardOperationFailed', 500, 'The card operation failed', { cause }),
  unexpected: () => new AppError('UnexpectedError', 500),
  // Idempotency-Key (the integrator guide explains each).
  invalidIdempotencyKey: () =>
    new AppError('InvalidIdempotencyKey', 400, 'Idempotency-Key must be 1-255 visible ASCII'),
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
  // Several tills of one shop (docs/integrators.md, "Several tills").
  movementPendingAtOtherTill: (detail?: string) =>
    new AppError(
      'MovementPendingAtOtherTill',
      500,
      detail ??
        "This card's last movement at another till is not finished; present the card at that till, or settle it here (POST /cards/settle)",
    ),
  // HTTP framing and the security checks in front of every route.
  forbiddenHost: (host: string | undefined) =>
    new AppError('ForbiddenHost', 403, `Host ${host ?? '(none)'} is not this service`),
  forbiddenOrigin: (origin: string) =>
    new AppError('ForbiddenOrigin', 403, `Origin ${origin} is not on the allowlist`),
  invalidJson: (detail = 'The body is not valid JSON') => new AppError('InvalidJson', 400, detail),
  payloadTooLarge: () => new AppError('PayloadTooLarge', 413),
  unsupportedMediaType: (detail?: string) => new AppError('UnsupportedMediaType', 415, detail),
  requestAborted: () => new AppError('RequestAborted', 400),
  notFound: () => new AppError('NotFound', 404),
  methodNotAllowed: () => new AppError('MethodNotAllowed', 405),
  tooManyEventStreams: () =>
    new AppError('TooManyRequests', 429, 'Too many event streams for this key'),
  // Live settings (the tray window).
  invalidSetting: (problems: string) => new AppError('InvalidSetting', 400, problems),
  portInUse: (port: number) => new AppError('PortInUse', 500, `port ${port} is in use`),
  listenFailed: (port: number, code: string | undefined) =>
    new AppError('ListenFailed', 500, `port ${port}: ${code}`),
  // The card simulator's control API (only when the simulator is on).
  invalidSimulatorRequest: (detail: string) => new AppError('InvalidSimulatorRequest', 400, detail),
  noSimulatedCard: () => new AppError('NoSimulatedCard', 409, 'No simulated card is in the field'),
  simulatedCardExists: (cardId: string) =>
    new AppError('SimulatedCardExists', 409, `Card ${cardId} exists; put it back instead`),
  unknownSimulatedCard: (cardId: string) =>
    new AppError('UnknownSimulatedCard', 404, `The simulator has never seen card ${cardId}`),
} as const;
