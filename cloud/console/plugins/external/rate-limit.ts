import fastifyRateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';

export class ConsoleRateLimited extends Error {
  readonly statusCode = 429;
  constructor(readonly retryAfterSeconds: number) {
    super('too many requests');
  }
}

/**
 * Requests per client address (per ledger process): a bound on what any one address can make
 * the console do; the log-in form has a tighter one of its own (routes/auth). Failed log-ins
 * are counted apart, per address and per account (operators/login-limits.ts).
 * @see https://github.com/fastify/fastify-rate-limit
 */
export default fp<{ max: number }>(
  async (fastify, { max }) => {
    await fastify.register(fastifyRateLimit, {
      global: true,
      max,
      timeWindow: '1 minute',
      errorResponseBuilder: (_request, context) =>
        new ConsoleRateLimited(Math.ceil(context.ttl / 1000)),
    });
  },
  { name: 'console-rate-limit' },
);
