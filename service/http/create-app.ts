import express, { type Express } from 'express';
import type { CustomerDirectory } from '../cloud/customer-directory.ts';
import type { LedgerClient } from '../cloud/ledger-client.ts';
import type { Logger } from '../logger.ts';
import type { CardBlocks } from '../wallet/card-blocks.ts';
import type { CardChanges } from '../wallet/card-changes.ts';
import type { CardHolds } from '../wallet/card-holds.ts';
import type { CardAccess } from '../wallet/card-access.ts';
import type { MovementEngine } from '../wallet/movement-engine.ts';
import type { CardPersonalizer } from '../wallet/personalize-card.ts';
import type { HttpActivity } from './activity.ts';
import { keyFingerprint } from './api-key.ts';
import { authenticate } from './authenticate.ts';
import type { CardEventStream } from './card-events.ts';
import { errorHandler, notFound } from './error-handler.ts';
import { hostCheck } from './host-check.ts';
import { originPolicy } from './origin-policy.ts';
import { RATE_LIMITS, RateLimitTable, type RateLimits } from './rate-limits.ts';
import { API_METHODS, apiRoutes } from './routes.ts';
import { SIMULATOR_METHODS, simulatorHeader, simulatorRoutes } from './simulator-routes.ts';
import type { CardSimulator } from '../card/simulator/card-simulator.ts';

/** Read on every request, so settings saved in the tray apply to the next request. */
export interface HttpSettings {
  apiKey: string;
  allowedOrigins: readonly string[];
}

export interface AppDependencies {
  settings: () => HttpSettings;
  /** The port we listen on, for the Host check (it changes when the tray rebinds). */
  port: () => number;
  cards: CardAccess;
  ledger: LedgerClient;
  customers: CustomerDirectory;
  movements: MovementEngine;
  personalizer: CardPersonalizer;
  /** Recharges of a card holding more than its account at the ledger are refused. */
  refuseCardsAboveAccount: boolean;
  /** The shop's blocked cards and changes waiting for cards, as this till's card list knows them. */
  cardList?: CardBlocks & CardChanges & CardHolds;
  events: CardEventStream;
  activity: HttpActivity;
  log: Logger;
  /** The spec's limits unless a test needs room for more calls. */
  limits?: RateLimits;
  /** The card simulator when it is on: its control routes and header. */
  simulator?: CardSimulator;
}

/** Builds the express app; listening is the server's business (./server.ts). */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // No proxy is ever in front of a loopback service: req.ip is the socket's peer, and a
  // spoofed X-Forwarded-For changes nothing.
  app.set('trust proxy', false);

  app.use((req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    res.on('finish', () => {
      const key = req.headers['x-api-key'];
      deps.activity.emit('request', {
        at: new Date(),
        method: req.method,
        path: req.path,
        status: res.statusCode,
        origin: req.headers.origin ?? null,
        keyFingerprint: typeof key === 'string' && key !== '' ? keyFingerprint(key) : null,
      });
    });
    next();
  });
  if (deps.simulator) app.use(simulatorHeader());
  app.use(originPolicy(() => deps.settings().allowedOrigins, deps.log));
  app.use(hostCheck(deps.port, deps.log));

  const limits = new RateLimitTable(deps.limits ?? RATE_LIMITS);
  const auth = authenticate(() => deps.settings().apiKey, limits.current.failedAuth, deps.activity);
  app.use(
    apiRoutes({
      cards: deps.cards,
      ledger: deps.ledger,
      customers: deps.customers,
      movements: deps.movements,
      personalizer: deps.personalizer,
      refuseCardsAboveAccount: deps.refuseCardsAboveAccount,
      ...(deps.cardList ? { cardList: deps.cardList } : {}),
      events: deps.events,
      authenticate: auth,
      activity: deps.activity,
      limits,
    }),
  );

  if (deps.simulator) app.use(simulatorRoutes(deps.simulator, auth, limits));

  const paths = Object.keys({ ...API_METHODS, ...(deps.simulator ? SIMULATOR_METHODS : {}) });
  app.use(notFound(paths, !deps.simulator));
  app.use(errorHandler(deps.log));
  return app;
}
