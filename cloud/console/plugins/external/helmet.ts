import fastifyHelmet from '@fastify/helmet';
import fp from 'fastify-plugin';

/**
 * Security headers, with a strict Content-Security-Policy: everything the console loads comes
 * from the ledger itself (no CDN), no inline script or style, no frames, forms post only here.
 * @see https://github.com/fastify/fastify-helmet
 */
export default fp<{ secure: boolean }>(
  async (fastify, { secure }) => {
    await fastify.register(fastifyHelmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'"],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          objectSrc: ["'none'"],
        },
      },
      referrerPolicy: { policy: 'no-referrer' },
      // Over plain HTTP (a till's loopback console) there is no HTTPS to insist on.
      strictTransportSecurity: secure,
    });
  },
  { name: 'console-helmet' },
);
