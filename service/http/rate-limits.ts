import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { errors } from '../errors.ts';
import type { HttpActivity } from './activity.ts';
import { authenticatedLocals } from './authenticate.ts';

export interface WindowLimit {
  limit: number;
  windowMs: number;
}

export type Endpoint = 'readcard' | 'info' | 'writecard' | 'dischargecard';
export type EndpointLimits = Record<Endpoint, WindowLimit>;

/** The spec's limits (section 8): fixed windows, per endpoint. */
export const ENDPOINT_LIMITS: Readonly<EndpointLimits> = {
  readcard: { limit: 5, windowMs: 10_000 },
  info: { limit: 5, windowMs: 10_000 },
  writecard: { limit: 10, windowMs: 60_000 },
  dischargecard: { limit: 10, windowMs: 60_000 },
};

/** Failed authentications allowed per client address per window. */
export const FAILED_AUTH_LIMIT = { limit: 10, windowMs: 60_000 } as const;

/**
 * A fixed-window limit for one endpoint, counted per API key: every caller is 127.0.0.1, so
 * the address cannot tell two POS programs apart, but their keys can. Mounted after
 * authentication, so only valid keys are counted. Answers 429 `{"error":"TooManyRequests"}`
 * with Retry-After and the IETF RateLimit-Policy / RateLimit headers.
 */
export function endpointLimit(
  endpoint: string,
  window: WindowLimit,
  activity: HttpActivity,
): RequestHandler {
  return rateLimit({
    windowMs: window.windowMs,
    limit: window.limit,
    identifier: endpoint,
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
