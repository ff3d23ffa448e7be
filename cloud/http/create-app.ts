import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyRequest,
} from 'fastify';
import { hashApiKey, keyFingerprintOfHash } from '../api-keys.ts';
import { AuthenticationGuard, type FailedAuthenticationLimits } from '../authentication-guard.ts';
import { consolePlugin, type ConsoleOptions } from '../console/app.ts';
import type { Database } from '../db/database.ts';
import { LedgerError, ledgerErrors } from '../errors.ts';
import type { Ledger } from '../ledger.ts';
import { dayReportCsv } from '../reports/report-csv.ts';
import { errorHandler, type Logger } from './error-handler.ts';
import type { Floats } from '../floats.ts';
import {
  parseCloseFloatRequest,
  parseFloatReport,
  parseOpenFloatRequest,
  parseTopUpRequest,
} from './float-request.ts';
import { parseJsonBody, refuseOtherBody } from './json-body.ts';
import { blocklistRoutes, cardRoutes } from './card-routes.ts';
import {
  parseListQuery,
  parseMovementId,
  parseMovementRequest,
  parseResolveRequest,
  UUID,
} from './movement-request.ts';
import { parseDayReportQuery } from './report-request.ts';
import { parseHeartbeat, parseTillId } from './till-request.ts';

export const BODY_LIMIT_BYTES = 16 * 1024;
/** A float report carries up to 500 movements (MAX_REPORT_MOVEMENTS), each up to about 400 bytes. */
export const REPORT_BODY_LIMIT_BYTES = 256 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The customer of the request's API key, set by the /v1 authentication hook. */
    customerId: string;
    /**
     * Set when the key's customer was known without a lookup and the call itself checks that
     * the key is still valid: its hash, and whether that check has happened yet.
     */
    keyCheck: { apiKey: string; hash: string; done: boolean } | null;
  }
  interface FastifyContextConfig {
    /** The route's call checks the key in its own transaction (create, post, void). */
    checksKey?: boolean;
    /** A revoked key may still make this call (a float report or close). */
    revokedKeyReports?: boolean;
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
/** What the app serves besides contract v1. */
export interface LedgerAppOptions {
  failedAuthenticationLimits?: Partial<FailedAuthenticationLimits>;
  /** The operator console at /console (needs the database); false: none. */
  console?: (ConsoleOptions & { db: Database }) | false;
  /**
   * Proxies in front whose X-Forwarded-For and X-Forwarded-Proto are believed (their
   * addresses): the client's address for limits, and HTTPS for Secure cookies. Default: none.
   */
  trustProxy?: string[];
}

export async function createLedgerApp(
  ledger: Ledger,
  log: Logger,
  options: LedgerAppOptions = {},
): Promise<FastifyInstance> {
  const handleError = errorHandler(log);
  const guard = new AuthenticationGuard(ledger, options.failedAuthenticationLimits);
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    ...(options.trustProxy && options.trustProxy.length > 0
      ? { trustProxy: options.trustProxy }
      : {}),
    // Errors before routing (a URL the router cannot decode) get the same one error handler.
    frameworkErrors: (error, request, reply) => {
      handleError(error, request, reply);
    },
  });
  // JSON only, parsed by us so that its errors speak the contract (415 for anything else).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.addContentTypeParser('*', refuseOtherBody);
  app.setErrorHandler(async (error, request, reply) => {
    // Nothing about a request is answered before its key is known valid: when the call that
    // would have checked it did not run (a malformed body, say), the key is looked up now.
    if (request.keyCheck && !request.keyCheck.done) {
      request.keyCheck.done = true;
      try {
        await guard.authenticate(request.keyCheck.apiKey, request.ip);
      } catch (authenticationError) {
        return handleError(authenticationError, request, reply);
      }
    }
    return handleError(error, request, reply);
  });
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
  blocklistRoutes(app, ledger.cards);
  await app.register(v1Routes(ledger, guard), { prefix: '/v1' });
  if (options.console) {
    const { db, ...consoleOptions } = options.console;
    await app.register(consolePlugin({ db, ledger, log }, consoleOptions), { prefix: '/console' });
  }
  await app.ready();
  return app;
}

