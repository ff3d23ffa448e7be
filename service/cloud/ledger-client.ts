import axios, { type AxiosAdapter, type AxiosInstance, type AxiosResponse } from 'axios';
import { EventEmitter } from 'node:events';
import { errors, type AppError } from '../errors.ts';

import {
  ledgerErrorCodes,
  type BonusQuote,
  type CardAccount as LedgerCardAccount,
  type CardList,
  type CloseFloatRequest,
  type Customer as LedgerCustomer,
  type Float as LedgerFloat,
  type FloatClosing,
  type FloatReportAnswer,
  type FloatReportRequest,
  type FloatTopUpAnswer,
  type FloatTopUpRequest,
  type HolderLabelAnswer,
  type Movement as LedgerMovement,
  type MovementRequest,
  type OpenFloatRequest,
  type ResolveRequest,
  type TillHeartbeat,
  type TillState,
} from '../../common/ledger-contract.ts';

export type { LedgerCardAccount, LedgerCustomer, LedgerFloat, LedgerMovement };

/** A new movement (contract v1's request shape). */
export type NewMovement = MovementRequest;

export interface LedgerClientOptions {
  baseUrl: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Further attempts after the first, for calls that are safe to repeat. */
  retries?: number;
  /** First backoff; doubles per attempt, with jitter. */
  backoffMs?: number;
  /** The longest Retry-After honoured before giving up. */
  maxRetryAfterMs?: number;
  /**
   * The ledger is still opening (the embedded one): every call waits for this before its first
   * attempt, so the timeouts count from when the ledger can answer. Its failure fails each call
   * with LedgerUnavailable, nothing sent.
   */
  opened?: Promise<unknown>;
  /**
   * Seams for the deterministic simulation (test/simulation), which runs this client over a
   * simulated network in virtual time; the service leaves them out. `adapter`: axios's
   * transport (default: node's http); `time`: the clock of Retry-After dates and the waits
   * between attempts (default: the wall clock and timers); `random`: the backoff's jitter
   * (default: Math.random).
   */
  adapter?: AxiosAdapter;
  time?: LedgerClientTime;
  random?: () => number;
}

export interface LedgerClientTime {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realTime: LedgerClientTime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The most pending movements one reconciliation reads per shop (the ledger's list maximum). */
const PENDING_LIST_LIMIT = 1000;

/**
 * Failures of calls whose every attempt the ledger answered without doing anything (a refusal,
 * a 429): it certainly did nothing. Any other failure may hide an attempt that was carried out,
 * or is still on its way (no answer, a timeout, a 5xx).
 */
const answeredWithoutEffect = new WeakSet<object>();

/**
 * Whether the call that failed with `error` may nonetheless have been carried out by the
 * ledger. For a create: the movement may exist, or arrive later. Only this client's own
 * failures can say no.
 */
export function mayHaveLanded(error: unknown): boolean {
  return typeof error !== 'object' || error === null || !answeredWithoutEffect.has(error);
}

/** Whether the ledger answered its last call; for the tray and operators. */
export interface LedgerReachability {
  reachable: boolean | null;
  at: Date | null;
}

/**
 * An answer the ledger gave on purpose (a 4xx with its error code), as opposed to not answering.
 * Use cases turn `code` into the spec's errors where it matters (NoCredits, KeyNotAssigned).
 */
export class LedgerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** The ledger's `detail`: which field, or what is in the way. */
    readonly detail?: string,
  ) {
    super(`ledger refused: ${status} ${code}${detail ? ` (${detail})` : ''}`);
    this.name = 'LedgerRefusal';
  }
}

/**
 * The worker's only way to the cloud ledger (contract v1, docs/cloud-api.md). Every call
 * carries the integrator's own X-Api-Key. All calls are safe to repeat: GETs by nature,
 * movement calls because the worker picks the movement id and the ledger replays the first
 * answer for a repeated id. So network errors, timeouts, 5xx and 429 are retried with backoff
 * (429 after its Retry-After); a 4xx refusal is final and comes back as LedgerRefusal, mapped
 * to the spec's codes where the spec has one. Giving up is LedgerUnavailable.
 */
