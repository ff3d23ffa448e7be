import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyRequest,
} from 'fastify';
import { AuthenticationGuard, type FailedAuthenticationLimits } from '../authentication-guard.ts';
import { ledgerErrors } from '../errors.ts';
import type { Ledger } from '../ledger.ts';
import { errorHandler, type Logger } from './error-handler.ts';
import { parseJsonBody, refuseOtherBody } from './json-body.ts';
import {
  parseListQuery,
  parseMovementId,
  parseMovementRequest,
  parseResolveRequest,
} from './movement-request.ts';

export const BODY_LIMIT_BYTES = 16 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The customer of the request's API key, set by the /v1 authentication hook. */
    customerId: string;
  }
}

type WithId = FastifyRequest<{ Params: { id: string } }>;

/**
 * The ledger's HTTP API, contract v1 (docs/cloud-api.md). Routes parse, call, answer.
 *
 * Fastify rather than express: the ledger is the one service every shop's movements pass
 * through, and outside PostgreSQL its HTTP layer is most of its CPU. Side by side on the
 * 2-core build machine, the same ledger behind express 5 kept about 0.65 of the raw-SQL
 * throughput, behind fastify about 0.8 (bench/ledger-throughput.ts, docs/benchmarks.md).
 * The app is only a request handler: the server, its timeouts, malformed-HTTP answers and
 * graceful close are the shared `listen()`.
 */
export async function createLedgerApp(
  ledger: Ledger,
  log: Logger,
  failedAuthenticationLimits: Partial<FailedAuthenticationLimits> = {},
): Promise<FastifyInstance> {
  const handleError = errorHandler(log);
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // Errors before routing (a URL the router cannot decode) get the same one error handler.
    frameworkErrors: (error, request, reply) => {
      handleError(error, request, reply);
    },
  });
  // JSON only, parsed by us so that its errors speak the contract (415 for anything else).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.addContentTypeParser('*', refuseOtherBody);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(() => {
    throw ledgerErrors.notFound();
  });

  app.get('/health', async () => {
    try {
      await ledger.ping();
    } catch (error) {
      log.error(`health: database does not answer: ${(error as Error).message}`);
      throw ledgerErrors.databaseUnavailable();
    }
    return { status: 'ok' };
  });
  const guard = new AuthenticationGuard(ledger, failedAuthenticationLimits);
  await app.register(v1Routes(ledger, guard), { prefix: '/v1' });
  await app.ready();
  return app;
}

function v1Routes(ledger: Ledger, guard: AuthenticationGuard): FastifyPluginAsync {
  return async (v1) => {
    v1.decorateRequest('customerId', '');
    // Authentication comes first (onRequest runs before the body is read): nothing about a
    // request is looked at before the key is known, unknown /v1 paths included. The address is
    // the socket's: behind a proxy every client shares it, which the guard's rule allows for.
    v1.addHook('onRequest', async (request) => {
      request.customerId = await guard.authenticate(
        request.headers['x-api-key'] as string | undefined,
        request.ip,
      );
    });
    v1.setNotFoundHandler(() => {
      throw ledgerErrors.notFound();
    });

    v1.get('/customer', (request) => ledger.getCustomer(request.customerId));
    v1.post('/movements', async (request, reply) => {
      const { movement, replayed } = await ledger.createMovement(
        request.customerId,
        parseMovementRequest(request.body),
      );
      return reply.code(replayed ? 200 : 201).send(movement);
    });
    v1.get('/movements', async (request) => ({
      movements: await ledger.listMovements(
        request.customerId,
        parseListQuery(request.query as Record<string, unknown>),
      ),
    }));
    v1.get('/movements/:id', (request: WithId) =>
      ledger.getMovement(request.customerId, parseMovementId(request.params.id)),
    );
    v1.post('/movements/:id/post', (request: WithId) =>
      ledger.postMovement(
        request.customerId,
        parseMovementId(request.params.id),
        parseResolveRequest(request.body),
      ),
    );
    v1.post('/movements/:id/void', (request: WithId) =>
      ledger.voidMovement(
        request.customerId,
        parseMovementId(request.params.id),
        parseResolveRequest(request.body),
      ),
    );
    v1.get('/cards/:cardId', (request: FastifyRequest<{ Params: { cardId: string } }>) =>
      ledger.getCardAccount(request.customerId, request.params.cardId),
    );
  };
}
