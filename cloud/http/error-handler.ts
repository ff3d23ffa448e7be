import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError, ledgerErrors } from '../errors.ts';

export interface Logger {
  error(message: string): void;
}

/** Fastify's own request errors (body size, media type, framing), as ledger errors. */
function fromFrameworkError(error: Partial<FastifyError>): LedgerError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ledgerErrors.payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ledgerErrors.unsupportedMediaType();
    default: {
      const status = error.statusCode ?? 500;
      return status >= 400 && status < 500 ? ledgerErrors.invalidRequest() : undefined;
    }
  }
}

/**
 * The one error handler: `{ "error": code }` (plus `detail` on a 4xx that has one), never a stack. Anything
 * unexpected is logged here and answered 500 `InternalError`.
 */
export function errorHandler(
  log: Logger,
): (error: unknown, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (error, request, reply) => {
    const known =
      error instanceof LedgerError
        ? error
        : typeof error === 'object' && error !== null
          ? fromFrameworkError(error)
          : undefined;
    if (!known || known.status >= 500) {
      log.error(`${request.method} ${request.url.split('?')[0]} failed: ${describe(error)}`);
    }
    if (!known) return reply.code(500).send({ error: 'InternalError' });
    if (known.retryAfterSeconds !== undefined) {
      void reply.header('Retry-After', String(known.retryAfterSeconds));
    }
    return reply
      .code(known.status)
      .send(
        known.status < 500 && known.detail
          ? { error: known.code, detail: known.detail }
          : { error: known.code },
      );
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}
