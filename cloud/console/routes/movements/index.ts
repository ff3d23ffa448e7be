import type { FastifyPluginAsync } from 'fastify';
import { listAudit } from '../../../audit/audit-log.ts';
import { ledgerErrors } from '../../../errors.ts';
import {
  relatedMovements,
  searchMovements,
  SEARCH_LIMIT,
} from '../../../movements/movement-search.ts';
import { listTills, tillNames } from '../../../tills/tills.ts';
import { pageContext, sendPage } from '../../page-context.ts';
import { parseForm, uuid } from '../../schemas/form.ts';
import { movementQuery } from '../../schemas/movements.ts';
import { page } from '../../views/layout.ts';
import { movementsView, movementView } from '../../views/movements.ts';

/** A shop's movements, filtered, and one movement's history. */
const movementRoutes: FastifyPluginAsync = async (fastify) => {
  const { db, ledger } = fastify.book;

  fastify.get<{ Params: { shopId: string } }>(
    '/shops/:shopId/movements',
    async (request, reply) => {
      const shop = await request.shopFor('manage');
      const query = parseForm(movementQuery, request.query);
      const movements = await searchMovements(db, shop, {
        tillId: query.till?.toLowerCase(),
        cardId: query.card,
        kind: query.kind,
        state: query.state,
        date: query.date,
      });
      const tills = await listTills(db, shop.id);
      const names = new Map(tills.filter((t) => t.name).map((t) => [t.tillId, t.name as string]));
      return sendPage(
        reply,
        page(
          await pageContext(request, reply, shop),
          'Movements',
          movementsView(shop, movements, tills, names, query, SEARCH_LIMIT),
        ),
      );
    },
  );

  fastify.get<{ Params: { shopId: string; id: string } }>(
    '/shops/:shopId/movements/:id',
    async (request, reply) => {
      const shop = await request.shopFor('manage');
      const parsed = uuid.safeParse(request.params.id);
      if (!parsed.success) throw ledgerErrors.notFound();
      const movement = await ledger.getMovement(shop.id, parsed.data);
      const audit = await listAudit(db, { customerIds: [shop.id], subject: movement.id });
      return sendPage(
        reply,
        page(
          await pageContext(request, reply, shop),
          `Movement ${movement.id.slice(0, 8)}`,
          movementView(
            shop,
            movement,
            await tillNames(db, shop.id),
            await relatedMovements(db, shop.id, movement),
            audit,
          ),
        ),
      );
    },
  );
};

export default movementRoutes;
