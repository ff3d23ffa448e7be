import type { ErrorRequestHandler, RequestHandler } from 'express';
import { LedgerError, ledgerErrors } from '../errors.ts';

export interface Logger {
  error(message: string): void;
}

/** body-parser's errors, by their `type`, as ledger errors. */
function fromFrameworkError(error: { type?: unknown }): LedgerError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return ledgerErrors.invalidMovement('body: not valid JSON');
    case 'entity.too.large':
      return ledgerErrors.payloadTooLarge();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return ledgerErrors.unsupportedMediaType();
    case 'request.aborted':
    case 'request.size.invalid':
      return new LedgerError('InvalidRequest', 400);
    default:
      return undefined;
  }
}

/**
 * The one error handler: `{ "error": code }` (plus `detail` on a 400), never a stack. Anything
 * unexpected is logged here and answered 500 `InternalError`.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const known =
      error instanceof LedgerError
        ? error
        : typeof error === 'object' && error !== null
          ? fromFrameworkError(error)
          : undefined;
    if (!known || known.status >= 500) {
      log.error(`${req.method} ${req.path} failed: ${describe(error)}`);
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (!known) {
      res.status(500).json({ error: 'InternalError' });
      return;
    }
    res
      .status(known.status)
      .json(
        known.status === 400 && known.detail
          ? { error: known.code, detail: known.detail }
          : { error: known.code },
      );
  };
}

export function notFound(): RequestHandler {
  return (_req, _res, next) => next(ledgerErrors.notFound());
}

/** A POST that carries a body must say it is JSON (415 otherwise). */
export function requireJsonBody(): RequestHandler {
  return (req, _res, next) => {
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      Number(req.headers['content-length'] ?? 0) > 0;
    if (req.method === 'POST' && hasBody && !req.is('application/json')) {
      next(ledgerErrors.unsupportedMediaType());
      return;
    }
    next();
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}