export class LedgerClient extends EventEmitter<{ reachability: [LedgerReachability] }> {
  readonly #http: AxiosInstance;
  readonly #baseUrl: string;
  #reachability: LedgerReachability = { reachable: null, at: null };
  #lastAnsweredAt: number | null = null;
  readonly #retries: number;
  readonly #backoffMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #opened: Promise<unknown> | undefined;
  readonly #time: LedgerClientTime;
  readonly #random: () => number;

  constructor(options: LedgerClientOptions) {
    super();
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#http = axios.create({
      ...(options.adapter ? { adapter: options.adapter } : {}),
      baseURL: this.#baseUrl,
      timeout: options.timeoutMs ?? 5_000,
      // Every status comes back as a response; this class decides what is an error.
      validateStatus: () => true,
      maxRedirects: 0,
      proxy: false,
      headers: { Accept: 'application/json' },
    });
    this.#retries = options.retries ?? 2;
    this.#backoffMs = options.backoffMs ?? 200;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 5_000;
    this.#opened = options.opened;
    this.#time = options.time ?? realTime;
    this.#random = options.random ?? Math.random;
  }

  get reachability(): LedgerReachability {
    return this.#reachability;
  }

  /** When the ledger last answered a call (a refusal too): null before the first answer. */
  get lastAnsweredAt(): number | null {
    return this.#lastAnsweredAt;
  }

  getCustomer(apiKey: string): Promise<LedgerCustomer> {
    return this.#call<LedgerCustomer>(apiKey, 'GET', '/v1/customer');
  }

  createMovement(apiKey: string, movement: NewMovement): Promise<LedgerMovement> {
    return this.#call<LedgerMovement>(apiKey, 'POST', '/v1/movements', movement);
  }

  /** Posts a pending movement; `by` names the till (and its evidence, for another till's). */
  postMovement(apiKey: string, id: string, by?: ResolveRequest): Promise<LedgerMovement> {
    return this.#call<LedgerMovement>(
      apiKey,
      'POST',
      `/v1/movements/${encodeURIComponent(id)}/post`,
      by,
    );
  }

  voidMovement(apiKey: string, id: string, by?: ResolveRequest): Promise<LedgerMovement> {
    return this.#call<LedgerMovement>(
      apiKey,
      'POST',
      `/v1/movements/${encodeURIComponent(id)}/void`,
      by,
    );
  }

  /** What the key's shop has put on a card, and the card's latest movements there. */
  getCardAccount(apiKey: string, cardId: string): Promise<LedgerCardAccount> {
    return this.#call<LedgerCardAccount>(apiKey, 'GET', `/v1/cards/${encodeURIComponent(cardId)}`);
  }

  /** What an amount buys now at the shop's price and bonus tiers, before paying. */
  getBonusQuote(apiKey: string, amount: string): Promise<BonusQuote> {
    return this.#call<BonusQuote>(
      apiKey,
      'GET',
      `/v1/bonus-quote?amount=${encodeURIComponent(amount)}`,
    );
  }

  /** Puts a holder label on a card (null: deletes it); answers the label now. */
  setHolderLabel(apiKey: string, cardId: string, label: string | null): Promise<HolderLabelAnswer> {
    const path = `/v1/cards/${encodeURIComponent(cardId)}/holder`;
    return label === null
      ? this.#call<HolderLabelAnswer>(apiKey, 'DELETE', path)
      : this.#call<HolderLabelAnswer>(apiKey, 'PUT', path, { label });
  }

  /** The shop's pending movements, oldest last (for reconciliation). */
  async listPendingMovements(apiKey: string): Promise<LedgerMovement[]> {
    const answer = await this.#call<{ movements: LedgerMovement[] }>(
      apiKey,
      'GET',
      `/v1/movements?state=pending&limit=${PENDING_LIST_LIMIT}`,
    );
    return answer.movements;
  }

  /** The shop's movements with a POS reference, newest first (a receipt's lookup). */
  async listMovementsByReference(apiKey: string, reference: string): Promise<LedgerMovement[]> {
    const answer = await this.#call<{ movements: LedgerMovement[] }>(
      apiKey,
      'GET',
      `/v1/movements?reference=${encodeURIComponent(reference)}`,
    );
    return answer.movements;
  }

  /** This till's heartbeat; the answer is the till as the ledger knows it (its name). */
  sendHeartbeat(apiKey: string, tillId: string, heartbeat: TillHeartbeat): Promise<TillState> {
    return this.#call<TillState>(
      apiKey,
      'POST',
      `/v1/tills/${encodeURIComponent(tillId)}/heartbeat`,
      heartbeat,
    );
  }

  /**
   * The shop's card list (blocked cards, changes waiting for cards); with the `seq` of the list
   * held, null while it is still that one (304: one indexed read at the ledger).
   */
  getCardList(apiKey: string, heldSeq?: number): Promise<CardList | null> {
    return this.#call<CardList | null>(
      apiKey,
      'GET',
      '/v1/card-list',
      undefined,
      heldSeq === undefined ? undefined : `"${heldSeq}"`,
    );
  }

  getMovement(apiKey: string, id: string): Promise<LedgerMovement> {
    return this.#call<LedgerMovement>(apiKey, 'GET', `/v1/movements/${encodeURIComponent(id)}`);
  }

  /** The till's float (docs/cloud-api.md, "Till floats"): idempotent by its request id. */
  openFloat(apiKey: string, request: OpenFloatRequest): Promise<LedgerFloat> {
    return this.#call<LedgerFloat>(apiKey, 'POST', '/v1/floats', request);
  }

  /** A top-up of the float, idempotent by its id. */
  topUpFloat(
    apiKey: string,
    floatId: string,
    request: FloatTopUpRequest,
  ): Promise<FloatTopUpAnswer> {
    return this.#call<FloatTopUpAnswer>(
      apiKey,
      'POST',
      `/v1/floats/${encodeURIComponent(floatId)}/topups`,
      request,
    );
  }

  /** Float recharges (and ones found on cards), each answered on its own. */
  reportFloatMovements(apiKey: string, report: FloatReportRequest): Promise<FloatReportAnswer> {
    return this.#call<FloatReportAnswer>(apiKey, 'POST', '/v1/float-reports', report);
  }

  closeFloat(apiKey: string, floatId: string, request: CloseFloatRequest): Promise<FloatClosing> {
    return this.#call<FloatClosing>(
      apiKey,
      'POST',
      `/v1/floats/${encodeURIComponent(floatId)}/close`,
      request,
    );
  }

  getFloat(apiKey: string, floatId: string): Promise<LedgerFloat> {
    return this.#call<LedgerFloat>(apiKey, 'GET', `/v1/floats/${encodeURIComponent(floatId)}`);
  }

  /** The till's open float at the ledger (FloatNotFound: none). */
  getTillFloat(apiKey: string, tillId: string): Promise<LedgerFloat> {
    return this.#call<LedgerFloat>(apiKey, 'GET', `/v1/tills/${encodeURIComponent(tillId)}/float`);
  }

  async #call<T>(
    apiKey: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    /** An If-None-Match: a 304 then answers null. */
    etag?: string,
  ): Promise<T> {
    let lastProblem: unknown;
    // An attempt without an answer, or with a 5xx, may have been carried out all the same.
    let unanswered = false;
    const failure = (error: Error): Error => {
      if (!unanswered) answeredWithoutEffect.add(error);
      return error;
    };
    try {
      await this.#opened;
    } catch (error) {
      this.#reached(false);
      throw failure(errors.ledgerUnavailable(error));
    }
    for (let attempt = 0; attempt <= this.#retries; attempt += 1) {
      let response: AxiosResponse<unknown>;
      try {
        response = await this.#http.request({
          method,
          url: path,
          data: body,
          headers: {
            'X-Api-Key': apiKey,
            ...(etag === undefined ? {} : { 'If-None-Match': etag }),
          },
        });
      } catch (error) {
        // No answer at all: refused, reset, DNS, or the per-attempt timeout.
        lastProblem = error;
        unanswered = true;
        if (attempt < this.#retries) await this.#time.sleep(this.#backoff(attempt));
        continue;
      }
      if (etag !== undefined && response.status === 304) {
        this.#reached(true);
        return null as T;
      }
      if (!isContractAnswer(response)) {
        // Something answers there, but not the ledger (a web server, a captive portal, a
        // proxy's error page): no retry makes it one, and the URL is what to check.
        this.#reached(false);
        throw failure(
          errors.ledgerUnavailable(
            new Error(`${method} ${path} answered ${response.status} ${contentType(response)}`),
            `${this.#baseUrl} is not a card wallet ledger: it answered ${method} ${path} with ${response.status} ${contentType(response)}; check --cloud-url`,
          ),
        );
      }
      if (response.status >= 200 && response.status < 300) {
        this.#reached(true);
        return response.data as T;
      }
      if (response.status === 429 || response.status >= 500) {
        lastProblem = new Error(`answered ${response.status}`);
        // 429 is refused before anything is done; a 5xx may come after the work.
        if (response.status >= 500) unanswered = true;
        const retryAfter = retryAfterMs(response.headers['retry-after'], this.#time.now());
        if (retryAfter !== undefined && retryAfter > this.#maxRetryAfterMs) break;
        if (attempt < this.#retries) await this.#time.sleep(retryAfter ?? this.#backoff(attempt));
        continue;
      }
      this.#reached(true);
      throw failure(refusal(response));
    }
    this.#reached(false);
    throw failure(
      errors.ledgerUnavailable(
        lastProblem,
        `the ledger at ${this.#baseUrl} did not answer ${method} ${path}: ${problemOf(lastProblem)}`,
      ),
    );
  }

  #reached(reachable: boolean): void {
    if (reachable) this.#lastAnsweredAt = this.#time.now();
    const changed = this.#reachability.reachable !== reachable;
    this.#reachability = { reachable, at: new Date(this.#time.now()) };
    if (changed) this.emit('reachability', this.#reachability);
  }

  #backoff(attempt: number): number {
    const base = this.#backoffMs * 2 ** attempt;
    return base / 2 + this.#random() * (base / 2);
  }
}