function v1Routes(ledger: Ledger, guard: AuthenticationGuard): FastifyPluginAsync {
  return async (v1) => {
    v1.decorateRequest('customerId', '');
    v1.decorateRequest('keyCheck', null);
    // Authentication comes first (onRequest runs before the body is read): nothing about a
    // request is looked at before the key is known, unknown /v1 paths included. The address is
    // the socket's: behind a proxy every client shares it, which the guard's rule allows for.
    // A create, post or void with a key whose customer is known leaves the validity check to
    // its call, in the same round trip (ledger_key_holds, cloud/db/routines/).
    v1.addHook('onRequest', async (request) => {
      const apiKey = request.headers['x-api-key'] as string | undefined;
      const known = request.routeOptions.config.checksKey ? guard.customerOf(apiKey) : undefined;
      if (apiKey && known !== undefined) {
        request.customerId = known.customerId;
        request.keyCheck = { apiKey, hash: known.hash, done: false };
        return;
      }
      request.customerId = await guard.authenticate(
        apiKey,
        request.ip,
        request.routeOptions.config.revokedKeyReports === true,
      );
    });
    /** Runs a call that checks the request's key itself, if it is to. */
    const checkingKey = async <T>(
      request: FastifyRequest,
      call: (keyHash: string | undefined) => Promise<T>,
    ): Promise<T> => {
      const check = request.keyCheck;
      if (!check) return call(undefined);
      check.done = true;
      try {
        return await call(check.hash);
      } catch (error) {
        if (error instanceof LedgerError && error.code === ledgerErrors.invalidApiKey().code) {
          guard.refused(check.apiKey, request.ip);
        }
        throw error;
      }
    };
    const checksKey = { config: { checksKey: true } };
    v1.setNotFoundHandler(() => {
      throw ledgerErrors.notFound();
    });

    v1.get('/customer', (request) => ledger.getCustomer(request.customerId));
    v1.post('/movements', checksKey, async (request, reply) => {
      const movementRequest = parseMovementRequest(request.body);
      const { movement, replayed } = await checkingKey(request, (keyHash) =>
        ledger.createMovement(request.customerId, movementRequest, keyHash),
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
    for (const action of ['post', 'void'] as const) {
      v1.post(`/movements/:id/${action}`, checksKey, (request: WithId) => {
        const id = parseMovementId(request.params.id);
        const by = parseResolveRequest(request.body);
        // Evidence without a till is an operator's word: the audit log names the key it came with.
        const decidedBy = {
          kind: 'key' as const,
          fingerprint: keyFingerprintOfHash(hashApiKey(request.headers['x-api-key'] as string)),
        };
        return checkingKey(request, (keyHash) =>
          action === 'post'
            ? ledger.postMovement(request.customerId, id, by, keyHash, decidedBy)
            : ledger.voidMovement(request.customerId, id, by, keyHash, decidedBy),
        );
      });
    }
    v1.get('/cards/:cardId', (request: FastifyRequest<{ Params: { cardId: string } }>) =>
      ledger.getCardAccount(request.customerId, request.params.cardId),
    );
    v1.post(
      '/tills/:tillId/heartbeat',
      checksKey,
      (request: FastifyRequest<{ Params: { tillId: string } }>) => {
        const tillId = parseTillId(request.params.tillId);
        const heartbeat = parseHeartbeat(request.body);
        return checkingKey(request, (keyHash) =>
          ledger.recordHeartbeat(request.customerId, tillId, heartbeat, keyHash),
        );
      },
    );
    v1.get('/reports/day', async (request, reply) => {
      const { date, csv } = parseDayReportQuery(
        request.query as Record<string, unknown>,
        request.headers.accept,
      );
      const report = await ledger.dayReport(request.customerId, date);
      if (!csv) return report;
      return reply.type('text/csv; charset=utf-8').send(dayReportCsv(report));
    });
    floatRoutes(v1, ledger.floats, checkingKey);
    cardRoutes(v1, ledger.cards);
  };
}

type CheckingKey = <T>(
  request: FastifyRequest,
  call: (keyHash: string | undefined) => Promise<T>,
) => Promise<T>;
type WithTill = FastifyRequest<{ Params: { tillId: string } }>;

/** The till floats (docs/cloud-api.md, "Till floats"). */
function floatRoutes(v1: FastifyInstance, floats: Floats, checkingKey: CheckingKey): void {
  const checksKey = { config: { checksKey: true } };
  const reports = {
    bodyLimit: REPORT_BODY_LIMIT_BYTES,
    config: { checksKey: true, revokedKeyReports: true },
  };
  v1.post('/floats', checksKey, async (request, reply) => {
    const open = parseOpenFloatRequest(request.body);
    const { float, created } = await checkingKey(request, (keyHash) =>
      floats.open(request.customerId, open, keyHash),
    );
    return reply.code(created ? 201 : 200).send(float);
  });
  v1.get('/floats/:id', (request: WithId) =>
    floats.get(request.customerId, parseUuid(request.params.id, 'float id')),
  );
  v1.post('/floats/:id/topups', checksKey, (request: WithId) => {
    const id = parseUuid(request.params.id, 'float id');
    const topUp = parseTopUpRequest(request.body);
    return checkingKey(request, (keyHash) => floats.topUp(request.customerId, id, topUp, keyHash));
  });
  v1.post('/floats/:id/close', reports, (request: WithId) => {
    const id = parseUuid(request.params.id, 'float id');
    const close = parseCloseFloatRequest(request.body);
    return checkingKey(request, (keyHash) =>
      floats.close(
        request.customerId,
        id,
        close.tillId,
        close.movements ?? [],
        keyOf(request, keyHash),
      ),
    );
  });
  v1.post('/float-reports', reports, (request) => {
    const report = parseFloatReport(request.body);
    return checkingKey(request, (keyHash) =>
      floats.report(request.customerId, report.tillId, report.movements, keyOf(request, keyHash)),
    );
  });
  v1.get('/tills', async (request) => ({ tills: await floats.tills(request.customerId) }));
  v1.get('/tills/:tillId', (request: WithTill) =>
    floats.till(request.customerId, parseUuid(request.params.tillId, 'till id')),
  );
  v1.get('/tills/:tillId/float', (request: WithTill) =>
    floats.openFloatOf(request.customerId, parseUuid(request.params.tillId, 'till id')),
  );
}

/**
 * The key a report names to its call, looked up already or not: the call flags what a revoked
 * key reports (key-revoked), so it is always told the key.
 */
function keyOf(request: FastifyRequest, checked: string | undefined): string {
  return checked ?? hashApiKey(request.headers['x-api-key'] as string);
}

function parseUuid(value: string, name: string): string {
  if (!UUID.test(value)) throw ledgerErrors.invalidRequest(`${name}: must be a UUID`);
  return value;
}
