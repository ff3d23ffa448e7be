import fp from 'fastify-plugin';
import type { Database } from '../../../db/database.ts';
import type { Ledger } from '../../../ledger.ts';
import type { LoginLimits } from '../../../operators/login-limits.ts';
import type { DatabaseSessionStore } from '../../../operators/session-store.ts';

/** The ledger's parts the console's routes use: the database, the contract's use cases. */
export interface Book {
  db: Database;
  ledger: Ledger;
  sessions: DatabaseSessionStore;
  loginLimits: LoginLimits;
  /** Setup links are honoured (standalone: the till's embedded ledger). */
  setupLinks: boolean;
  onSetupLinkUsed: () => void;
  /** Cookies are Secure (the console is served over HTTPS). */
  secureCookies: boolean;
  /** Appended to asset URLs so a new version's files are fetched anew. */
  assetVersion: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    book: Book;
  }
}

export default fp<{ book: Book }>(
  async (fastify, { book }) => {
    fastify.decorate('book', book);
  },
  { name: 'console-book' },
);
