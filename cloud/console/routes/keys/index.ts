import type { FastifyPluginAsync } from 'fastify';
import {
  assignKeyByHash,
  issueKey,
  listKeys,
  revokeKeyByHash,
  setCreditCost,
  topUp,
} from '../../../admin.ts';
import { hashApiKey, keyFingerprintOfHash } from '../../../api-keys.ts';
import { parseDecimal } from '../../../../common/decimal.ts';
import { ledgerErrors } from '../../../errors.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { parseForm } from '../../schemas/form.ts';
import {
  assignKeyForm,
  creditCostForm,
  issueKeyForm,
  revokeKeyForm,
  topUpForm,
} from '../../schemas/keys.ts';
import { count } from '../../views/format.ts';
import { newKeyView, keysView } from '../../views/keys.ts';
import { page } from '../../views/layout.ts';

type ShopParams = { Params: { shopId: string } };

/** A shop's API keys, its credit price and its pool (top-ups: the provider admin only). */
const keyRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<ShopParams>('/shops/:shopId/keys', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const provider = request.operator?.role === 'admin';
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(
        ctx,
        'Keys & prices',
        keysView(
          ctx,
          shop,
          await listKeys(db, shop.id),
          provider ? await listKeys(db, null) : null,
          provider,
        ),
      ),
    );
  });

  // A new key is shown on the answer to the post itself, once: it is never stored in clear.
  fastify.post<ShopParams>('/shops/:shopId/keys/issue', async (request, reply) => {
    const shop = await request.shopFor('manage');
    let apiKey: string;
    try {
      const form = parseForm(issueKeyForm, request.body);
      ({ apiKey } = await issueKey(db, { customerId: shop.id }, auditedBy(request, form.reason)));
    } catch (error) {
      return act(request, reply, `/console/shops/${shop.id}/keys`, () => Promise.reject(error));
    }
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(
        ctx,
        'New API key',
        newKeyView(shop.id, apiKey, keyFingerprintOfHash(hashApiKey(apiKey))),
      ),
    );
  });

  fastify.post<ShopParams>('/shops/:shopId/keys/revoke', async (request, reply) => {
    const shop = await request.shopFor('manage');
    return act(request, reply, `/console/shops/${shop.id}/keys`, async () => {
      const form = parseForm(revokeKeyForm, request.body);
      await revokeKeyByHash(db, form.key, auditedBy(request, form.reason), shop.id);
      return `Key ${keyFingerprintOfHash(form.key)} is revoked: a POS using it is refused from now on.`;
    });
  });

  fastify.post<ShopParams>('/shops/:shopId/keys/assign', async (request, reply) => {
    const shop = await request.shopFor('provider');
    return act(request, reply, `/console/shops/${shop.id}/keys`, async () => {
      const form = parseForm(assignKeyForm, request.body);
      await assignKeyByHash(db, form.key, shop.id, auditedBy(request, form.reason));
      return `Key ${keyFingerprintOfHash(form.key)} now belongs to ${shop.name}.`;
    });
  });

  fastify.post<ShopParams>('/shops/:shopId/credit-cost', async (request, reply) => {
    const shop = await request.shopFor('manage');
    return act(request, reply, `/console/shops/${shop.id}/keys`, async () => {
      const form = parseForm(creditCostForm, request.body);
      const cost = parseDecimal(form.creditCost, { maxIntegerDigits: 8 });
      if (cost === undefined || cost <= 0n) {
        throw ledgerErrors.invalidInput('creditCost: more than 0, like 0.50');
      }
      const changed = await setCreditCost(db, shop.id, cost, auditedBy(request, form.reason));
      return `A credit now costs €${changed.creditCost}.`;
    });
  });

  fastify.post<ShopParams>('/shops/:shopId/pool/top-up', async (request, reply) => {
    const shop = await request.shopFor('provider');
    return act(request, reply, `/console/shops/${shop.id}/keys`, async () => {
      const form = parseForm(topUpForm, request.body);
      const credits = Number(form.credits);
      if (credits < 1 || !Number.isSafeInteger(credits)) {
        throw ledgerErrors.invalidInput('credits: a whole number of at least 1');
      }
      const changed = await topUp(db, shop.id, credits, auditedBy(request, form.reason));
      return `${count(credits)} credits added: the pool holds ${count(changed.credits)}.`;
    });
  });
};

export default keyRoutes;
