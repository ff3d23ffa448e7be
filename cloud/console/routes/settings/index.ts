import type { FastifyPluginAsync } from 'fastify';
import { setTillQuietMinutes, setTimeZone } from '../../../shops/shops.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { parseForm } from '../../schemas/form.ts';
import { tillQuietForm, timeZoneForm } from '../../schemas/settings.ts';
import { page } from '../../views/layout.ts';
import { settingsView } from '../../views/settings.ts';

type ShopParams = { Params: { shopId: string } };

/** The shop's time zone (its local day) and how long a till may stay quiet. */
const settingsRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<ShopParams>('/shops/:shopId/settings', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const ctx = await pageContext(request, reply, shop);
    return sendPage(reply, page(ctx, 'Settings', settingsView(ctx, shop)));
  });

  fastify.post<ShopParams>('/shops/:shopId/settings/time-zone', async (request, reply) => {
    const shop = await request.shopFor('manage');
    return act(request, reply, `/console/shops/${shop.id}/settings`, async () => {
      const form = parseForm(timeZoneForm, request.body);
      const changed = await setTimeZone(db, shop.id, form.timeZone, auditedBy(request));
      return `The shop's day is now counted in ${changed.timeZone}.`;
    });
  });

  fastify.post<ShopParams>('/shops/:shopId/settings/till-quiet', async (request, reply) => {
    const shop = await request.shopFor('manage');
    return act(request, reply, `/console/shops/${shop.id}/settings`, async () => {
      const form = parseForm(tillQuietForm, request.body);
      const changed = await setTillQuietMinutes(
        db,
        shop.id,
        Number(form.minutes),
        auditedBy(request),
      );
      return `A till is marked quiet after ${changed.tillQuietMinutes} minutes without a word.`;
    });
  });
};

export default settingsRoutes;
