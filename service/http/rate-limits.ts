import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { errors } from '../errors.ts';
import type { HttpActivity } from './activity.ts';
import { authenticatedLocals } from './authenticate.ts';

export interface WindowLimit {
  limit: number;
  windowMs: number;
}

export type Endpoint =
  'readcard' | 'info' | 'writecard' | 'dischargecard' | 'personalize' | 'settle';
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
  failedAuth: { limit: 10, windowMs: 60_000 },
};

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
