import fastifyCsrfProtection from '@fastify/csrf-protection';
import fp from 'fastify-plugin';
import { CONSOLE_PATH } from './session.ts';

export const CSRF_COOKIE = 'cww_csrf';

/**
 * CSRF tokens on every form: the secret lives in a signed HttpOnly SameSite=Strict cookie of
 * the browser (so the log-in form has one before any session exists), and a form's token must
 * match it: a page of another site can neither read the token nor send the cookie. Every POST
 * route checks it before its handler runs (app.ts).
 * @see https://github.com/fastify/csrf-protection
 */
export default fp<{ secure: boolean }>(
  async (fastify, { secure }) => {
    await fastify.register(fastifyCsrfProtection, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: CONSOLE_PATH, httpOnly: true, sameSite: 'strict', secure, signed: true },
    });
  },
  { name: 'console-csrf', dependencies: ['console-cookie'] },
);
