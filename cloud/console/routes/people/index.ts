import type { FastifyPluginAsync } from 'fastify';
import {
  createOperator,
  mayManage,
  resetOperatorPassword,
  setOperatorDisabled,
} from '../../../operators/accounts.ts';
import { listOperators, type Operator } from '../../../operators/operators.ts';
import { act, auditedBy, pageContext, sendPage } from '../../page-context.ts';
import { parseForm } from '../../schemas/form.ts';
import { newPersonForm } from '../../schemas/people.ts';
import { page } from '../../views/layout.ts';
import { peopleView, temporaryPasswordView } from '../../views/people.ts';

type ShopParams = { Params: { shopId: string } };
type PersonParams = { Params: { shopId: string; login: string } };

/**
 * A shop's people: the provider admin adds owners and staff, an owner adds staff; the role
 * above disables, enables and resets (the recovery path: a temporary password, shown once).
 */
const peopleRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;
  const acting = (request: { operator: Operator | null }) => ({
    actor: auditedBy(request as never).actor,
    operator: request.operator,
  });

  fastify.get<ShopParams>('/shops/:shopId/people', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const operator = request.operator!;
    const people = await listOperators(db, { shops: null, shop: shop.id });
    const ctx = await pageContext(request, reply, shop);
    const creatable = (['owner', 'staff'] as const).filter((role) =>
      mayManage(operator, role, [shop.id]),
    );
    return sendPage(
      reply,
      page(
        ctx,
        'People',
        peopleView(
          ctx,
          shop,
          people.filter((person) => person.role !== 'admin' || operator.role === 'admin'),
          (person) => person.id !== operator.id && mayManage(operator, person.role, person.shops),
          creatable,
        ),
      ),
    );
  });

  fastify.post<ShopParams>('/shops/:shopId/people', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const back = `/console/shops/${shop.id}/people`;
    let created;
    try {
      const form = parseForm(newPersonForm, request.body);
      created = await createOperator(db, acting(request), { ...form, shops: [shop.id] });
    } catch (error) {
      return act(request, reply, back, () => Promise.reject(error));
    }
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(
        ctx,
        'New account',
        temporaryPasswordView(
          shop.id,
          created.operator,
          created.temporaryPassword ?? '',
          'created',
        ),
      ),
    );
  });

  for (const action of ['disable', 'enable'] as const) {
    fastify.post<PersonParams>(`/shops/:shopId/people/:login/${action}`, async (request, reply) => {
      const shop = await request.shopFor('manage');
      return act(request, reply, `/console/shops/${shop.id}/people`, async () => {
        const person = await setOperatorDisabled(
          db,
          acting(request),
          request.params.login,
          action === 'disable',
        );
        return action === 'disable'
          ? `${person.name} can no longer log in; their sessions are ended.`
          : `${person.name} can log in again.`;
      });
    });
  }

  fastify.post<PersonParams>(
    '/shops/:shopId/people/:login/reset-password',
    async (request, reply) => {
      const shop = await request.shopFor('manage');
      const back = `/console/shops/${shop.id}/people`;
      let reset;
      try {
        reset = await resetOperatorPassword(db, acting(request), request.params.login);
      } catch (error) {
        return act(request, reply, back, () => Promise.reject(error));
      }
      const ctx = await pageContext(request, reply, shop);
      return sendPage(
        reply,
        page(
          ctx,
          'Password reset',
          temporaryPasswordView(shop.id, reset.operator, reset.temporaryPassword, 'reset'),
        ),
      );
    },
  );
};

export default peopleRoutes;
