import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError } from '../errors.ts';
import type { Logger } from '../http/error-handler.ts';
import { pageContext, sendPage } from './page-context.ts';
import { ConsoleRateLimited } from './plugins/external/rate-limit.ts';
import { errorBody, errorTitle } from './views/error.ts';
import { page, publicPage } from './views/layout.ts';

/** What the operator is told, by what went wrong; never a stack or an internal message. */
function describe(error: unknown): { status: number; text: string; retryAfter?: number } {
  if (error instanceof ConsoleRateLimited) {
    return {
      status: 429,
      text: `Too many requests from here. Wait ${error.retryAfterSeconds} s and try again.`,
      retryAfter: error.retryAfterSeconds,
    };
  }
  if (error instanceof LedgerError) {
    if (
      error.code === 'NotFound' ||
      error.code === 'CustomerNotFound' ||
      error.code === 'MovementNotFound'
    ) {
      return { status: 404, text: 'There is nothing here, or nothing you may see.' };
    }
    if (error.status < 500) {
      return { status: error.status, text: error.detail ? `${error.detail}.` : error.code };
    }
    return {
      status: error.status,
      text: 'The ledger could not do this now. Try again in a moment.',
    };
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.code?.startsWith('FST_CSRF_')) {
    return {
      status: 403,
      text: 'This form was out of date, or it came from another site. Reload the page and try again.',
    };
  }
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return { status, text: 'The request was not one this page can take.' };
  return { status: 500, text: 'Something went wrong on our side; it is in the ledger’s log.' };
}

/** The console's one error handler: an HTML page with the status, for every route. */
export function consoleErrorHandler(log: Logger) {
  return async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, text, retryAfter } = describe(error);
    if (status >= 500) {
      log.error(
        `console ${request.method} ${request.url.split('?')[0]} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
    if (retryAfter !== undefined) void reply.header('Retry-After', String(retryAfter));
    const title = errorTitle(status);
    if (request.operator && status !== 401) {
      try {
        const ctx = await pageContext(request, reply, null);
        return sendPage(reply, page(ctx, title, errorBody(text, true)), status);
      } catch {
        // A page for someone logged in needs the session; without it, the plain page below.
      }
    }
    return sendPage(
      reply,
      publicPage(title, request.server.book.assetVersion, errorBody(text, false)),
      status,
    );
  };
}
