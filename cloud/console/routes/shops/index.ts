import type { FastifyPluginAsync } from 'fastify';
import { heldCounts } from '../../../cards/held-and-flagged.ts';
import { dayReport } from '../../../reports/day-report.ts';
import { listShops, shopToday } from '../../../shops/shops.ts';
import { listTills } from '../../../tills/tills.ts';
import { pageContext, sendPage } from '../../page-context.ts';
import { page } from '../../views/layout.ts';
import { shopListView, shopOverview } from '../../views/shops.ts';

type ShopParams = { Params: { shopId: string } };

/** The start page, the list of shops, and a shop's page: today and its tills at a glance. */
const shopRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get('/', async (request, reply) => {
    const operator = request.operator!;
    const [only] = operator.shops;
    if (operator.role !== 'admin' && operator.shops.length === 1 && only) {
      return reply.redirect(
        operator.role === 'staff' ? `/console/shops/${only}/day` : `/console/shops/${only}`,
        303,
      );
    }
    return reply.redirect('/console/shops', 303);
  });

  fastify.get('/shops', async (request, reply) => {
    const operator = request.operator!;
    const shops = await listShops(db, operator.role === 'admin' ? null : operator.shops);
    return sendPage(
      reply,
      page(await pageContext(request, reply, null), 'Shops', shopListView(shops)),
    );
  });

  fastify.get<ShopParams>('/shops/:shopId', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const today = await dayReport(db, shop, await shopToday(db, shop));
    const tills = await listTills(db, shop.id);
    const held = await heldCounts(db, shop.id);
    return sendPage(
      reply,
      page(
        await pageContext(request, reply, shop),
        'Today',
        shopOverview(shop, today, tills, held, new Date()),
      ),
    );
  });
};

export default shopRoutes;
