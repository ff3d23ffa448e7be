import type { FastifyRequest } from 'fastify';
import { ledgerErrors } from '../errors.ts';

type Done = (error: Error | null, value?: unknown) => void;

/**
 * The body parser of `application/json` requests (the only type the ledger reads; any other is
 * 415). An empty body is no body, as for a POST to `/post` or `/void` that sends the header
 * anyway. Bodies must be UTF-8 and not compressed (415); JSON that does not parse is 400
 * InvalidMovement, the movement body being the one body of contract v1.
 */
export function parseJsonBody(request: FastifyRequest, body: string, done: Done): void {
  const encoding = request.headers['content-encoding'];
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(
    request.headers['content-type'] ?? '',
  )?.[1];
  if (
    (encoding !== undefined && encoding.toLowerCase() !== 'identity') ||
    (charset !== undefined && !/^utf-?8$/i.test(charset))
  ) {
    done(ledgerErrors.unsupportedMediaType());
    return;
  }
  if (body === '') {
    done(null, undefined);
    return;
  }
  try {
    done(null, JSON.parse(body));
  } catch {
    done(ledgerErrors.invalidMovement('body: not valid JSON'));
  }
}

/**
 * Every other content type: an empty body is no body, whatever type it claims (axios sends
 * `application/x-www-form-urlencoded` with a bodiless POST, and that is the worker's
 * `/post` and `/void`); anything else is 415, refused unread.
 */
export function refuseOtherBody(request: FastifyRequest, _payload: unknown, done: Done): void {
  if (request.headers['content-length'] === '0' && !request.headers['transfer-encoding']) {
    done(null, undefined);
    return;
  }
  done(ledgerErrors.unsupportedMediaType());
}
