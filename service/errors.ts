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
  // Not named by the spec: 500s with their own clear code (design.md section 6).
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
} as const;