/**
 * Whether an answer is in the ledger's contract: a JSON object, and for a refusal one with its
 * `error` code. A 5xx or 429 without one is still an outage (retried); anything else is not.
 */
function isContractAnswer(response: AxiosResponse<unknown>): boolean {
  const data = response.data;
  if (response.status === 429 || response.status >= 500) return true;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  return response.status < 300 || typeof (data as { error?: unknown }).error === 'string';
}

function contentType(response: AxiosResponse<unknown>): string {
  const type = response.headers['content-type'];
  return typeof type === 'string' && type !== '' ? type.split(';')[0]!.trim() : 'no content type';
}

function problemOf(problem: unknown): string {
  return problem instanceof Error ? problem.message : String(problem);
}

function refusal(response: AxiosResponse<unknown>): AppError | LedgerRefusal {
  const data = response.data as { error?: unknown; detail?: unknown } | undefined;
  const code = typeof data?.error === 'string' ? data.error : `HTTP ${response.status}`;
  const detail = typeof data?.detail === 'string' ? data.detail : undefined;
  if (response.status === 401) {
    return code === 'Unauthorized: missing api key'
      ? errors.missingApiKey()
      : errors.invalidApiKey();
  }
  if (response.status === 403 && code === ledgerErrorCodes.keyNotAssigned.code)
    return errors.missingCustomer();
  return new LedgerRefusal(response.status, code, detail);
}

function retryAfterMs(header: unknown, now: number): number | undefined {
  if (typeof header !== 'string') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
