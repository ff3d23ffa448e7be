import type { FastifyPluginAsync } from 'fastify';
import { listAudit } from '../../../audit/audit-log.ts';
import { pageContext, sendPage } from '../../page-context.ts';
import { auditQuery } from '../../schemas/audit.ts';
import { parseForm } from '../../schemas/form.ts';
import { auditView } from '../../views/audit.ts';
import { page } from '../../views/layout.ts';

const PAGE_ROWS = 100;

/** The shop's rows of the audit log, newest first, a hundred at a time. */
const auditRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<{ Params: { shopId: string } }>('/shops/:shopId/audit', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const { before } = parseForm(auditQuery, request.query);
    const rows = await listAudit(db, {
      customerIds: [shop.id],
      beforeSeq: before,
      limit: PAGE_ROWS,
    });
    const last = rows[rows.length - 1];
    const older =
      rows.length === PAGE_ROWS && last
        ? `/console/shops/${shop.id}/audit?before=${last.seq}`
        : null;
    return sendPage(
      reply,
      page(
        await pageContext(request, reply, shop),
        'Audit log',
        auditView(rows, shop.timeZone, older),
      ),
    );
  });
};

export default auditRoutes;
