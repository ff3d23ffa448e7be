import { createHash } from 'node:crypto';
import { Router, type Request, type RequestHandler } from 'express';
import type { CustomerDirectory } from '../cloud/customer-directory.ts';
import type { LedgerClient } from '../cloud/ledger-client.ts';
import { errors } from '../errors.ts';
import type { CardAccess } from '../wallet/card-access.ts';
import type { CardBlocks } from '../wallet/card-blocks.ts';
import type { CardChanges } from '../wallet/card-changes.ts';
import type { CardHolds } from '../wallet/card-holds.ts';
import { customerInfo } from '../wallet/customer-info.ts';
import { dischargeCard } from '../wallet/discharge-card.ts';
import type { MovementEngine } from '../wallet/movement-engine.ts';
import type { Idempotency } from '../wallet/journal-entries.ts';
import { personalizeCard, type CardPersonalizer } from '../wallet/personalize-card.ts';
import { readCard } from '../wallet/read-card.ts';
import { rechargeCard } from '../wallet/recharge-card.ts';
import { movementById, movementsByReference } from '../wallet/movement-lookup.ts';
import { settleCard } from '../wallet/settle-card.ts';
import { parseUndoRequest, undoRecharge } from '../wallet/undo-recharge.ts';
import { REFERENCE_PATTERN } from '../../common/ledger-contract.ts';
import { buysAtLeastOneCredit, parseRechargeRequest } from '../wallet/recharge-request.ts';
import { parseQuoteQuery, quoteAmount } from '../wallet/amount-quote.ts';
import { parseHolderLabelBody, setHolderLabel } from '../wallet/holder-label.ts';
import type { HttpActivity } from './activity.ts';
import { authenticatedLocals } from './authenticate.ts';
import type { CardEventStream } from './card-events.ts';
import { jsonBody } from './json-body.ts';
import { openApiDocument } from './openapi.ts';
import { endpointLimit, type Endpoint, type RateLimitTable } from './rate-limits.ts';

export interface RouteDependencies {
  cards: CardAccess;
  ledger: LedgerClient;
  customers: CustomerDirectory;
  movements: MovementEngine;
  personalizer: CardPersonalizer;
  refuseCardsAboveAccount: boolean;
  /** The shop's blocked cards and the changes waiting for cards (the till's card list). */
  cardList?: CardBlocks & CardChanges & CardHolds;
  events: CardEventStream;
  authenticate: RequestHandler;
  activity: HttpActivity;
  limits: RateLimitTable;
}

