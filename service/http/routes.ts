import { Router, type RequestHandler } from 'express';
import type { CustomerDirectory } from '../cloud/customer-directory.ts';
import type { LedgerClient } from '../cloud/ledger-client.ts';
import { AppError } from '../errors.ts';
import type { CardAccess } from '../wallet/card-access.ts';
import { customerInfo } from '../wallet/customer-info.ts';
import { readCard } from '../wallet/read-card.ts';
import type { HttpActivity } from './activity.ts';
import { authenticatedLocals } from './authenticate.ts';
import { endpointLimit, type Endpoint, type EndpointLimits } from './rate-limits.ts';

export interface RouteDependencies {
  cards: CardAccess;
  ledger: LedgerClient;
  customers: CustomerDirectory;
  authenticate: RequestHandler;
  activity: HttpActivity;
  limits: EndpointLimits;
}

/** The spec's endpoints: each parses, calls one use case, maps the result. */
export function apiRoutes(deps: RouteDependencies): Router {
  const { cards, ledger, customers, authenticate, activity, limits } = deps;
  const router = Router();
  const limited = (endpoint: Endpoint) => [
    authenticate,
    endpointLimit(endpoint, limits[endpoint], activity),
  ];
  // Every authenticated call is tied to the shop the ledger resolves the key to (spec 1).
  const resolveCustomer: RequestHandler = async (_req, res, next) => {
    res.locals.customer = await customers.resolve(authenticatedLocals(res).apiKey);
    next();
  };

  router.get('/ping', (_req, res) => {
    res.json('pong');
  });

  router.get('/readcard', ...limited('readcard'), resolveCustomer, async (_req, res) => {
    res.json(await readCard(cards));
  });

  router.get('/info', ...limited('info'), async (_req, res) => {
    res.json(await customerInfo(ledger, customers, authenticatedLocals(res).apiKey));
  });

  allowOnly(router, {
    '/ping': ['GET', 'HEAD'],
    '/readcard': ['GET', 'HEAD'],
    '/info': ['GET', 'HEAD'],
  });
  return router;
}

/** 405 with Allow for a known path called with another method. */
function allowOnly(router: Router, methods: Record<string, string[]>): void {
  for (const [path, allowed] of Object.entries(methods)) {
    router.all(path, (_req, res, next) => {
      res.setHeader('Allow', allowed.join(', '));
      next(new AppError('MethodNotAllowed', 405));
    });
  }
}
