/**
 * The network between the tills and the ledger, for the deterministic simulation: the worker's
 * real LedgerClient (its retries, timeouts, Retry-After and refusal mapping) sends its HTTP
 * requests through an axios adapter into virtual time, where they may be refused, lost, late,
 * duplicated, throttled or answered by a proxy, and reach the ledger: the simulated one over the
 * same routes, statuses and bodies as the real ledger's HTTP API (docs/cloud-api.md,
 * ledgerOverHttp below), or the real one's own HTTP app (real-ledger.ts), whose answer the event
 * that delivers the call awaits.
 */
import { AxiosError, type AxiosAdapter, type AxiosResponse } from 'axios';
import { createHash } from 'node:crypto';
import { ledgerErrorCodes, type ResolveRequest } from '../../common/ledger-contract.ts';
import type { Life, Scheduler } from './scheduler.ts';
import type { SimLedger } from './sim-ledger.ts';
import { SimLedgerError } from './sim-ledger.ts';

/** An HTTP answer as the ledger sends it. */
export interface HttpAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A call as it reaches the ledger: `text` is the body as sent, `body` the same parsed. */
export interface LedgerCall {
  method: string;
  url: string;
  apiKey: string | undefined;
  body: unknown;
  text: string | undefined;
  /** The If-None-Match header (the card list's ETag), if sent. */
  ifNoneMatch?: string;
}

/** The ledger at the end of the network: it answers at once, or once its work is done. */
export type LedgerEndpoint = (call: LedgerCall) => HttpAnswer | Promise<HttpAnswer>;

const refused = (name: keyof typeof ledgerErrorCodes): HttpAnswer => ({
  status: ledgerErrorCodes[name].status,
  body: { error: ledgerErrorCodes[name].code },
});

/** The ledger's v1 routes over the simulated ledger (cloud/http/create-app.ts). */
export function ledgerOverHttp(
  ledger: SimLedger,
  method: string,
  url: string,
  apiKey: string | undefined,
  body: unknown,
  ifNoneMatch?: string,
): HttpAnswer {
  if (apiKey === undefined || apiKey === '') return refused('missingApiKey');
  const { pathname, searchParams } = new URL(url, 'http://ledger.sim');
  const parts = pathname.split('/').slice(1).map(decodeURIComponent);
  try {
    if (method === 'GET' && pathname === '/v1/customer') {
      return { status: 200, body: ledger.customer(apiKey) };
    }
    if (method === 'POST' && pathname === '/v1/movements') {
      const created = ledger.create(apiKey, body as never);
      return { status: created.replayed ? 200 : 201, body: created.movement };
    }
    if (
      method === 'GET' &&
      pathname === '/v1/movements' &&
      searchParams.get('state') === 'pending'
    ) {
      return { status: 200, body: { movements: ledger.listPending(apiKey) } };
    }
    const reference = searchParams.get('reference');
    if (method === 'GET' && pathname === '/v1/movements' && reference !== null) {
      return { status: 200, body: { movements: ledger.listByReference(apiKey, reference) } };
    }
    if (parts[0] === 'v1' && parts[1] === 'movements' && parts[2] !== undefined) {
      const id = parts[2];
      if (method === 'GET' && parts.length === 3)
        return { status: 200, body: ledger.get(apiKey, id) };
      const target = parts[3] === 'post' ? 'posted' : parts[3] === 'void' ? 'voided' : undefined;
      if (method === 'POST' && parts.length === 4 && target) {
        return {
          status: 200,
          body: ledger.resolve(apiKey, id, target, (body ?? {}) as ResolveRequest),
        };
      }
    }
    if (method === 'GET' && parts[0] === 'v1' && parts[1] === 'cards' && parts.length === 3) {
      return { status: 200, body: ledger.cardAccountOf(apiKey, parts[2] as string) };
    }
    if (
      method === 'POST' &&
      parts[1] === 'tills' &&
      parts[3] === 'heartbeat' &&
      parts.length === 4
    ) {
      return { status: 200, body: ledger.heartbeat(apiKey, parts[2] as string, body as never) };
    }
    return (
      cardRulesOverHttp(ledger, method, parts, apiKey, body, ifNoneMatch) ??
      floatsOverHttp(ledger, method, parts, apiKey, body)
    );
  } catch (error) {
    if (!(error instanceof SimLedgerError)) throw error;
    return {
      status: error.status,
      body:
        error.detail === undefined
          ? { error: error.code }
          : { error: error.code, detail: error.detail },
    };
  }
}

/**
 * The card rules' routes (cloud/http/card-routes.ts): the card list, blocks, replacements,
 * corrections and their cancelling, with well-formed bodies (the simulation sends no others).
 */