/** The spec's endpoints: each parses, calls one use case, maps the result. */
export function apiRoutes(deps: RouteDependencies): Router {
  const { cards, ledger, customers, movements, personalizer, events, authenticate, activity } =
    deps;
  const { limits, cardList } = deps;
  const rules = cardList ? { blocks: cardList, changes: cardList, holds: cardList } : {};
  // The ledger refused a card and flagged it (the refusal's code says why): the tray shows it.
  const flaggedSuspect = (cardId: string, credits: number, suspectReason: string) =>
    activity.emit('card-answer', { at: new Date(), cardId, credits, suspect: true, suspectReason });
  // Exact paths only: /writecard/ or /WriteCard are not the documented endpoint (404).
  const router = Router({ strict: true, caseSensitive: true });
  const limited = (endpoint: Endpoint) => [authenticate, endpointLimit(endpoint, limits, activity)];
  // Every authenticated call is tied to the shop the ledger resolves the key to (spec 1).
  const resolveCustomer: RequestHandler = async (_req, res, next) => {
    res.locals.customer = await customers.resolve(authenticatedLocals(res).apiKey);
    next();
  };

  router.get('/ping', (_req, res) => {
    res.json('pong');
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });

  router.get('/readcard', ...limited('readcard'), resolveCustomer, async (_req, res) => {
    const card = await readCard(cards, movements, cardList);
    activity.emit('card-answer', { at: new Date(), cardId: card.cardId, credits: card.credits });
    res.json(card);
  });

  router.get('/info', ...limited('info'), async (_req, res) => {
    res.json(
      await customerInfo(ledger, customers, authenticatedLocals(res).apiKey, movements.floats),
    );
  });

  router.post('/writecard', ...limited('writecard'), ...jsonBody(), async (req, res) => {
    // Bad input is refused before anything else happens: no ledger call, no card.
    const request = parseRechargeRequest(req.body);
    const reference = referenceOf(req);
    const { apiKey, keyFingerprint } = authenticatedLocals(res);
    const recharged = await rechargeCard(cards, movements, {
      request,
      reference,
      customer: await customers.resolve(apiKey),
      keyFingerprint,
      idempotency: idempotencyOf(req, keyFingerprint, request, reference),
      personalizer,
      refuseAboveAccount: deps.refuseCardsAboveAccount,
      onFlagged: flaggedSuspect,
      ...rules,
    });
    activity.emit('card-answer', {
      at: new Date(),
      cardId: recharged.cardId,
      credits: recharged.credits,
    });
    res.json(recharged);
  });

  // What an amount buys before paying: the ledger's price and bonus tiers (the till's, offline).
  router.get('/quote', ...limited('quote'), async (req, res) => {
    const amount = parseQuoteQuery(req.query);
    const { apiKey } = authenticatedLocals(res);
    const customer = await customers.resolve(apiKey);
    if (!buysAtLeastOneCredit(amount, customer.creditCost)) {
      throw errors.invalidCreditsOrAmount('amount below one credit');
    }
    res.json(await quoteAmount(ledger, apiKey, customer, amount));
  });

  router.post(
    '/dischargecard',
    ...limited('dischargecard'),
    ...jsonBody(),
    resolveCustomer,
    async (req, res) => {
      // A body asking for part of the balance would otherwise pay out all of it.
      takesNoFields(req.body, 'it pays out the whole balance');
      const reference = referenceOf(req);
      const { keyFingerprint } = authenticatedLocals(res);
      const discharged = await dischargeCard(cards, movements, {
        keyFingerprint,
        reference,
        idempotency: idempotencyOf(req, keyFingerprint, {}, reference),
        onFlagged: flaggedSuspect,
        ...rules,
      });
      activity.emit('card-answer', { at: new Date(), cardId: discharged.cardId, credits: 0 });
      res.json(discharged);
    },
  );

  router.post(
    '/cards/personalize',
    ...limited('personalize'),
    ...jsonBody(),
    resolveCustomer,
    async (req, res) => {
      takesNoFields(req.body, 'it personalizes the card on the reader');
      res.json(await personalizeCard(cards, movements, personalizer));
    },
  );

  router.post(
    '/cards/settle',
    ...limited('settle'),
    ...jsonBody(),
    resolveCustomer,
    async (req, res) => {
      takesNoFields(req.body, 'it settles the card on the reader');
      const { apiKey, keyFingerprint } = authenticatedLocals(res);
      res.json(
        await settleCard(
          cards,
          movements,
          ledger,
          apiKey,
          cardList && { changes: cardList, keyFingerprint },
        ),
      );
    },
  );

  // The optional holder label of the card on the reader, kept at the ledger.
  router.post('/cards/holder', ...limited('holder'), ...jsonBody(), async (req, res) => {
    const label = parseHolderLabelBody(req.body);
    const { apiKey } = authenticatedLocals(res);
    await customers.resolve(apiKey);
    res.json(await setHolderLabel(cards, ledger, apiKey, label));
  });
  // A cashier's undo of this till's recharge of the card on the reader.
  router.post(
    '/cards/undo',
    ...limited('undo'),
    ...jsonBody(),
    resolveCustomer,
    async (req, res) => {
      const request = parseUndoRequest(req.body);
      // The ledger keeps no POS reference with a refund: its recharge is its reference.
      if (req.headers['pos-reference'] !== undefined) {
        throw errors.invalidReference(
          'Pos-Reference: not taken by /cards/undo; the undo names its recharge (movementId)',
        );
      }
      const { keyFingerprint } = authenticatedLocals(res);
      const undone = await undoRecharge(cards, movements, {
        recharge: request.movementId,
        keyFingerprint,
        idempotency: idempotencyOf(req, keyFingerprint, request, undefined),
        ...(cardList ? { blocks: cardList } : {}),
      });
      activity.emit('card-answer', {
        at: new Date(),
        cardId: undone.cardId,
        credits: undone.credits,
      });
      res.json(undone);
    },
  );

  // Receipts: a movement by its id, or every one with the POS's reference (newest first).
  router.get('/movements/:id', ...limited('movements'), resolveCustomer, async (req, res) => {
    const id = String(req.params.id);
    res.json(await movementById(movements, ledger, authenticatedLocals(res), id));
  });
  router.get('/movements', ...limited('movements'), resolveCustomer, async (req, res) => {
    const { reference, ...others } = req.query;
    const unknown = Object.keys(others);
    if (unknown.length > 0) {
      throw errors.invalidReference(
        `${unknown.join(', ')}: not a parameter here; it takes reference`,
      );
    }
    if (typeof reference !== 'string') {
      throw errors.invalidReference('reference: required, once (the POS reference to look up)');
    }
    checkReference(reference, 'reference');
    const found = await movementsByReference(
      movements,
      ledger,
      authenticatedLocals(res),
      reference,
    );
    res.json({ movements: found });
  });

  router.get('/events', authenticate, resolveCustomer, events.handler());

  allowOnly(router, API_METHODS);
  return router;
}

