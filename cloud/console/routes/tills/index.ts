import type { FastifyPluginAsync } from 'fastify';
import { listTills, renameTill } from '../../../tills/tills.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { parseForm, uuid } from '../../schemas/form.ts';
import { tillNameForm } from '../../schemas/tills.ts';
import { page } from '../../views/layout.ts';
import { tillsView } from '../../views/tills.ts';

/** A shop's tills: what each reported, whether it went quiet, and its name. */
const tillRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<{ Params: { shopId: string } }>('/shops/:shopId/tills', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const tills = await listTills(db, shop.id);
    const ctx = await pageContext(request, reply, shop);
    return sendPage(reply, page(ctx, 'Tills', tillsView(ctx, shop, tills, new Date(), true)));
  });

  fastify.post<{ Params: { shopId: string; tillId: string } }>(
    '/shops/:shopId/tills/:tillId/name',
    async (request, reply) => {
      const shop = await request.shopFor('manage');
      const tillId = parseForm(uuid, request.params.tillId).toLowerCase();
      return act(request, reply, `/console/shops/${shop.id}/tills`, async () => {
        const form = parseForm(tillNameForm, request.body);
        await renameTill(db, shop.id, tillId, form.name, auditedBy(request));
        return form.name.trim()
          ? `The till is now called “${form.name.trim()}”.`
          : 'The till’s name is cleared.';
      });
    },
  );
};

export default tillRoutes;
