import type { Request, RequestHandler, Response } from 'express';
import { errors } from '../errors.ts';
import type { HttpActivity } from './activity.ts';
import { apiKeyMatches, keyFingerprint } from './api-key.ts';

/** What authentication leaves on `res.locals` for the routes and the rate limiters. */
export interface AuthenticatedLocals {
  apiKey: string;
  keyFingerprint: string;
}

export function authenticatedLocals(res: Response): AuthenticatedLocals {
  const { apiKey, keyFingerprint } = res.locals as Partial<AuthenticatedLocals>;
  if (apiKey === undefined || keyFingerprint === undefined) {
    throw new Error('route mounted without authenticate()');
  }
  return { apiKey, keyFingerprint };
}

export interface FailedAuthLimit {
  limit: number;
  windowMs: number;
}

/**
 * Checks `X-Api-Key` (the header only: never a query, body or cookie) against the configured
 * key in constant time. Failed attempts are counted per client address in a fixed window; past
 * the limit every authenticated call from that address gets 429 until the window ends, so a key
 * cannot be guessed at speed. Browsers from other origins never get here (origin policy first).
 */
export function authenticate(
  expectedKey: () => string,
  failedAuth: FailedAuthLimit,
  activity: HttpActivity,
): RequestHandler {
  const failures = new Map<string, { count: number; resetAt: number }>();

  const windowOf = (address: string, now: number) => {
    let window = failures.get(address);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + failedAuth.windowMs };
      failures.set(address, window);
    }
    return window;
  };

  return (req, res, next) => {
    const now = Date.now();
    const address = clientAddress(req);
    const window = windowOf(address, now);
    if (window.count >= failedAuth.limit) {
      res.setHeader('Retry-After', String(Math.ceil((window.resetAt - now) / 1000)));
      activity.emit('rate-limited', {
        at: new Date(now),
        endpoint: req.path,
        scope: 'address',
        keyFingerprint: null,
        origin: req.headers.origin ?? null,
      });
      next(errors.tooManyRequests());
      return;
    }
    const given = req.headers['x-api-key'];
    if (given === undefined || given === '') {
      window.count += 1;
      next(errors.missingApiKey());
      return;
    }
    if (typeof given !== 'string' || !apiKeyMatches(given, expectedKey())) {
      window.count += 1;
      next(errors.invalidApiKey());
      return;
    }
    const locals: AuthenticatedLocals = { apiKey: given, keyFingerprint: keyFingerprint(given) };
    Object.assign(res.locals, locals);
    next();
  };
}

/** The socket's peer: X-Forwarded-For and friends are ignored (no proxy sits in front of us). */
export function clientAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}
