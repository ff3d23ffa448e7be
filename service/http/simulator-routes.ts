import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import {
  SIMULATED_CARD_TYPES,
  SIMULATOR_FAULTS,
  type CardSimulator,
} from '../card/simulator/card-simulator.ts';
import { MAX_CARD_BALANCE } from '../card/wallet-format.ts';
import { errors } from '../errors.ts';
import { jsonBody } from './json-body.ts';
import { ENDPOINTS, type RateLimitTable, type WindowLimit } from './rate-limits.ts';
import { allowOnly } from './routes.ts';

/** Every answer of a service running the simulator says so: its cards are not real. */
export const SIMULATOR_HEADER = 'Card-Wallet-Simulator';

export function simulatorHeader(): RequestHandler {
  return (_req, res, next) => {
    res.setHeader(SIMULATOR_HEADER, '1');
    next();
  };
}

/** A UID as the simulator takes it: 4 or 7 bytes, hex. */
const uid = z.string().regex(/^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{14})$/, 'must be 8 or 14 hex digits');

/**
 * The control requests, one schema each: the bodies of this API and the arguments of the tray
 * window's simulator channels (main/simulator-ipc.ts), so both accept exactly the same.
 */
export const simulatorRequests = {
  place: z
    .object({
      uid: uid.optional(),
      credits: z.number().int().min(0).max(MAX_CARD_BALANCE).optional(),
      type: z.enum(SIMULATED_CARD_TYPES).optional(),
    })
    .strict(),
  putBack: z.object({ cardId: uid }).strict(),
  takeAway: z.object({}).strict(),
  fault: z
    .object({
      fault: z.enum(SIMULATOR_FAULTS),
      delayMs: z.number().int().min(1).max(60_000).optional(),
    })
    .strict(),
  /** Windows of the endpoints' rate limits, for a POS's integration tests; null: the spec's. */
  rateLimits: z
    .object(
      Object.fromEntries(
        ENDPOINTS.map((endpoint) => [
          endpoint,
          z
            .object({
              limit: z.number().int().min(1).max(100_000),
              windowSeconds: z.number().int().min(1).max(3600),
            })
            .strict()
            .nullable()
            .optional(),
        ]),
      ),
    )
    .strict(),
};

/** The limits in force, as the control API shows them (windows in seconds). */
function rateLimitsOf(table: RateLimitTable) {
  return Object.fromEntries(
    ENDPOINTS.map((endpoint) => {
      const { limit, windowMs } = table.current[endpoint];
      return [endpoint, { limit, windowSeconds: windowMs / 1000 }];
    }),
  );
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw errors.invalidSimulatorRequest(
    `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
  );
}

/**
 * The simulator's control API, mounted only when the simulator is on: the same Host, origin
 * and key checks as every endpoint, no rate limit (a POS test suite calls it often). It alone
 * can set the endpoints' rate limits: a service without the simulator keeps the spec's.
 */
export function simulatorRoutes(
  simulator: CardSimulator,
  authenticate: RequestHandler,
  limits: RateLimitTable,
): Router {
  const router = Router({ strict: true, caseSensitive: true });
  router.get('/simulator', authenticate, (_req, res) => {
    res.json(simulator.status());
  });
  router.post('/simulator/place', authenticate, ...jsonBody(), async (req, res) => {
    res.json(await simulator.place(parse(simulatorRequests.place, req.body)));
  });
  router.post('/simulator/take-away', authenticate, ...jsonBody(), async (req, res) => {
    parse(simulatorRequests.takeAway, req.body);
    await simulator.takeAway();
    res.json(simulator.status());
  });
  router.post('/simulator/put-back', authenticate, ...jsonBody(), async (req, res) => {
    res.json(await simulator.putBack(parse(simulatorRequests.putBack, req.body).cardId));
  });
  router.post('/simulator/fault', authenticate, ...jsonBody(), async (req, res) => {
    const { fault, delayMs } = parse(simulatorRequests.fault, req.body);
    res.json(await simulator.arm(fault, delayMs));
  });
  router.get('/simulator/rate-limits', authenticate, (_req, res) => {
    res.json(rateLimitsOf(limits));
  });
  router.post('/simulator/rate-limits', authenticate, ...jsonBody(), (req, res) => {
    const changes = parse(simulatorRequests.rateLimits, req.body);
    limits.set(
      Object.fromEntries(
        Object.entries(changes).map(([endpoint, window]) => [
          endpoint,
          window && ({ limit: window.limit, windowMs: window.windowSeconds * 1000 } as WindowLimit),
        ]),
      ),
    );
    res.json(rateLimitsOf(limits));
  });
  allowOnly(router, SIMULATOR_METHODS);
  return router;
}

/** The control API's paths and the methods each answers. */
export const SIMULATOR_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/simulator': ['GET', 'HEAD'],
  '/simulator/place': ['POST'],
  '/simulator/take-away': ['POST'],
  '/simulator/put-back': ['POST'],
  '/simulator/fault': ['POST'],
  '/simulator/rate-limits': ['GET', 'HEAD', 'POST'],
};
