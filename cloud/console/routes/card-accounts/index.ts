import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { readCardAccount } from '../../../card-accounts.ts';
import { cardsByHolderLabel, checkedHolderLabel } from '../../../cards/card-holders.ts';
import { cardOverview } from '../../../cards/card-overview.ts';
import type { CardActor } from '../../../cards/cards.ts';
import { tillNames } from '../../../tills/tills.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { cardId, correctForm, holderForm, reasonForm, replaceForm } from '../../schemas/cards.ts';
import { parseForm, uuid } from '../../schemas/form.ts';
import { cardAccountView } from '../../views/card-account.ts';
import { cardListView } from '../../views/card-list.ts';
import { page } from '../../views/layout.ts';

type ShopParams = { Params: { shopId: string }; Querystring: { card?: string } };
type CardParams = { Params: { shopId: string; cardId: string } };
type ChangeParams = { Params: { shopId: string; cardId: string; changeId: string } };

/** The operator of the request as a card's block and change and the audit log name them. */
function operatorActor(request: FastifyRequest, reason: string): CardActor {
  return { actor: auditedBy(request).actor, reason };
}

/** An owner's action on the card of the URL, answered on the card's page (act). */
async function onCard(
  request: FastifyRequest<CardParams | ChangeParams>,
  reply: FastifyReply,
  run: (shopId: string, card: string) => Promise<string>,
): Promise<FastifyReply> {
  const shop = await request.shopFor('manage');
  const card = parseForm(cardId, request.params.cardId);
  return act(request, reply, `/console/shops/${shop.id}/card-accounts/${card}`, () =>
    run(shop.id, card),
  );
}

/**
 * A shop's cards: find one, its blocked cards and changes waiting; a card's page, and what an
 * owner does with a lost card: block, unblock, replace onto a new card, correct a recharge,
 * cancel a change still waiting. Each goes through the same calls as the ledger's API and the
 * admin CLI (cloud/cards/cards.ts), which write its audit row with who and why.
 */
const cardAccountRoutes: FastifyPluginAsync = async (fastify) => {
  const { db, ledger } = fastify.book;

  fastify.get<ShopParams>('/shops/:shopId/card-accounts', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const typed = typeof request.query.card === 'string' ? request.query.card.trim() : '';
    const card = cardId.safeParse(typed);
    if (card.success) {
      return reply.redirect(`/console/shops/${shop.id}/card-accounts/${card.data}`, 303);
    }
    // Not a card id: the cards whose holder label holds what was typed.
    const found = typed === '' ? null : await cardsByHolderLabel(db, shop.id, typed.slice(0, 100));
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(ctx, 'Cards', cardListView(shop, await cardOverview(db, shop.id), typed, found)),
    );
  });

  fastify.get<CardParams>('/shops/:shopId/card-accounts/:cardId', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const card = parseForm(cardId, request.params.cardId);
    const account = await readCardAccount(db, shop.id, card);
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(ctx, `Card ${card}`, cardAccountView(ctx, shop, account, await tillNames(db, shop.id))),
    );
  });

  for (const action of ['block', 'unblock'] as const) {
    fastify.post<CardParams>(
      `/shops/:shopId/card-accounts/:cardId/${action}`,
      async (request, reply) =>
        onCard(request, reply, async (shopId, card) => {
          const form = parseForm(reasonForm, request.body);
          const answer = await ledger.cards[action](
            shopId,
            card,
            operatorActor(request, form.reason),
          );
          if (!answer.changed) {
            return `Card ${card} was ${action === 'block' ? 'blocked' : 'not blocked'} already: nothing changed.`;
          }
          return action === 'block'
            ? `Card ${card} is blocked: every till refuses it from its next look at the card list (within a minute).`
            : `Card ${card} is unblocked.`;
        }),
    );
  }

  fastify.post<CardParams>('/shops/:shopId/card-accounts/:cardId/holder', async (request, reply) =>
    onCard(request, reply, async (shopId, card) => {
      const form = parseForm(holderForm, request.body);
      const label = form.action === 'delete' ? null : checkedHolderLabel(form.label, 'Holder');
      const answer = await ledger.cards.holderLabel(shopId, card, label, auditedBy(request));
      if (label === null) {
        return answer.changed
          ? `Card ${card}'s holder label is deleted: the ledger keeps nothing of it.`
          : `Card ${card} had no holder label.`;
      }
      return `Card ${card}'s holder is “${label}”.`;
    }),
  );

  fastify.post<CardParams>('/shops/:shopId/card-accounts/:cardId/replace', async (request, reply) =>
    onCard(request, reply, async (shopId, card) => {
      const form = parseForm(replaceForm, request.body);
      const answer = await ledger.cards.replace(
        shopId,
        { id: form.id.toLowerCase(), cardId: card, newCardId: form.newCardId },
        operatorActor(request, form.reason),
      );
      const { change } = answer;
      return `${change.credits} credits of card ${card} wait for card ${change.cardId}: the next till that reads it writes them onto it.`;
    }),
  );

  fastify.post<CardParams>('/shops/:shopId/card-accounts/:cardId/correct', async (request, reply) =>
    onCard(request, reply, async (shopId, card) => {
      const form = parseForm(correctForm, request.body);
      const answer = await ledger.cards.correct(
        shopId,
        {
          id: form.id.toLowerCase(),
          cardId: card,
          recharge: form.recharge,
          credits: form.credits,
        },
        operatorActor(request, form.reason),
      );
      return `A correction of up to ${answer.change.credits} credits waits for card ${card}: the next till that reads it takes them back and refunds them.`;
    }),
  );

  fastify.post<ChangeParams>(
    '/shops/:shopId/card-accounts/:cardId/changes/:changeId/cancel',
    async (request, reply) =>
      onCard(request, reply, async (shopId) => {
        const id = parseForm(uuid, request.params.changeId).toLowerCase();
        const form = parseForm(reasonForm, request.body);
        const { change } = await ledger.cards.cancelChange(
          shopId,
          id,
          operatorActor(request, form.reason),
        );
        return change.kind === 'replacement'
          ? `The replacement is cancelled: its ${change.credits} credits are back on card ${change.fromCard ?? ''}'s account.`
          : 'The correction is cancelled.';
      }),
  );
};

export default cardAccountRoutes;