/** The paths of the API and the methods each answers (others: 405 with Allow). */
export const API_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/ping': ['GET', 'HEAD'],
  '/openapi.json': ['GET', 'HEAD'],
  '/readcard': ['GET', 'HEAD'],
  '/info': ['GET', 'HEAD'],
  '/writecard': ['POST'],
  '/dischargecard': ['POST'],
  '/cards/personalize': ['POST'],
  '/cards/settle': ['POST'],
  '/cards/holder': ['POST'],
  '/quote': ['GET', 'HEAD'],
  '/cards/undo': ['POST'],
  '/movements': ['GET', 'HEAD'],
  '/movements/:id': ['GET', 'HEAD'],
  '/events': ['GET', 'HEAD'],
};

/**
 * The body of an endpoint that takes none: no body, or `{}`. Anything else is refused before
 * anything happens, naming what was sent.
 */
function takesNoFields(body: unknown, why: string): void {
  if (body === undefined) return;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body;
    throw errors.invalidBody(`the body must be empty or {} (got ${got}): ${why}`);
  }
  const fields = Object.keys(body);
  if (fields.length > 0) {
    const named = fields.map((field) => JSON.stringify(field)).join(', ');
    throw errors.invalidBody(`${named}: not a field here; it takes no body (${why})`);
  }
}

/** A sensible Idempotency-Key: 1 to 255 visible ASCII characters (a UUID is typical). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The optional `Pos-Reference` header: the POS's reference of the sale. */
function referenceOf(req: Request): string | undefined {
  const reference = req.headers['pos-reference'];
  if (reference === undefined) return undefined;
  return checkReference(String(reference), 'Pos-Reference');
}

function checkReference(reference: string, name: string): string {
  if (!REFERENCE_PATTERN.test(reference)) {
    throw errors.invalidReference(
      `${name}: must be 1 to 80 printable ASCII characters without a space at either end (got ${reference.length} characters)`,
    );
  }
  return reference;
}

/**
 * The optional Idempotency-Key header, scoped to the API key, with a digest of what was
 * asked (the parsed request, so formatting and field order do not matter, and the reference:
 * the same key with another reference is another request).
 */
function idempotencyOf(
  req: Request,
  keyFingerprint: string,
  request: object,
  reference: string | undefined,
): Idempotency | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw errors.invalidIdempotencyKey();
  }
  // Without a reference, the digest is what it was before references: answers stored then
  // are still replayed.
  const asked = reference === undefined ? request : { ...request, reference };
  const requestHash = createHash('sha256')
    .update(`${req.path} ${JSON.stringify(asked)}`)
    .digest('hex');
  return { scope: `${keyFingerprint}:${key}`, requestHash };
}

/** 405 with Allow for a known path called with another method. */
export function allowOnly(
  router: Router,
  methods: Readonly<Record<string, readonly string[]>>,
): void {
  for (const [path, allowed] of Object.entries(methods)) {
    router.all(path, (req, res, next) => {
      res.setHeader('Allow', allowed.join(', '));
      next(
        errors.methodNotAllowed(`${req.method} ${path}: this path answers ${allowed.join(', ')}`),
      );
    });
  }
}
