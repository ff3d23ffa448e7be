/**
 * The one error type of the ledger. `code` is what a client sees in `{ "error": code }`;
 * `status` is the HTTP status; `detail` (only for 400s) names the offending field. Anything
 * thrown that is not a LedgerError is answered as a bare 500 `InternalError`.
 */
export class LedgerError extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail: string | undefined;

  constructor(code: string, status: number, detail?: string) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'LedgerError';
    this.code = code;
    this.status = status;
    this.detail = detail;
  }
}

/** Every error code of contract v1, with its HTTP status. */
export const ledgerErrors = {
  missingApiKey: () => new LedgerError('Unauthorized: missing api key', 401),
  invalidApiKey: () => new LedgerError('Unauthorized: invalid api key', 401),
  keyNotAssigned: () => new LedgerError('KeyNotAssigned', 403),
  invalidMovement: (detail: string) => new LedgerError('InvalidMovement', 400, detail),
  amountBelowOneCredit: () => new LedgerError('AmountBelowOneCredit', 422),
  noCredits: () => new LedgerError('NoCredits', 422),
  movementIdConflict: () => new LedgerError('MovementIdConflict', 409),
  movementNotFound: () => new LedgerError('MovementNotFound', 404),
  movementAlreadyVoided: () => new LedgerError('MovementAlreadyVoided', 409),
  movementAlreadyPosted: () => new LedgerError('MovementAlreadyPosted', 409),
  notFound: () => new LedgerError('NotFound', 404),
  invalidRequest: () => new LedgerError('InvalidRequest', 400),
  payloadTooLarge: () => new LedgerError('PayloadTooLarge', 413),
  unsupportedMediaType: () => new LedgerError('UnsupportedMediaType', 415),
  databaseUnavailable: () => new LedgerError('DatabaseUnavailable', 503),
  // Admin (CLI) errors: never reach HTTP.
  customerNotFound: (customerId: string) =>
    new LedgerError('CustomerNotFound', 404, `no customer ${customerId}`),
  keyNotFound: () => new LedgerError('KeyNotFound', 404, 'no such api key'),
  keyConflict: (detail: string) => new LedgerError('KeyConflict', 409, detail),
  databaseInUse: (detail: string) => new LedgerError('DatabaseInUse', 409, detail),
} as const;
