import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, keyFingerprintOfHash } from '../api-keys.ts';
import type { AuditActor } from '../audit/audit-log.ts';
import { checkedHolderLabel } from '../cards/card-holders.ts';
import type { Cards } from '../cards/cards.ts';
import { LedgerError, ledgerErrors } from '../errors.ts';
import { CARD_ID, UUID } from './movement-request.ts';

/**
 * The routes of a shop's card rules (docs/cloud-api.md, "Lost cards, refunds and bonuses"):
 * blocks, replacements and corrections with the shop's key, the card list tills poll (with an
 * ETag), bonus quotes; and, without a key, the signed blocklist feed machines fetch.
 */

const MAX_REASON = 500;
const AMOUNT = /^\d{1,12}(?:\.\d{1,2})?$/;

type WithCard = FastifyRequest<{ Params: { cardId: string } }>;
type WithId = FastifyRequest<{ Params: { id: string } }>;

/** `/v1` routes: the request's customer is known (the /v1 authentication hook). */
export function cardRoutes(v1: FastifyInstance, cards: Cards): void {
  v1.get('/card-list', async (request, reply) => {
    const seq = etagSeq(request.headers['if-none-match']);
    const list = await cards.list(request.customerId, seq);
    void reply.header('Cache-Control', 'no-cache');
    if (!list)
      return reply
        .code(304)
        .header('ETag', `"${String(seq)}"`)
        .send();
    return reply.header('ETag', `"${list.seq}"`).send(list);
  });
  for (const action of ['block', 'unblock'] as const) {
    v1.post(`/cards/:cardId/${action}`, (request: WithCard) => {
      const cardId = parseCardId(request.params.cardId);
      const { reason } = parseBody(request.body, { reason: text });
      const by = { actor: keyActor(request), reason };
      return action === 'block'
        ? cards.block(request.customerId, cardId, by)
        : cards.unblock(request.customerId, cardId, by);
    });
  }
  v1.put('/cards/:cardId/holder', (request: WithCard) => {
    const cardId = parseCardId(request.params.cardId);
    const { label } = parseBody(request.body, { label: checkedHolderLabel });
    return cards.holderLabel(request.customerId, cardId, label, { actor: keyActor(request) });
  });
  v1.delete('/cards/:cardId/holder', (request: WithCard) => {
    const cardId = parseCardId(request.params.cardId);
    return cards.holderLabel(request.customerId, cardId, null, { actor: keyActor(request) });
  });
  v1.post('/cards/:cardId/replace', async (request: WithCard, reply) => {
    const cardId = parseCardId(request.params.cardId);
    const body = parseBody(request.body, { id: uuid, newCardId: cardIdField, reason: text });
    if (body.newCardId === cardId) throw invalid('newCardId: must be another card');
    const { reason, ...change } = body;
    const answer = await cards.replace(
      request.customerId,
      { ...change, cardId },
      { actor: keyActor(request), reason },
    );
    return created(reply, answer);
  });
  v1.post('/cards/:cardId/corrections', async (request: WithCard, reply) => {
    const cardId = parseCardId(request.params.cardId);
    const body = parseBody(request.body, {
      id: uuid,
      recharge: uuid,
      credits: positiveCredits,
      reason: text,
    });
    const { reason, ...change } = body;
    const answer = await cards.correct(
      request.customerId,
      { ...change, cardId },
      { actor: keyActor(request), reason },
    );
    return created(reply, answer);
  });
  v1.post('/card-changes/:id/cancel', (request: WithId) => {
    const id = uuid(request.params.id, 'id');
    const { reason } = parseBody(request.body, { reason: text });
    return cards.cancelChange(request.customerId, id, { actor: keyActor(request), reason });
  });
  v1.get('/bonus-quote', (request) => {
    const { amount } = request.query as Record<string, unknown>;
    if (typeof amount !== 'string' || !AMOUNT.test(amount) || !/[1-9]/.test(amount)) {
      throw ledgerErrors.invalidQuery('amount: must be euros > 0 with at most 2 decimals');
    }
    return cards.quote(request.customerId, amount);
  });
}

/** The machines' routes, outside `/v1` and without a key: a shop's signed blocklist. */
export function blocklistRoutes(app: FastifyInstance, cards: Cards): void {
  type WithShop = FastifyRequest<{ Params: { customerId: string } }>;
  app.get('/blocklists/:customerId', async (request: WithShop, reply) => {
    const feed = await ofShop(request.params.customerId, (customerId) =>
      cards.blocklist(customerId),
    );
    void reply.header('ETag', feed.etag).header('Cache-Control', 'no-cache');
    if (request.headers['if-none-match'] === feed.etag) return reply.code(304).send();
    return reply.type('application/json').send(feed.body);
  });
  app.get('/blocklists/:customerId/key', (request: WithShop) =>
    ofShop(request.params.customerId, (customerId) => cards.blocklistKey(customerId)),
  );
}

/** A call for a shop named in a public path: a malformed or unknown shop is the same 404. */
async function ofShop<T>(value: string, call: (customerId: string) => Promise<T>): Promise<T> {
  if (!UUID.test(value)) throw ledgerErrors.notFound();
  try {
    return await call(value.toLowerCase());
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'CustomerNotFound') {
      throw ledgerErrors.notFound();
    }
    throw error;
  }
}

/** The sequence number of an `If-None-Match: "N"`, or undefined. */
function etagSeq(header: string | undefined): number | undefined {
  const match = /^(?:W\/)?"(\d{1,15})"$/.exec(header?.trim() ?? '');
  return match ? Number(match[1]) : undefined;
}

function created(reply: FastifyReply, answer: { changed: boolean }) {
  return reply.code(answer.changed ? 201 : 200).send(answer);
}

/** Who acts through the ledger API: its key's fingerprint, as the audit log names it. */
function keyActor(request: FastifyRequest): AuditActor {
  return {
    kind: 'key',
    fingerprint: keyFingerprintOfHash(hashApiKey(request.headers['x-api-key'] as string)),
  };
}

const invalid = (detail: string) => ledgerErrors.invalidRequest(detail);

type Field<T> = (value: unknown, name: string) => T;

/** A JSON object with exactly these fields (each required), each read by its reader. */
function parseBody<T extends Record<string, Field<unknown>>>(
  body: unknown,
  fields: T,
): { [K in keyof T]: ReturnType<T[K]> } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('body: must be a JSON object');
  }
  const given = body as Record<string, unknown>;
  const unknown = Object.keys(given).filter((key) => !(key in fields));
  if (unknown.length > 0) throw invalid(`${unknown.join(', ')}: unknown field`);
  const result: Record<string, unknown> = {};
  for (const [name, read] of Object.entries(fields)) result[name] = read(given[name], name);
  return result as { [K in keyof T]: ReturnType<T[K]> };
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_REASON) {
    throw invalid(`${name}: must say in 1 to ${MAX_REASON} characters why`);
  }
  return value.trim();
}

function uuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw invalid(`${name}: must be a UUID`);
  return value.toLowerCase();
}

function cardIdField(value: unknown, name: string): string {
  if (typeof value !== 'string' || !CARD_ID.test(value)) {
    throw invalid(`${name}: must be 8 or 14 uppercase hexadecimal characters`);
  }
  return value;
}

function parseCardId(value: string): string {
  if (!CARD_ID.test(value)) throw ledgerErrors.invalidCardId();
  return value;
}

function positiveCredits(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw invalid(`${name}: must be an integer from 1 to 2147483647`);
  }
  return value;
}
