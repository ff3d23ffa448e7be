import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ledgerErrors } from '../../../errors.ts';
import type { Operator } from '../../../operators/operators.ts';
import { findShop, type Shop } from '../../../shops/shops.ts';

/**
 * What a page or action needs of the operator, for the shop in its URL:
 * - `report`: the day report (staff of the shop, its owners, the provider admin);
 * - `manage`: everything else of the shop (its owners and the provider admin);
 * - `provider`: what moves money into a pool or binds a provider's key (provider admin only).
 */
export type Access = 'report' | 'manage' | 'provider';

declare module 'fastify' {
  interface FastifyRequest {
    /** The shop of the URL's `:shopId` when the operator has `access` to it. */
    shopFor(access: Access): Promise<Shop>;
  }
}

export function sees(operator: Operator, shopId: string): boolean {
  return operator.role === 'admin' || operator.shops.includes(shopId);
}

export function allows(operator: Operator, access: Access): boolean {
  switch (access) {
    case 'report':
      return true;
    case 'manage':
      return operator.role !== 'staff';
    case 'provider':
      return operator.role === 'admin';
  }
}

/**
 * A shop the operator does not see is answered as not found (its existence is not told); one
 * they see but may not do this in is 403 Forbidden.
 */
export default fp(
  async (fastify) => {
    fastify.decorateRequest('shopFor', async function (this: FastifyRequest, access: Access) {
      const operator = this.operator;
      const shopId = (this.params as { shopId?: string }).shopId ?? '';
      if (!operator) throw ledgerErrors.forbidden('log in first');
      const shop = sees(operator, shopId) ? await findShop(fastify.book.db, shopId) : undefined;
      if (!shop) throw ledgerErrors.notFound();
      if (!allows(operator, access)) {
        throw ledgerErrors.forbidden(
          access === 'provider'
            ? 'only the provider admin may do this'
            : 'staff accounts see the day report only',
        );
      }
      return shop;
    });
  },
  { name: 'console-authorization', dependencies: ['console-authentication'] },
);
