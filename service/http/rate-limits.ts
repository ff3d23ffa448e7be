import type { RequestHandler } from 'express';
import { MemoryStore, rateLimit, type RateLimitRequestHandler } from 'express-rate-limit';
import { errors } from '../errors.ts';
import type { HttpActivity } from './activity.ts';
import { authenticatedLocals } from './authenticate.ts';

export interface WindowLimit {
  limit: number;
  windowMs: number;
}

export type Endpoint =
  | 'readcard'
  | 'info'
  | 'writecard'
  | 'dischargecard'
  | 'personalize'
  | 'settle'
  | 'undo'
  | 'movements'
  | 'quote'
  | 'holder';
/** Per-key windows of each endpoint, and the per-address window of failed authentications. */
export type RateLimits = Record<Endpoint | 'failedAuth', WindowLimit>;

/**
 * The spec's limits (section 8): fixed windows, per endpoint and API key. Failed
 * authentications: 10 per minute per client address.
 */
export const RATE_LIMITS: Readonly<RateLimits> = {
  readcard: { limit: 5, windowMs: 10_000 },
  info: { limit: 5, windowMs: 10_000 },
  writecard: { limit: 10, windowMs: 60_000 },
  dischargecard: { limit: 10, windowMs: 60_000 },
  personalize: { limit: 10, windowMs: 60_000 },
  settle: { limit: 10, windowMs: 60_000 },
  /** `POST /cards/undo`: a cashier's undo, as often as a recharge. */
  undo: { limit: 10, windowMs: 60_000 },
  /** `GET /movements`: each lookup may ask the ledger (docs/integrators.md, "Receipts"). */
  movements: { limit: 30, windowMs: 60_000 },
  /** `GET /quote`: each asks the ledger (docs/integrators.md, "Bonus tiers"). */
  quote: { limit: 30, windowMs: 60_000 },
  holder: { limit: 10, windowMs: 60_000 },
  failedAuth: { limit: 10, windowMs: 60_000 },
};

/** The endpoints whose limits a test suite may set on a service running the card simulator. */
export const ENDPOINTS = Object.keys(RATE_LIMITS).filter(
  (name): name is Endpoint => name !== 'failedAuth',
);

/**
 * The limits in force. They are the spec's and nothing changes them, except on a service
 * running the card simulator, whose control API lets a POS's integration tests set them
 * (POST /simulator/rate-limits): the table is handed to nothing else.
 */
export class RateLimitTable {
  readonly #initial: RateLimits;
  #limits: RateLimits;

  constructor(limits: RateLimits) {
    this.#initial = limits;
    this.#limits = { ...limits };
  }

  get current(): Readonly<RateLimits> {
    return this.#limits;
  }

  /** Sets the windows given (null: back to the one the service started with). */
  set(changes: Partial<Record<Endpoint, WindowLimit | null>>): void {
    const next = { ...this.#limits };
    for (const endpoint of ENDPOINTS) {
      const change = changes[endpoint];
      if (change !== undefined) next[endpoint] = change ?? this.#initial[endpoint];
    }
    this.#limits = next;
  }
}

/**
 * A fixed-window limit for one endpoint, counted per API key: every caller is 127.0.0.1, so
 * the address cannot tell two POS programs apart, but their keys can. Mounted after
 * authentication, so only valid keys are counted. Answers 429 `{"error":"TooManyRequests"}`
 * with Retry-After and the IETF RateLimit-Policy / RateLimit headers. A window set anew in the
 * table starts counting afresh.
 */
export function endpointLimit(
  endpoint: Endpoint,
  table: RateLimitTable,
  activity: HttpActivity,
): RequestHandler {
  let built: { window: WindowLimit; handler: RateLimitRequestHandler; store: MemoryStore };
  const build = (window: WindowLimit) => {
    const store = new MemoryStore();
    return { window, store, handler: windowLimit(endpoint, window, store, activity) };
  };
  built = build(table.current[endpoint]);
  return (req, res, next) => {
    const window = table.current[endpoint];
    if (window !== built.window) {
      built.store.shutdown();
      built = build(window);
    }
    return built.handler(req, res, next);
  };
}

function windowLimit(
  endpoint: Endpoint,
  window: WindowLimit,
  store: MemoryStore,
  activity: HttpActivity,
): RateLimitRequestHandler {
  return rateLimit({
    windowMs: window.windowMs,
    limit: window.limit,
    identifier: endpoint,
    store,
    // A window set through the simulator's control API is built while a request runs.
    validate: { creationStack: false },
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => authenticatedLocals(res).keyFingerprint,
    handler: (req, res, next) => {
      activity.emit('rate-limited', {
        at: new Date(),
        endpoint: `/${endpoint}`,
        scope: 'key',
        keyFingerprint: authenticatedLocals(res).keyFingerprint,
        origin: req.headers.origin ?? null,
      });
      next(errors.tooManyRequests());
    },
  });
}
