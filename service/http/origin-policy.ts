import type { RequestHandler } from 'express';
import { errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { refusalLog } from './refusal-log.ts';

const ALLOWED_METHODS = 'GET, POST';
const ALLOWED_HEADERS = 'X-Api-Key, Content-Type, Idempotency-Key, Pos-Reference, Last-Event-ID';
const EXPOSED_HEADERS = 'RateLimit, RateLimit-Policy, Retry-After, Card-Wallet-Simulator';

/**
 * The exact origin allowlist, checked before anything else happens. A request without Origin
 * comes from a local program (or a browser navigation, which cannot carry X-Api-Key) and goes
 * on. A browser request from an origin on the list gets its own origin echoed back; any other
 * origin, `null` included, gets 403 and no CORS headers, so the browser shows the page nothing
 * and no card or ledger call is made. Preflights are answered here, including Chrome's Private
 * / Local Network Access requests for a loopback address. A refused origin is logged once (per
 * allowlist) with the fix: the page itself sees only a failed fetch, as if nothing listened.
 */
export function originPolicy(allowedOrigins: () => readonly string[], log: Logger): RequestHandler {
  const refused = refusalLog(log);
  return (req, res, next) => {
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined) {
      next();
      return;
    }
    const allowed = allowedOrigins();
    if (!allowed.includes(origin)) {
      refused(`${origin}|${allowed.join(',')}`, () => refusedOrigin(origin, allowed));
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

/** The log line for a refused origin: what the browser page sees, and how to let it in. */
function refusedOrigin(origin: string, allowed: readonly string[]): string {
  const list = allowed.length > 0 ? allowed.join(', ') : 'empty';
  const line = [
    `refused Origin ${origin} (the allowlist: ${list});`,
    'a page there sees only "Failed to fetch", as if the service were down.',
  ];
  // The same page at localhost and at 127.0.0.1 is two origins to a browser.
  const twin = origin.replace(
    /^(https?:\/\/)(localhost|127\.0\.0\.1)(?=[:/]|$)/,
    (_, scheme, host) => `${scheme}${host === 'localhost' ? '127.0.0.1' : 'localhost'}`,
  );
  if (twin !== origin && allowed.includes(twin)) {
    line.push(`The allowlist has ${twin}: open the page there, or add ${origin} too.`);
  } else {
    line.push(`If it is your POS page, add ${origin} in the tray app or with --allowed-origins.`);
  }
  return line.join(' ');
}
