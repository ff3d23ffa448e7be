import express, { type Express, type Request, type Response } from 'express';
import { ledgerErrors } from '../errors.ts';
import type { Ledger } from '../ledger.ts';
import { errorHandler, notFound, requireJsonBody, type Logger } from './error-handler.ts';
import { parseListQuery, parseMovementId, parseMovementRequest } from './movement-request.ts';

export const BODY_LIMIT = '16kb';

/** The ledger's HTTP API, contract v1 (docs/cloud-api.md). Routes parse, call, answer. */
export function createLedgerApp(ledger: Ledger, log: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.get('/health', async (_req, res) => {
    try {
      await ledger.ping();
    } catch (error) {
      log.error(`health: database does not answer: ${(error as Error).message}`);
      throw ledgerErrors.databaseUnavailable();
    }
    res.json({ status: 'ok' });
  });

  const v1 = express.Router();
  // Authentication comes first: nothing about a request is looked at before the key is known.
  v1.use(async (req, res, next) => {
    res.locals.customerId = await ledger.authenticate(req.get('x-api-key'));
    next();
  });
  v1.use(requireJsonBody());
  v1.use(express.json({ limit: BODY_LIMIT, strict: true }));

  v1.get('/customer', async (_req, res) => {
    res.json(await ledger.getCustomer(customerOf(res)));
  });
  v1.post('/movements', async (req, res) => {
    const request = parseMovementRequest(req.body);
    const { movement, replayed } = await ledger.createMovement(customerOf(res), request);
    res.status(replayed ? 200 : 201).json(movement);
  });
  v1.get('/movements', async (req, res) => {
    const query = parseListQuery(req.query as Record<string, unknown>);
    res.json({ movements: await ledger.listMovements(customerOf(res), query) });
  });
  v1.get('/movements/:id', async (req: Request<{ id: string }>, res) => {
    res.json(await ledger.getMovement(customerOf(res), parseMovementId(req.params.id)));
  });
  v1.post('/movements/:id/post', async (req: Request<{ id: string }>, res) => {
    res.json(await ledger.postMovement(customerOf(res), parseMovementId(req.params.id)));
  });
  v1.post('/movements/:id/void', async (req: Request<{ id: string }>, res) => {
    res.json(await ledger.voidMovement(customerOf(res), parseMovementId(req.params.id)));
  });

  app.use('/v1', v1);
  app.use(notFound());
  app.use(errorHandler(log));
  return app;
}

function customerOf(res: Response): string {
  return res.locals.customerId as string;
}
