import { operations } from './api.ts';

/** An operation of the API, by its OpenAPI operationId (`readCard`, `rechargeCard`, ...). */
export type OperationId = keyof typeof operations;

/** The operations that move money: each is one movement, named by its Idempotency-Key. */
export type MoneyOperation = 'rechargeCard' | 'dischargeCard' | 'undoRecharge';

type ErrorsOf<Op extends OperationId> = (typeof operations)[Op]['errors'];

/** The error codes the API documents for an operation, at one HTTP status or at all of them. */
export type ErrorCode<
  Op extends OperationId,
  Status extends keyof ErrorsOf<Op> = keyof ErrorsOf<Op>,
> = ErrorsOf<Op>[Status] extends readonly (infer Code)[] ? Code : never;

/**
 * Codes the client gives when the service did not answer as documented:
 * - `ServiceUnreachable`: no answer at all, after the retries (nothing listens there, the
 *   connection broke, no answer within the timeout, or, in a browser, the page's origin is
 *   not on the shop's allowlist: browsers report all of these alike). For a recharge or
 *   discharge the outcome is then unknown: `wallet.retry(error)` learns it (the service replays
 *   what happened, or does it now, once).
 * - `UnexpectedAnswer`: an answer that is not this API's (another program on the port?).
 */
export type ClientErrorCode = 'ServiceUnreachable' | 'UnexpectedAnswer';

/**
 * The Idempotency-Key of an operation's error: always there for a recharge or discharge (the
 * movement to retry), never for the other calls.
 */
export type IdempotencyKeyOf<Op extends OperationId> = Op extends MoneyOperation
  ? string
  : undefined;

export interface CardWalletErrorFields<Op extends OperationId> {
  operation: Op;
  status: number;
  code: ErrorCode<Op> | ClientErrorCode;
  detail?: string | undefined;
  retryAfterSeconds?: number | undefined;
  idempotencyKey: IdempotencyKeyOf<Op>;
  cause?: unknown;
}

/** Marks the client's errors, so that two copies of the package (CommonJS and ESM) know each other's. */
const BRAND = Symbol.for('card-wallet-worker-client.CardWalletError');

/**
 * An operation that failed, with the service's documented `code` for it (a union per operation,
 * from docs/openapi.yaml), its HTTP `status` (0 when nothing answered), the service's `detail`
 * when it said what to fix, `retryAfterSeconds` on a 429, and for a recharge or discharge the
 * `idempotencyKey` it was sent with: `wallet.retry(error)` retries that same movement.
 */
export class CardWalletError<Op extends OperationId = OperationId> extends Error {
  readonly operation: Op;
  readonly status: number;
  readonly code: ErrorCode<Op> | ClientErrorCode;
  readonly detail: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly idempotencyKey: IdempotencyKeyOf<Op>;

  constructor(fields: CardWalletErrorFields<Op>) {
    const { method, path } = operations[fields.operation];
    const status = fields.status === 0 ? 'no answer' : String(fields.status);
    super(
      `${method} ${path}: ${status} ${fields.code}${fields.detail ? ` (${fields.detail})` : ''}`,
      { cause: fields.cause },
    );
    this.name = 'CardWalletError';
    this.operation = fields.operation;
    this.status = fields.status;
    this.code = fields.code;
    this.detail = fields.detail;
    this.retryAfterSeconds = fields.retryAfterSeconds;
    this.idempotencyKey = fields.idempotencyKey;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * Whether `error` is a CardWalletError (of `operation`, when given): in a `catch`, this narrows
 * `error.code` to the codes that operation documents, and for a recharge or discharge types
 * `error.idempotencyKey` as present.
 */
export function isCardWalletError<Op extends OperationId = OperationId>(
  error: unknown,
  operation?: Op,
): error is CardWalletError<Op> {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[BRAND] === true &&
    (operation === undefined || (error as CardWalletError).operation === operation)
  );
}

/** Whether `error` is the error of a recharge, a discharge or an undo: a movement `retry` can finish. */
export function isMoneyError(error: unknown): error is CardWalletError<MoneyOperation> {
  return (
    isCardWalletError(error, 'rechargeCard') ||
    isCardWalletError(error, 'dischargeCard') ||
    isCardWalletError(error, 'undoRecharge')
  );
}