function cardRulesOverHttp(
  ledger: SimLedger,
  method: string,
  parts: string[],
  apiKey: string,
  body: unknown,
  ifNoneMatch: string | undefined,
): HttpAnswer | undefined {
  const rules = ledger.cardRules;
  const [, what, id, action] = parts;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies as the routes parse them
  const request = (body ?? {}) as any;
  const by = `key:${createHash('sha256').update(apiKey).digest('hex').slice(0, 8)}`;
  if (method === 'GET' && what === 'card-list' && parts.length === 2) {
    const list = rules.list(apiKey);
    const etag = `"${list.seq}"`;
    // Unchanged since the till's copy: 304, no body (cloud/http/card-routes.ts).
    if (ifNoneMatch === etag) return { status: 304, body: undefined, headers: { etag } };
    return { status: 200, body: list, headers: { etag } };
  }
  if (method !== 'POST' || id === undefined || parts.length !== 4) return undefined;
  if (what === 'cards' && (action === 'block' || action === 'unblock')) {
    return { status: 200, body: rules.block(apiKey, id, action === 'block', by, request.reason) };
  }
  const made = (answer: { changed: boolean }) => ({
    status: answer.changed ? 201 : 200,
    body: answer,
  });
  if (what === 'cards' && action === 'replace') {
    return made(rules.replace(apiKey, { ...request, cardId: id, by }));
  }
  if (what === 'cards' && action === 'corrections') {
    return made(rules.correct(apiKey, { ...request, cardId: id, by }));
  }
  if (what === 'card-changes' && action === 'cancel') {
    return { status: 200, body: rules.cancel(apiKey, id, by, request.reason) };
  }
  return undefined;
}

/** The till floats' routes (cloud/http/create-app.ts, floatRoutes). */
function floatsOverHttp(
  ledger: SimLedger,
  method: string,
  parts: string[],
  apiKey: string,
  body: unknown,
): HttpAnswer {
  const floats = ledger.floats;
  const [, what, id, action] = parts;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies as the routes parse them
  const request = (body ?? {}) as any;
  if (method === 'POST' && what === 'floats' && parts.length === 2) {
    const opened = floats.open(apiKey, request);
    return { status: opened.created ? 201 : 200, body: opened.float };
  }
  if (what === 'floats' && id !== undefined) {
    if (method === 'GET' && parts.length === 3)
      return { status: 200, body: floats.get(apiKey, id) };
    if (method === 'POST' && action === 'topups') {
      return { status: 200, body: floats.topUp(apiKey, id, request) };
    }
    if (method === 'POST' && action === 'close') {
      const { tillId, movements = [] } = request;
      return { status: 200, body: floats.close(apiKey, id, tillId, movements) };
    }
  }
  if (method === 'POST' && what === 'float-reports' && parts.length === 2) {
    const { tillId, movements } = request;
    return { status: 200, body: floats.report(apiKey, tillId, movements) };
  }
  if (method === 'GET' && what === 'tills') {
    if (parts.length === 2) return { status: 200, body: { tills: floats.tillsOf(apiKey) } };
    if (parts.length === 4 && action === 'float') {
      return { status: 200, body: floats.openFloatOfTill(apiKey, id as string) };
    }
  }
  return { status: 404, body: { error: 'NotFound' } };
}

/** Per attempt, the chance of each fate (the rest arrive and are answered in time). */
export interface NetworkFaults {
  /** Connection refused at once (the ledger's host is down). */
  refused: number;
  /** Never arrives: the client times out. */
  lostRequest: number;
  /** Carried out; the answer is lost: the client times out. */
  lostAnswer: number;
  /** Arrives after the client gave up, and is carried out then. */
  late: number;
  /** Arrives twice (a proxy that retried). */
  duplicate: number;
  /** Arrives and is answered in time, slowly. */
  slow: number;
  /** 503 before anything is done (the ledger's database does not answer). */
  unavailable: number;
  /** Carried out, then a proxy in front answers 502 with its own page. */
  badGateway: number;
  /** 429 with a Retry-After (sometimes longer than the client waits), nothing done. */
  throttled: number;
}

export const NO_FAULTS: NetworkFaults = {
  refused: 0,
  lostRequest: 0,
  lostAnswer: 0,
  late: 0,
  duplicate: 0,
  slow: 0,
  unavailable: 0,
  badGateway: 0,
  throttled: 0,
};

type Fate = keyof NetworkFaults | 'ok';

/** The network; each worker process gets its own adapter, whose answers die with it. */
export class SimNetwork {
  faults: NetworkFaults = NO_FAULTS;
  /** While true, every connection is refused (an outage). */
  down = false;
  /** How many attempts met each fate, for the run's counts. */
  readonly fates = new Map<Fate, number>();
  /** How often the ledger refused a call, per error code, for the run's counts. */
  readonly refusals = new Map<string, number>();
  /**
   * Creates carried out after the ledger refused a later try of the same movement (a try that
   * was late): the movement exists though its till was last told no. For the run's counts.
   */
  landedAfterRefusal = 0;
  readonly #refusedCreates = new Set<string>();
  readonly #sched: Scheduler;
  readonly #ledger: LedgerEndpoint;

