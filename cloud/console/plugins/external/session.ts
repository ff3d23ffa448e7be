import fastifySession, { type SessionStore } from '@fastify/session';
import fp from 'fastify-plugin';
import type { DatabaseSessionStore } from '../../../operators/session-store.ts';
import type { LazySigner } from './cookie.ts';

declare module 'fastify' {
  interface Session {
    /** The operator logged in on this session. */
    operatorId?: string;
    /** A message for the next page (after a redirect). */
    flash?: { kind: 'done' | 'problem'; text: string };
  }
}

export const SESSION_COOKIE = 'cww_session';
export const CONSOLE_PATH = '/console';

/**
 * Server-side sessions in the ledger's database (operators/session-store.ts): the cookie holds
 * only a signed random id; HttpOnly, SameSite=Strict, for /console only, Secure when the
 * console is served over HTTPS. No session is stored before a log-in.
 * @see https://github.com/fastify/session
 */
export default fp<{ signer: LazySigner; store: DatabaseSessionStore; secure: boolean }>(
  async (fastify, { signer, store, secure }) => {
    await fastify.register(fastifySession, {
      secret: signer,
      // The store's callbacks carry what @fastify/session saved: its own Session, as JSON.
      store: store as unknown as SessionStore,
      cookieName: SESSION_COOKIE,
      saveUninitialized: false,
      rolling: true,
      cookie: { path: CONSOLE_PATH, httpOnly: true, sameSite: 'strict', secure },
    });
  },
  { name: 'console-session', dependencies: ['console-cookie'] },
);
