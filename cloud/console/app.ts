import type { FastifyPluginAsync } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Logger } from '../http/error-handler.ts';
import type { Ledger } from '../ledger.ts';
import { loadConsoleSecret } from '../operators/console-secret.ts';
import { LoginLimits, type LoginLimitsConfig } from '../operators/login-limits.ts';
import { DatabaseSessionStore, type SessionLifetime } from '../operators/session-store.ts';
import { consoleAssets } from './assets/assets.ts';
import { consoleErrorHandler } from './error-handler.ts';
import authentication from './plugins/app/authentication.ts';
import authorization from './plugins/app/authorization.ts';
import book from './plugins/app/book.ts';
import cookie, { LazySigner } from './plugins/external/cookie.ts';
import csrf from './plugins/external/csrf.ts';
import formbody from './plugins/external/formbody.ts';
import helmet from './plugins/external/helmet.ts';
import rateLimit from './plugins/external/rate-limit.ts';
import session from './plugins/external/session.ts';
import accountRoutes from './routes/account/index.ts';
import assetRoutes from './routes/assets/index.ts';
import auditRoutes from './routes/audit/index.ts';
import authRoutes from './routes/auth/index.ts';
import cardAccountRoutes from './routes/card-accounts/index.ts';
import cardRulesRoutes from './routes/card-rules/index.ts';
import cardRoutes from './routes/cards/index.ts';
import keyRoutes from './routes/keys/index.ts';
import movementRoutes from './routes/movements/index.ts';
import peopleRoutes from './routes/people/index.ts';
import reportRoutes from './routes/reports/index.ts';
import settingsRoutes from './routes/settings/index.ts';
import shopRoutes from './routes/shops/index.ts';
import tillRoutes from './routes/tills/index.ts';
import { ledgerErrors } from '../errors.ts';

/** How the console is served (docs/operators.md, "The back office"); every field has a default. */
export interface ConsoleOptions {
  /** Cookies are Secure: the console is served over HTTPS (default false). */
  secureCookies?: boolean;
  /** Setup links are honoured, from the computer itself only (standalone mode; default false). */
  setupLinks?: boolean;
  /** Told when a setup link made its shop's owner (the till then stops showing it). */
  onSetupLinkUsed?: () => void;
  sessionLifetime?: Partial<SessionLifetime>;
  loginLimits?: Partial<LoginLimitsConfig>;
  /** Requests per client address per minute (default 600). */
  requestsPerMinute?: number;
}

/**
 * The operator console at /console: server-rendered pages over the ledger's own database,
 * built the way fastify/demo is: third-party plugins one per file (plugins/external), the
 * console's own parts (plugins/app), a folder of routes per resource and a schema file per
 * resource. It is encapsulated: its cookies, sessions, CSRF, headers, form parser and error
 * pages exist for /console only, and the contract's /v1 routes know nothing of them (an API
 * key never opens the console; a session never opens /v1).
 */
export function consolePlugin(
  deps: { db: Database; ledger: Ledger; log: Logger },
  options: ConsoleOptions = {},
): FastifyPluginAsync {
  return async (console) => {
    const signer = new LazySigner(() => loadConsoleSecret(deps.db));
    const secure = options.secureCookies ?? false;
    // First of all: the secret that signs cookies (read once, on the first console request).
    console.addHook('onRequest', async () => {
      try {
        await signer.ready();
      } catch (error) {
        deps.log.error(`console: reading its secret: ${(error as Error).message}`);
        throw ledgerErrors.databaseUnavailable();
      }
    });
    const sessions = new DatabaseSessionStore(deps.db, options.sessionLifetime);
    await console.register(book, {
      book: {
        db: deps.db,
        ledger: deps.ledger,
        sessions,
        loginLimits: new LoginLimits(options.loginLimits),
        setupLinks: options.setupLinks ?? false,
        onSetupLinkUsed: options.onSetupLinkUsed ?? (() => undefined),
        secureCookies: secure,
        assetVersion: consoleAssets().version,
      },
    });
    await console.register(helmet, { secure });
    await console.register(rateLimit, { max: options.requestsPerMinute ?? 600 });
    await console.register(formbody);
    await console.register(cookie, { signer });
    await console.register(session, { signer, store: sessions, secure });
    await console.register(authentication);
    await console.register(authorization);
    await console.register(csrf, { secure });
    // Every state change is a POST, and every POST carries the form's CSRF token: checked
    // after authentication (which has answered already when there is no session).
    console.addHook('preHandler', (request, reply, done) => {
      if (request.method !== 'POST') return done();
      console.csrfProtection(request, reply, done);
    });
    console.setErrorHandler(consoleErrorHandler(deps.log));
    console.setNotFoundHandler({ preHandler: console.rateLimit() }, () => {
      throw ledgerErrors.notFound();
    });
    for (const routes of [
      assetRoutes,
      authRoutes,
      shopRoutes,
      reportRoutes,
      tillRoutes,
      movementRoutes,
      cardRoutes,
      cardAccountRoutes,
      cardRulesRoutes,
      keyRoutes,
      settingsRoutes,
      peopleRoutes,
      auditRoutes,
      accountRoutes,
    ]) {
      await console.register(routes);
    }
  };
}
