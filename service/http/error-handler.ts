import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, errors } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** Codes of the 401 texts, which may be answered as text/plain (spec section 5). */
const PLAIN_TEXT_ALLOWED = new Set([
  'Unauthorized: missing api key',
  'Unauthorized: invalid api key',
]);

/** Errors that body-parser and express raise, by their `type`, as our own. */
function fromFrameworkError(error: {
  type?: unknown;
  limit?: unknown;
  charset?: unknown;
  encoding?: unknown;
}): AppError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return errors.invalidJson();
    case 'entity.too.large':
      return errors.payloadTooLarge(typeof error.limit === 'number' ? error.limit : undefined);
    case 'encoding.unsupported':
      return errors.unsupportedMediaType(
        `the body must not be compressed (got Content-Encoding ${String(error.encoding)})`,
      );
    case 'charset.unsupported':
      return errors.unsupportedMediaType(
        `the body must be UTF-8 (got charset ${String(error.charset)})`,
      );
    case 'request.aborted':
      return errors.requestAborted();
    default:
      return undefined;
  }
}

/**
 * The one error handler: `{ "error": code }` with the error's status, and its `detail` when it
 * has one; never a stack, a path or a key. Every answer is logged in one line: a 4xx at info
 * (the caller's mistake, with the detail that says what to fix), a 5xx at error with the chain
 * of causes; a stack trace only at debug.
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
    const what = `${req.method} ${req.path} -> ${appError.status} ${appError.code}`;
    if (!known || appError.status >= 500) {
      log.error(`${what}: ${causes(known ?? error)}`);
      const traced = known ? (known.cause ?? known) : error;
      if (traced instanceof Error && traced.stack) log.debug(`${what}: ${traced.stack}`);
    } else {
      log.info(appError.detail ? `${what}: ${oneLine(appError.detail)}` : what);
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
    res.json(
      appError.detail === undefined
        ? { error: appError.code }
        : { error: appError.code, detail: appError.detail },
    );
  };
}

/**
 * No such path. The router is exact (case and trailing slash count), so a near miss of a
 * documented path is named in the detail, and so is a simulator path while it is off.
 */
export function notFound(paths: readonly string[], simulatorOff: boolean): RequestHandler {
  return (req, _res, next) => {
    const near = paths.find(
      (path) => path.toLowerCase() === req.path.toLowerCase().replace(/(.)\/+$/, '$1'),
    );
    const why = near
      ? `did you mean ${near}?`
      : simulatorOff && /^\/simulator(\/|$)/.test(req.path)
        ? "the card simulator's paths exist only with --simulator"
        : 'the paths are in /openapi.json';
    next(errors.notFound(`no such path ${req.path}: ${why}`));
  };
}

/** An error and its causes in one line: "what: why: why that", without stacks. */
function causes(error: unknown): string {
  const messages: string[] = [];
  for (let at = error, depth = 0; at !== undefined && depth < 5; depth += 1) {
    const message = at instanceof Error ? at.message : String(at);
    if (message && !messages.includes(message)) messages.push(message);
    at = at instanceof Error ? at.cause : undefined;
  }
  return oneLine(messages.join(': '));
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}
