import {
  operations,
  type Answers,
  type SimulatorFaultRequest,
  type SimulatorPlaceRequest,
} from './api.ts';
import { CardWalletError, type ErrorCode, type OperationId } from './errors.ts';
import { readEventStream, type CardWalletEvent } from './events.ts';

export interface CardWalletClientOptions {
  /** The service's API key (the shop's `X-Api-Key`). */
  apiKey: string;
  /** Default `http://127.0.0.1:4178`: the till's own service (use 127.0.0.1, not localhost). */
  baseUrl?: string;
  /** Each attempt gives up after this long (default 15 s: a recharge waits for the card and the ledger). */
  timeoutMs?: number;
  /** Further attempts where a retry is safe (default 2); see `CardWalletClient`. */
  retries?: number;
  /** The first wait before a retry; it doubles each time (default 250 ms). */
  retryDelayMs?: number;
  /** A 429 asking to wait longer than this is not waited for but thrown (default 10 s). */
  maxRetryAfterSeconds?: number;
  /** The fetch to use (default the global one); for tests and instrumentation. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface MoneyCallOptions extends CallOptions {
  /**
   * The movement's Idempotency-Key. Default: a new one for each call. Pass the key of a
   * failed call (`error.idempotencyKey`) to retry that movement: the service then answers
   * what happened to it (once settled) instead of moving money again.
   */
  idempotencyKey?: string;
}

export interface CardEventsOptions extends CallOptions {
  /** Resume after this event id (what `Last-Event-ID` says). */
  lastEventId?: string;
  /** A stream silent for this long (heartbeats come every 15 s) is reconnected (default 45 s). */
  silenceMs?: number;
  /**
   * Called each time the stream could not be opened or broke, before it is tried again, with
   * why (`ServiceUnreachable`, or the refusal: 429 TooManyRequests, a 5xx): for a "connecting"
   * state in the POS. The next event means the stream is open again.
   */
  onReconnect?: (problem: CardWalletError<'cardEvents'>) => void;
}

/** Exactly one of credits or amount (euros, at most 2 decimals). */
export type Recharge = { credits: number; amount?: never } | { amount: number; credits?: never };

type Request = {
  body?: unknown;
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
};

/**
 * The Card Wallet Worker's local HTTP API, one typed method per operation. A failed call
 * rejects with a `CardWalletError` whose `code` is one of the codes that operation documents
 * (narrow it with `isCardWalletError(error, 'rechargeCard')`).
 *
 * Retries follow docs/integrators.md and happen only where they cannot move money twice:
 * - no answer (a dropped connection, a timeout): every call but `simulator.place` is sent
 *   again; a recharge or discharge with the same Idempotency-Key, so the service replays or
 *   finishes the first;
 * - `429 TooManyRequests`: after its Retry-After, when that is at most `maxRetryAfterSeconds`;
 * - `409 IdempotencyKeyInUse` (the first attempt is still running) and `500 CardBusy` (nothing
 *   was done): after a short wait.
 * Everything else is the caller's to decide, in particular `CardRemovedDuringWrite`,
 * `CardAnswerUnverified` and `CardNotResponding`: ask for the card, then call again with
 * `error.idempotencyKey`.
 */
export class CardWalletClient {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryAfterSeconds: number;
  readonly #fetch: typeof fetch;
  #simulated: boolean | undefined;

  constructor(options: CardWalletClientOptions) {
    this.#apiKey = options.apiKey;
    this.#baseUrl = (options.baseUrl ?? 'http://127.0.0.1:4178').replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#retries = options.retries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 10;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /**
   * Whether the service's last answer said it runs the card simulator (the header
   * `Card-Wallet-Simulator: 1`): its cards are not real. Undefined before the first answer.
   */
  get simulated(): boolean | undefined {
    return this.#simulated;
  }

  /** `GET /ping`: `"pong"` when the service is up (no key needed). */
  ping(options: CallOptions = {}): Promise<'pong'> {
    return this.#call('ping', options);
  }

  /** `GET /readcard`: the card on the reader (`rechargeAmount` is always null here). */
  readCard(options: CallOptions = {}): Promise<Answers['readCard']> {
    return this.#call('readCard', options);
  }

  /** `GET /info`: the shop's credits and the price of one credit (strings, from the ledger). */
  info(options: CallOptions = {}): Promise<Answers['info']> {
    return this.#call('info', options);
  }

  /**
   * `POST /writecard`: loads credits (or euros' worth of them, rounded down) onto the card on
   * the reader; `credits` in the answer is the balance after, `rechargeAmount` the euros charged.
   */
  rechargeCard(
    request: Recharge,
    options: MoneyCallOptions = {},
  ): Promise<Answers['rechargeCard']> {
    return this.#call('rechargeCard', {
      ...options,
      body: request,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
  }

