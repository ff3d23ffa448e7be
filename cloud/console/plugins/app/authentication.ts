import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { findOperator, type Operator } from '../../../operators/operators.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator of the request's session, once checked still there and enabled. */
    operator: Operator | null;
  }
  interface FastifyContextConfig {
    /** Open without a session (log-in, setup, assets). */
    public?: boolean;
    /** Open to an operator who must choose a new password first (account, log-out). */
    beforeNewPassword?: boolean;
  }
}

/** The console's own URL for a path the operator asked for, else the start page. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/console(\/[\w\-./]*)?(\?[\w\-.=&%]*)?$/.test(next)
    ? next
    : '/console';
}

/**
 * Every console request but the public ones needs a session of an operator who still exists
 * and is enabled: without one, a page is answered with the log-in page's address (303), and
 * anything else with 401, before its handler or body is looked at. An operator whose password
 * was reset must choose a new one before anything else. An API key opens nothing here.
 */
export default fp(
  async (fastify) => {
    fastify.decorateRequest('operator', null);
    fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const operatorId = request.session.operatorId;
      if (operatorId !== undefined) {
        const operator = await findOperator(fastify.book.db, { id: operatorId });
        if (operator && operator.disabledAt === null) {
          request.operator = operator;
        } else {
          await request.session.destroy();
        }
      }
      const config = request.routeOptions.config;
      if (config.public) return;
      if (!request.operator) {
        if (request.method === 'GET' || request.method === 'HEAD') {
          const next = encodeURIComponent(request.url);
          return reply.redirect(`/console/login?next=${next}`, 303);
        }
        return reply.code(401).type('text/plain; charset=utf-8').send('Log in first.');
      }
      if (request.operator.mustChangePassword && !config.beforeNewPassword) {
        return reply.redirect('/console/account', 303);
      }
    });
  },
  { name: 'console-authentication', dependencies: ['console-session', 'console-book'] },
);
