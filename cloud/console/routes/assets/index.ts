import type { FastifyPluginAsync } from 'fastify';
import { ledgerErrors } from '../../../errors.ts';
import { consoleAssets } from '../../assets/assets.ts';

/** The console's stylesheet and scripts, public (the log-in page needs them), cached for good. */
const assetRoutes: FastifyPluginAsync = async (fastify) => {
  const { files } = consoleAssets();
  fastify.get<{ Params: { name: string } }>(
    '/assets/:name',
    { config: { public: true } },
    async (request, reply) => {
      const file = files.get(request.params.name);
      if (!file) throw ledgerErrors.notFound();
      void reply
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('ETag', file.etag)
        .type(file.type);
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.send(file.body);
    },
  );
};

export default assetRoutes;