  constructor(sched: Scheduler, ledger: LedgerEndpoint) {
    this.#sched = sched;
    this.#ledger = ledger;
  }

  adapter(life: Life): AxiosAdapter {
    return (config) => {
      const { rng } = this.#sched;
      const fate = this.down ? 'refused' : this.#fate();
      this.fates.set(fate, (this.fates.get(fate) ?? 0) + 1);
      const apiKey = config.headers.get('X-Api-Key');
      const method = (config.method ?? 'get').toUpperCase();
      const url = config.url ?? '/';
      const text = typeof config.data === 'string' && config.data !== '' ? config.data : undefined;
      const body = text === undefined ? undefined : (JSON.parse(text) as unknown);
      const ifNoneMatch = config.headers.get('If-None-Match')?.toString();
      const call: LedgerCall = {
        method,
        url,
        apiKey: apiKey?.toString(),
        body,
        text,
        ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
      };
      const timeout = config.timeout ?? 0;
      return new Promise<AxiosResponse>((resolve, reject) => {
        let done = false;
        const finish = (outcome: () => void) => {
          if (done) return;
          done = true;
          outcome();
        };
        if (timeout > 0) {
          this.#sched.at(
            timeout,
            () =>
              finish(() =>
                reject(new AxiosError(`timeout of ${timeout}ms exceeded`, 'ECONNABORTED', config)),
              ),
            life,
          );
        }
        if (fate === 'refused') {
          this.#sched.at(
            rng.between(1, 5),
            () =>
              finish(() =>
                reject(new AxiosError('connect ECONNREFUSED', AxiosError.ERR_NETWORK, config)),
              ),
            life,
          );
          return;
        }
        if (fate === 'lostRequest') return;
        const there =
          fate === 'late'
            ? rng.between(timeout, 3 * timeout)
            : fate === 'slow'
              ? rng.between(500, Math.max(500, timeout - 500))
              : rng.between(2, 60);
        // The request goes on after its till crashed (the outside world's event).
        this.#sched.at(
          there,
          () => {
            if (fate === 'unavailable') {
              return answered({ status: 503, body: { error: 'DatabaseUnavailable' } });
            }
            if (fate === 'throttled') {
              return answered({
                status: 429,
                body: { error: 'TooManyRequests' },
                headers: { 'retry-after': String(rng.between(0, 7)) },
              });
            }
            return then(this.#ledger(call), (answer) => {
              const done = () => {
                if (method === 'POST' && url.endsWith('/v1/movements')) this.#created(body, answer);
                const code = (answer.body as { error?: unknown } | undefined)?.error;
                if (answer.status >= 400 && typeof code === 'string') {
                  this.refusals.set(code, (this.refusals.get(code) ?? 0) + 1);
                }
                answered(answer);
              };
              // Carried out twice: the second answer goes nowhere.
              return fate === 'duplicate' ? then(this.#ledger(call), done) : done();
            });
          },
          null,
        );
        const answered = (answer: HttpAnswer) => {
          if (fate === 'lostAnswer' || fate === 'late') return;
          const text =
            fate === 'badGateway'
              ? '<html><body>502 Bad Gateway</body></html>'
              : JSON.stringify(answer.body);
          const response: AxiosResponse = {
            data: text,
            status: fate === 'badGateway' ? 502 : answer.status,
            statusText: '',
            headers: {
              'content-type':
                fate === 'badGateway' ? 'text/html' : 'application/json; charset=utf-8',
              ...answer.headers,
            },
            config,
            request: {},
          };
          this.#sched.at(rng.between(2, 60), () => finish(() => resolve(response)), life);
        };
      });
    };
  }

  #created(body: unknown, answer: HttpAnswer): void {
    const id = (body as { id?: string } | undefined)?.id ?? '';
    if (answer.status >= 400 && answer.status < 500) this.#refusedCreates.add(id);
    else if (answer.status === 201 && this.#refusedCreates.has(id)) this.landedAfterRefusal += 1;
  }

  #fate(): Fate {
    const roll = this.#sched.rng.next();
    let edge = 0;
    for (const [fate, p] of Object.entries(this.faults) as [keyof NetworkFaults, number][]) {
      edge += p;
      if (roll < edge) return fate;
    }
    return 'ok';
  }
}

/**
 * `next` of a value now, or of a promised one once it comes: the model's answers stay
 * synchronous (an await would let the tills' work run a turn), the real ledger's are awaited.
 */
export function then<T, R>(
  value: T | Promise<T>,
  next: (value: T) => R | Promise<R>,
): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
