import type { RequestHandler } from 'express';
import { errors } from '../errors.ts';

const ALLOWED_METHODS = 'GET, POST';
const ALLOWED_HEADERS = 'X-Api-Key, Content-Type, Idempotency-Key, Last-Event-ID';
const EXPOSED_HEADERS = 'RateLimit, RateLimit-Policy, Retry-After, Card-Wallet-Simulator';

/**
 * The exact origin allowlist, checked before anything else happens. A request without Origin
 * comes from a local program (or a browser navigation, which cannot carry X-Api-Key) and goes
 * on. A browser request from an origin on the list gets its own origin echoed back; any other
 * origin, `null` included, gets 403 and no CORS headers, so the browser shows the page nothing
 * and no card or ledger call is made. Preflights are answered here, including Chrome's Private
 * / Local Network Access requests for a loopback address.
 */
export function originPolicy(allowedOrigins: () => readonly string[]): RequestHandler {
  return (req, res, next) => {
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined) {
      next();
      return;
    }
    if (!allowedOrigins().includes(origin)) {
      next(errors.forbiddenOrigin(origin));
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      if (req.headers['access-control-request-private-network'] === 'true') {
        res.setHeader('Access-Control-Allow-Private-Network', 'true');
      }
      if (req.headers['access-control-request-local-network'] === 'true') {
        res.setHeader('Access-Control-Allow-Local-Network', 'true');
      }
      res.status(204).end();
      return;
    }
    next();
  };
}