  /** `POST /dischargecard`: pays the card's whole balance out (the card goes to 0). */
  dischargeCard(options: MoneyCallOptions = {}): Promise<Answers['dischargeCard']> {
    return this.#call('dischargeCard', {
      ...options,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
  }

  /** `POST /cards/personalize`: gives the card its own keys (needs the till's card master key). */
  personalizeCard(options: CallOptions = {}): Promise<Answers['personalizeCard']> {
    return this.#call('personalizeCard', options);
  }

  /**
   * `POST /cards/settle`: an operator's action. The card on the reader decides the movements
   * other tills of the shop left pending on it (docs/integrators.md, "Several tills").
   */
  settleCard(options: CallOptions = {}): Promise<Answers['settleCard']> {
    return this.#call('settleCard', options);
  }

  /** `GET /openapi.json`: the OpenAPI document of the service's API. */
  openapi(options: CallOptions = {}): Promise<Answers['openapi']> {
    return this.#call('openapi', options);
  }

  /**
   * `GET /events` as an async iterator of reader and card events, for as long as the caller
   * reads (stop with `break` or the signal). A dropped or silent stream is reopened with
   * `Last-Event-ID`, so no event is missed or repeated (the service keeps the last 100); a
   * refusal other than 429 or 5xx (a wrong key, a refused origin) ends it with a
   * CardWalletError. A new stream starts with the reader's state and the card on it, if any.
   */
  async *cardEvents(options: CardEventsOptions = {}): AsyncGenerator<CardWalletEvent> {
    const { signal } = options;
    let lastEventId = options.lastEventId;
    for (let failures = 0; !signal?.aborted; failures += 1) {
      const attempt = new AbortController();
      const stop = () => attempt.abort(signal?.reason);
      signal?.addEventListener('abort', stop);
      let silence: ReturnType<typeof setTimeout> | undefined;
      const awake = () => {
        clearTimeout(silence);
        silence = setTimeout(() => attempt.abort(), options.silenceMs ?? 45_000);
      };
      // Why the stream is not open (any more), to say before trying again.
      let problem: CardWalletError<'cardEvents'>;
      try {
        awake();
        const res = await this.#fetch(this.#url('cardEvents'), {
          headers: {
            ...this.#headers(),
            Accept: 'text/event-stream',
            ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
          },
          signal: attempt.signal,
        });
        this.#noteSimulator(res);
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => '');
          problem = this.#errorOf('cardEvents', res, text, undefined);
          // Too many streams (an old one not closed yet) or a service problem: try again later.
          if (res.status !== 429 && res.status < 500) throw problem;
        } else {
          for await (const event of readEventStream(res.body, awake)) {
            failures = 0;
            lastEventId = event.id;
            yield event;
          }
          problem = this.#unreachable('cardEvents', 'the service ended the event stream');
        }
      } catch (cause) {
        if (cause instanceof CardWalletError) throw cause;
        // Nothing answered, or the stream broke (or went silent and was cut).
        problem = this.#unreachable('cardEvents', `${this.#baseUrl} did not answer`, cause);
      } finally {
        clearTimeout(silence);
        signal?.removeEventListener('abort', stop);
        attempt.abort();
      }
      if (signal?.aborted) return;
      options.onReconnect?.(problem);
      const wait = this.#backoff(failures, problem.retryAfterSeconds);
      await this.#sleep(wait, signal).catch(() => {});
    }
  }

  /** The card simulator's controls (only on a service started with `--simulator`). */
  readonly simulator = {
    /** The card in the field (or null) and every card the simulator has seen. */
    status: (options: CallOptions = {}): Promise<Answers['simulatorStatus']> =>
      this.#call('simulatorStatus', options),
    /** A new card in the field: blank, or holding `credits`; `uid` 8 or 14 hex digits. */
    place: (
      card: SimulatorPlaceRequest = {},
      options: CallOptions = {},
    ): Promise<Answers['simulatorPlace']> =>
      this.#call('simulatorPlace', { ...options, body: card }),
    /** The card leaves the field (the simulator remembers it). */
    takeAway: (options: CallOptions = {}): Promise<Answers['simulatorTakeAway']> =>
      this.#call('simulatorTakeAway', options),
    /** A card seen before comes back, with its memory as it was. */
    putBack: (cardId: string, options: CallOptions = {}): Promise<Answers['simulatorPutBack']> =>
      this.#call('simulatorPutBack', { ...options, body: { cardId } }),
    /** Arms a fault on the card in the field (docs/integrators.md lists what each does). */
    fault: (
      fault: SimulatorFaultRequest['fault'],
      options: CallOptions & { delayMs?: number } = {},
    ): Promise<Answers['simulatorFault']> =>
      this.#call('simulatorFault', {
        signal: options.signal,
        body: options.delayMs === undefined ? { fault } : { fault, delayMs: options.delayMs },
      }),
  };

  async #call<Op extends Exclude<OperationId, 'cardEvents'>>(
    operation: Op,
    request: Request,
  ): Promise<Answers[Op]> {
    const { method } = operations[operation];
    const { body, idempotencyKey, signal } = request;
    const headers: Record<string, string> = this.#headers();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    // A second card placed by a retry would not be the card the caller asked for.
    const resendable = operation !== 'simulatorPlace';
    for (let attempt = 0; ; attempt += 1) {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), this.#timeoutMs);
      const stop = () => timeout.abort();
      signal?.addEventListener('abort', stop);
      let res: Response;
      let text: string;
      try {
        res = await this.#fetch(this.#url(operation), {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: timeout.signal,
        });
        // The answer is not had until its body is: a connection lost on the way is no answer.
        text = await res.text();
      } catch (cause) {
        signal?.throwIfAborted();
        if (resendable && attempt < this.#retries) {
          await this.#sleep(this.#backoff(attempt), signal);
          continue;
        }
        throw this.#unreachable(
          operation,
          timeout.signal.aborted
            ? `no answer from ${this.#baseUrl} within ${this.#timeoutMs} ms`
            : `${this.#baseUrl} did not answer (${(cause as Error).message}): is the service running there, and is this page's origin on its allowlist?`,
          cause,
          idempotencyKey,
        );
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
      }
      this.#noteSimulator(res);
      if (res.ok) return this.#answerOf(operation, res, text, idempotencyKey) as Answers[Op];
      const error = this.#errorOf(operation, res, text, idempotencyKey);
      const wait = this.#retryWait(error, attempt);
      if (wait === undefined) throw error;
      await this.#sleep(wait, signal);
    }
  }

  /** How long to wait before trying a refused call again, or undefined: do not. */
  #retryWait(error: CardWalletError, attempt: number): number | undefined {
    if (attempt >= this.#retries) return undefined;
    const code: string = error.code;
    if (code === 'TooManyRequests') {
      const seconds = error.retryAfterSeconds ?? 1;
      return seconds <= this.#maxRetryAfterSeconds ? seconds * 1000 : undefined;
    }
    if (code === 'IdempotencyKeyInUse' || code === 'CardBusy') return this.#backoff(attempt);
    return undefined;
  }

  #answerOf(
    operation: OperationId,
    res: Response,
    text: string,
    idempotencyKey: string | undefined,
  ): unknown {
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new CardWalletError({
        operation,
        status: res.status,
        code: 'UnexpectedAnswer',
        detail: `${res.status} ${text.slice(0, 100)}`,
        idempotencyKey,
        cause,
      });
    }
  }

  #errorOf<Op extends OperationId>(
    operation: Op,
    res: Response,
    text: string,
    idempotencyKey: string | undefined,
  ): CardWalletError<Op> {
    let answer: { error?: unknown; detail?: unknown } = {};
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      // A 401 may come as text/plain when asked for; anything else is not this API's.
    }
    const retryAfter = Number(res.headers.get('Retry-After') ?? Number.NaN);
    const code = typeof answer.error === 'string' ? answer.error : text.trim();
    const documented = Object.values(operations[operation].errors).some((codes) =>
      (codes as readonly string[]).includes(code),
    );
    return new CardWalletError<Op>({
      operation,
      status: res.status,
      code: documented ? (code as ErrorCode<Op>) : 'UnexpectedAnswer',
      detail:
        typeof answer.detail === 'string'
          ? answer.detail
          : documented
            ? undefined
            : `${res.status} ${text.slice(0, 100)}`,
      retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : undefined,
      idempotencyKey,
    });
  }

  #unreachable<Op extends OperationId>(
    operation: Op,
    detail: string,
    cause?: unknown,
    idempotencyKey?: string,
  ): CardWalletError<Op> {
    return new CardWalletError({
      operation,
      status: 0,
      code: 'ServiceUnreachable',
      detail,
      cause,
      idempotencyKey,
    });
  }

  #headers(): Record<string, string> {
    return { 'X-Api-Key': this.#apiKey, Accept: 'application/json' };
  }

  #url(operation: OperationId): string {
    return `${this.#baseUrl}${operations[operation].path}`;
  }

  #noteSimulator(res: Response): void {
    this.#simulated = res.headers.get('Card-Wallet-Simulator') === '1';
  }

  #backoff(attempt: number, retryAfterSeconds?: number): number {
    const doubled = this.#retryDelayMs * 2 ** Math.min(attempt, 5);
    return Math.max(doubled, (retryAfterSeconds ?? 0) * 1000);
  }

  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const done = () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const aborted = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}

/**
 * A random UUID (version 4) for an Idempotency-Key. Built from getRandomValues, which browsers
 * offer on plain-http pages too (crypto.randomUUID only in secure contexts).
 */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
