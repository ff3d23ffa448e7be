import type { RequestHandler } from 'express';
import { errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { refusalLog } from './refusal-log.ts';

/**
 * Refuses a request whose Host is not this service, so a page on a rebound DNS name
 * (evil.example -> 127.0.0.1) cannot read our answers as same-origin. Accepts only the loopback
 * names with the port we listen on. Each refused Host is logged once, with the address to call.
 */
export function hostCheck(currentPort: () => number, log: Logger): RequestHandler {
  const refused = refusalLog(log);
  return (req, _res, next) => {
    const port = currentPort();
    const host = req.headers.host?.toLowerCase();
    const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (host === undefined || !allowed.includes(host)) {
      const url = `http://127.0.0.1:${port}`;
      refused(`${host}|${port}`, () =>
        [
          `refused Host ${host ?? '(none)'}: this service answers only to ${allowed.join(' and ')}`,
          `(a guard against DNS rebinding); call ${url}`,
        ].join(' '),
      );
      next(errors.forbiddenHost(host, url));
      return;
    }
    next();
  };
}
