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
 * key in constant time. The key is checked first: a request carrying the valid key is never
 * refused here, whatever others did. Every caller is 127.0.0.1, so a limit on failures per
 * address that also refused the right key would let any local program, or any web page's
 * `<img src>` (no Origin header), lock the till out. Failures alone are counted per client
 * address in a fixed window; past the limit a failed attempt is answered 429 instead of 401
 * until the window ends, which bounds the noise and the work a guesser causes. Guessing itself
 * is hopeless: a key has at least 16 printable characters (the generated ones 32 random ones).
 * Browsers from other origins never get here (origin policy first).
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
    const given = req.headers['x-api-key'];
    if (typeof given === 'string' && given !== '' && apiKeyMatches(given, expectedKey())) {
      const locals: AuthenticatedLocals = { apiKey: given, keyFingerprint: keyFingerprint(given) };
      Object.assign(res.locals, locals);
      next();
      return;
    }
    const now = Date.now();
    const window = windowOf(clientAddress(req), now);
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
    window.count += 1;
    next(given === undefined || given === '' ? errors.missingApiKey() : errors.invalidApiKey());
  };
}

/** The socket's peer: X-Forwarded-For and friends are ignored (no proxy sits in front of us). */
export function clientAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}
