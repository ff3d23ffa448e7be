import fastifyFormbody from '@fastify/formbody';
import fp from 'fastify-plugin';

/**
 * The console's forms post application/x-www-form-urlencoded, and only that: the ledger's JSON
 * parser is taken away here, so the console's routes see nothing else.
 * @see https://github.com/fastify/fastify-formbody
 */
export default fp(
  async (fastify) => {
    fastify.removeAllContentTypeParsers();
    await fastify.register(fastifyFormbody);
  },
  { name: 'console-formbody' },
);
