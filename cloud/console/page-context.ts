import type { FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError } from '../errors.ts';
import type { Shop } from '../shops/shops.ts';
import type { Html } from './views/html.ts';
import type { Flash, PageContext } from './views/layout.ts';

/**
 * What a route needs to draw a page for the operator of the request: a CSRF token bound to
 * them, the message the last action left (shown once), the page's path.
 */
export async function pageContext(
  request: FastifyRequest,
  reply: FastifyReply,
  shop: Shop | null,
): Promise<PageContext> {
  const operator = request.operator;
  if (!operator) throw new Error('pageContext needs a logged-in operator');
  const flash = request.session.flash ?? null;
  if (flash) request.session.flash = undefined;
  return {
    operator,
    shop,
    shopCount: operator.role === 'admin' ? Infinity : operator.shops.length,
    csrfToken: reply.generateCsrf(),
    flash,
    path: request.url.split('?')[0] ?? '',
    assetVersion: request.server.book.assetVersion,
  };
}

/** A CSRF token for a form shown before any log-in (log-in, setup). */
export function publicCsrfToken(reply: FastifyReply): string {
  return reply.generateCsrf();
}

export function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.text);
}

/**
 * Runs a form's action and answers with a redirect to `back` (303, so a reload does not post
 * again) carrying what happened. A refusal the operator can mend (bad input, a conflict) is
 * said on that page; not allowed (403), not found (404) and anything unexpected go to the
 * error page.
 */
export async function act(
  request: FastifyRequest,
  reply: FastifyReply,
  back: string,
  run: () => Promise<string>,
): Promise<FastifyReply> {
  let flash: Flash;
  try {
    flash = { kind: 'done', text: await run() };
  } catch (error) {
    if (
      !(error instanceof LedgerError) ||
      error.status >= 500 ||
      error.status === 403 ||
      error.status === 404
    ) {
      throw error;
    }
    flash = { kind: 'problem', text: problemText(error) };
  }
  request.session.flash = flash;
  return reply.redirect(back, 303);
}

export function problemText(error: LedgerError): string {
  return error.detail ? `${error.detail}.` : `${error.code}.`;
}

/** The operator of the request as the audit log names them, with the action's reason. */
export function auditedBy(
  request: FastifyRequest,
  reason?: string | null,
): { actor: { kind: 'operator'; operatorId: string; login: string }; reason: string | null } {
  const operator = request.operator;
  if (!operator) throw new Error('auditedBy needs a logged-in operator');
  return {
    actor: { kind: 'operator', operatorId: operator.id, login: operator.login },
    reason: reason?.trim() || null,
  };
}
