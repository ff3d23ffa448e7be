import { ledgerErrorCodes } from '../common/ledger-contract.ts';

/**
 * The one error type of the ledger. `code` is what a client sees in `{ "error": code }`;
 * `status` is the HTTP status; `detail` (4xx only) names the offending field or what is in the way. Anything
 * thrown that is not a LedgerError is answered as a bare 500 `InternalError`.
 */
export class LedgerError extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail: string | undefined;
  /** Sent as `Retry-After` (seconds) with a 429. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: string, status: number, detail?: string, retryAfterSeconds?: number) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'LedgerError';
    this.code = code;
    this.status = status;
    this.detail = detail;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const fromContract =
  (name: keyof typeof ledgerErrorCodes) =>
  (detail?: string): LedgerError =>
    new LedgerError(ledgerErrorCodes[name].code, ledgerErrorCodes[name].status, detail);

/**
 * The LedgerError of a refusal a ledger function answered by its contract code (with the
 * detail it gave), or undefined for a code the contract does not know.
 */
export function contractRefusal(code: string, detail: string | null): LedgerError | undefined {
  const entry = Object.values(ledgerErrorCodes).find((known) => known.code === code);
  return entry && new LedgerError(entry.code, entry.status, detail ?? undefined);
}

/** Every error the ledger raises: contract v1's codes (common/), then the admin CLI's own. */
export const ledgerErrors = {
  missingApiKey: () => fromContract('missingApiKey')(),
  invalidApiKey: () => fromContract('invalidApiKey')(),
  keyNotAssigned: () => fromContract('keyNotAssigned')(),
  invalidMovement: (detail: string) => fromContract('invalidMovement')(detail),
  amountBelowOneCredit: () => fromContract('amountBelowOneCredit')(),
  noCredits: () => fromContract('noCredits')(),
  cardAccountExceeded: () => fromContract('cardAccountExceeded')(),
  cardRecordMismatch: () => fromContract('cardRecordMismatch')(),
  invalidCardId: () =>
    fromContract('invalidCardId')('cardId: must be 8 or 14 uppercase hexadecimal characters'),
  movementIdConflict: () => fromContract('movementIdConflict')(),
  movementNotFound: () => fromContract('movementNotFound')(),
  movementAlreadyVoided: () => fromContract('movementAlreadyVoided')(),
  movementAlreadyPosted: () => fromContract('movementAlreadyPosted')(),
  cardMovementPending: (detail: string) => fromContract('cardMovementPending')(detail),
  movementOfAnotherTill: (detail: string) => fromContract('movementOfAnotherTill')(detail),
  invalidCompensation: (detail: string) => fromContract('invalidCompensation')(detail),
  movementCompensated: (detail: string) => fromContract('movementCompensated')(detail),
  cardStateMovedOn: (detail: string) => fromContract('cardStateMovedOn')(detail),
  floatReportPending: (detail: string) => fromContract('floatReportPending')(detail),
  floatsOff: (detail: string) => fromContract('floatsOff')(detail),
  floatOpen: (detail: string) => fromContract('floatOpen')(detail),
  floatNotFound: () => fromContract('floatNotFound')(),
  floatClosed: (detail: string) => fromContract('floatClosed')(detail),
  floatOfAnotherTill: (detail: string) => fromContract('floatOfAnotherTill')(detail),
  floatRequestConflict: (detail: string) => fromContract('floatRequestConflict')(detail),
  topUpConflict: (detail: string) => fromContract('topUpConflict')(detail),
  invalidReport: (detail: string) => fromContract('invalidReport')(detail),
  notFound: () => fromContract('notFound')(),
  invalidRequest: (detail?: string) => fromContract('invalidRequest')(detail),
  invalidQuery: (detail: string) => fromContract('invalidQuery')(detail),
  invalidHeartbeat: (detail: string) => fromContract('invalidHeartbeat')(detail),
  payloadTooLarge: () => fromContract('payloadTooLarge')(),
  unsupportedMediaType: () => fromContract('unsupportedMediaType')(),
  tooManyRequests: (retryAfterSeconds: number) =>
    new LedgerError(
      ledgerErrorCodes.tooManyRequests.code,
      ledgerErrorCodes.tooManyRequests.status,
      undefined,
      retryAfterSeconds,
    ),
  databaseUnavailable: () => fromContract('databaseUnavailable')(),
  // Admin (CLI) errors: never reach HTTP.
  customerNotFound: (customerId: string) =>
    new LedgerError('CustomerNotFound', 404, `no customer ${customerId}`),
  keyNotFound: () => new LedgerError('KeyNotFound', 404, 'no such api key'),
  keyConflict: (detail: string) => new LedgerError('KeyConflict', 409, detail),
  invalidKey: () =>
    new LedgerError('InvalidKey', 400, 'a key is 16 to 256 visible ASCII characters'),
  invalidSeed: (detail: string) => new LedgerError('InvalidSeed', 400, detail),
  databaseInUse: (detail: string) => new LedgerError('DatabaseInUse', 409, detail),
  cardImportConflict: (detail: string) => new LedgerError('CardImportConflict', 409, detail),
  writeOffBeyondFloat: (detail: string) => new LedgerError('WriteOffBeyondFloat', 422, detail),
  invalidFloatSettings: (detail: string) => new LedgerError('InvalidFloatSettings', 400, detail),
  // The back office (the console, the admin CLI's operator and report commands).
  invalidInput: (detail: string) => new LedgerError('InvalidInput', 400, detail),
  reasonRequired: (action: string) =>
    new LedgerError('ReasonRequired', 400, `${action}: say why (a reason of 1 to 500 characters)`),
  forbidden: (detail: string) => new LedgerError('Forbidden', 403, detail),
  operatorNotFound: (login: string) =>
    new LedgerError('OperatorNotFound', 404, `no operator ${login}`),
  loginTaken: (login: string) => new LedgerError('LoginTaken', 409, `the login ${login} is taken`),
  tillNotFound: (tillId: string) => new LedgerError('TillNotFound', 404, `no till ${tillId}`),
  setupLinkInvalid: () =>
    new LedgerError('SetupLinkInvalid', 404, 'this setup link was used or replaced'),
} as const;
