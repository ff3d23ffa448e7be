import type { RequestHandler } from 'express';
import { errors } from '../errors.ts';

/**
 * Refuses a request whose Host is not this service, so a page on a rebound DNS name
 * (evil.example -> 127.0.0.1) cannot read our answers as same-origin. Accepts only the loopback
 * names with the port we listen on.
 */
export function hostCheck(currentPort: () => number): RequestHandler {
  return (req, _res, next) => {
    const port = currentPort();
    const host = req.headers.host?.toLowerCase();
    const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (host === undefined || !allowed.includes(host)) {
      next(errors.forbiddenHost(host));
      return;
    }
    next();
  };
}
