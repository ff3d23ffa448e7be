import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, errors } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** Codes of the 401 texts, which may be answered as text/plain (spec section 5). */
const PLAIN_TEXT_ALLOWED = new Set([
  'Unauthorized: missing api key',
  'Unauthorized: invalid api key',
]);

/** Errors that body-parser and express raise, by their `type`, as our own. */
function fromFrameworkError(error: { type?: unknown; status?: unknown }): AppError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return errors.invalidJson();
    case 'entity.too.large':
      return errors.payloadTooLarge();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return errors.unsupportedMediaType();
    case 'request.aborted':
      return errors.requestAborted();
    default:
      return undefined;
  }
}

/**
 * The one error handler: `{ "error": code }` with the error's status, never a stack, a path or
 * a key. Unexpected errors are logged here and answered as a bare 500.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const known =
      error instanceof AppError
        ? error
        : typeof error === 'object' && error !== null
          ? fromFrameworkError(error)
          : undefined;
    const appError = known ?? errors.unexpected();
    if (!known || appError.status >= 500) {
      const cause = known ? (appError.cause ?? appError) : error;
      log.error(`${req.method} ${req.path} -> ${appError.code}: ${describe(cause)}`);
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(appError.status);
    if (
      PLAIN_TEXT_ALLOWED.has(appError.code) &&
      req.accepts(['application/json', 'text/plain']) === 'text/plain'
    ) {
      res.type('text/plain').send(appError.code);
      return;
    }
    res.json({ error: appError.code });
  };
}

export function notFound(): RequestHandler {
  return (_req, _res, next) => next(errors.notFound());
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}
