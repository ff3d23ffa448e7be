import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CardRules } from '../../../../common/ledger-contract.ts';
import { setCardRules } from '../../../cards/card-rules.ts';
import { findCustomer, toCardRules, type CustomerRow } from '../../../records.ts';
import type { Shop } from '../../../shops/shops.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { cardRulesForm, tierRowsOf, tiersOf } from '../../schemas/cards.ts';
import {
  cardRulesFormOf,
  cardRulesView,
  tierRowsFor,
  type CardRulesForm,
} from '../../views/card-rules.ts';
import { page } from '../../views/layout.ts';

type ShopParams = { Params: { shopId: string } };

const FIELD_NAMES: Record<string, string> = {
  undoMinutes: "Cashier's undo",
  bonusSpend: 'Payouts of bonus credits',
};

/**
 * The shop's card rules: bonus tiers, how a payout spends bonus credits, the cashier's undo
 * window (what `card-wallet-cloud card rules` sets), and the blocklist feed's public key. A
 * form with a problem is shown again as typed, with the problem, and changes nothing.
 */
const cardRulesRoutes: FastifyPluginAsync = async (fastify) => {
  const { db, ledger } = fastify.book;

  async function rulesOf(shopId: string): Promise<CardRules> {
    return toCardRules((await findCustomer(db, shopId)) as CustomerRow);
  }

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    shop: Shop,
    form: CardRulesForm | null,
  ): Promise<FastifyReply> {
    const rules = await rulesOf(shop.id);
    const key = await ledger.cards.blocklistKey(shop.id);
    const ctx = await pageContext(request, reply, shop);
    const url = `${request.protocol}://${request.host}/blocklists/${shop.id}`;
    return sendPage(
      reply,
      page(
        ctx,
        'Card rules',
        cardRulesView(ctx, shop, rules, form ?? cardRulesFormOf(rules), { key, url }),
      ),
      form ? 400 : 200,
    );
  }

  fastify.get<ShopParams>('/shops/:shopId/card-rules', async (request, reply) =>
    show(request, reply, await request.shopFor('manage'), null),
  );

  fastify.post<ShopParams>('/shops/:shopId/card-rules', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const body = (request.body ?? {}) as Record<string, unknown>;
    const rows = tierRowsOf(body);
    const parsed = cardRulesForm.safeParse(body);
    const tiers = tiersOf(rows);
    if (!parsed.success || typeof tiers === 'string') {
      const issue = parsed.success ? undefined : parsed.error.issues[0];
      return show(request, reply, shop, {
        undoMinutes: typeof body.undoMinutes === 'string' ? body.undoMinutes : '',
        bonusSpend: body.bonusSpend === 'bonus-last' ? 'bonus-last' : 'bonus-first',
        rows: tierRowsFor(rows),
        problem: issue
          ? `${FIELD_NAMES[String(issue.path[0])] ?? 'The form'}: ${issue.message}.`
          : `${String(tiers)}.`,
      });
    }
    return act(request, reply, `/console/shops/${shop.id}/card-rules`, async () => {
      await setCardRules(
        db,
        shop.id,
        {
          undoWindowSeconds: parsed.data.undoMinutes * 60,
          bonusSpend: parsed.data.bonusSpend,
          bonusTiers: tiers,
        },
        auditedBy(request),
      );
      return tiers.length === 0
        ? 'The card rules are saved: no bonus tiers.'
        : `The card rules are saved: ${tiers.length} bonus tier${tiers.length === 1 ? '' : 's'}, lowest first.`;
    });
  });
};

export default cardRulesRoutes;
