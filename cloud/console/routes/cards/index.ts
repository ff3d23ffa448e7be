import type { FastifyPluginAsync } from 'fastify';
import { resolveByOperator } from '../../../admin.ts';
import { heldAndFlagged } from '../../../cards/held-and-flagged.ts';
import { tillNames } from '../../../tills/tills.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { parseForm, uuid } from '../../schemas/form.ts';
import { decideForm } from '../../schemas/movements.ts';
import { cardsView } from '../../views/cards.ts';
import { page } from '../../views/layout.ts';

/**
 * Held and flagged cards, and the operator's decision without the card (what `movements
 * post|void --evidence` does at the CLI): the evidence is kept with the movement and is the
 * audit log row's reason.
 */
const cardRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<{ Params: { shopId: string } }>('/shops/:shopId/cards', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const held = await heldAndFlagged(db, shop.id);
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(
        ctx,
        'Held & flagged cards',
        cardsView(ctx, shop, held, await tillNames(db, shop.id), new Date()),
      ),
    );
  });

  fastify.post<{ Params: { shopId: string; id: string } }>(
    '/shops/:shopId/movements/:id/decide',
    async (request, reply) => {
      const shop = await request.shopFor('manage');
      const id = parseForm(uuid, request.params.id).toLowerCase();
      return act(request, reply, `/console/shops/${shop.id}/cards`, async () => {
        const form = parseForm(decideForm, request.body);
        const movement = await resolveByOperator(
          db,
          {
            customerId: shop.id,
            id,
            target: form.decision === 'post' ? 'posted' : 'voided',
            evidence: form.evidence,
          },
          auditedBy(request),
        );
        return `The ${movement.kind === 'discharge' ? 'payout' : 'recharge'} of ${movement.credits} credits on card ${movement.cardId} is ${movement.state}${movement.awaitsCard ? HELD_UNTIL_READ : ''}.`;
      });
    },
  );
};

/** What an operator's word given without the card leads to (docs/operators.md). */
const HELD_UNTIL_READ =
  '; the card stays held until a till reads it (no till recharges it from its float meanwhile): if the card shows otherwise, that till sets the books right with a compensating movement, once';

export default cardRoutes;
