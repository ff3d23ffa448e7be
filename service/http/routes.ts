import { Router, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import type { CardAccess } from '../wallet/card-access.ts';
import { readCard } from '../wallet/read-card.ts';
import type { HttpActivity } from './activity.ts';
import { endpointLimit, type Endpoint, type EndpointLimits } from './rate-limits.ts';

export interface RouteDependencies {
  cards: CardAccess;
  authenticate: RequestHandler;
  activity: HttpActivity;
  limits: EndpointLimits;
}

/** The spec's endpoints: each parses, calls one use case, maps the result. */
export function apiRoutes({ cards, authenticate, activity, limits }: RouteDependencies): Router {
  const router = Router();
  const limited = (endpoint: Endpoint) => [
    authenticate,
    endpointLimit(endpoint, limits[endpoint], activity),
  ];

  router.get('/ping', (_req, res) => {
    res.json('pong');
  });

  router.get('/readcard', ...limited('readcard'), async (_req, res) => {
    res.json(await readCard(cards));
  });

  allowOnly(router, { '/ping': ['GET', 'HEAD'], '/readcard': ['GET', 'HEAD'] });
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
