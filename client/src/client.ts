import {
  operations,
  type Answers,
  type SimulatorFaultRequest,
  type SimulatorPlaceRequest,
  type SimulatorRateLimitsRequest,
} from './api.ts';
import {
  CardWalletError,
  isCardWalletError,
  type ErrorCode,
  type IdempotencyKeyOf,
  type MoneyOperation,
  type OperationId,
} from './errors.ts';
import { CardEventHub } from './event-hub.ts';
import type { CardWalletEvent } from './events.ts';

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
  /**
   * A 429 asking to wait longer than this is not waited for but thrown (default 10 s); 0 fails
   * fast on every 429. Each call may say otherwise (`CallOptions`).
   */
  maxRetryAfterSeconds?: number;
  /**
   * Called each time the client is about to wait out a 429 (a rate limit), with how long: for
   * the cashier's screen ("waiting 4 s for the service"). Each call may say otherwise.
   */
  onRateLimitWait?: (wait: RateLimitWait) => void;
  /** The fetch to use (default the global one); for tests and instrumentation. */
  fetch?: typeof fetch;
}

/** A wait for a rate limit the client is about to make, before it sends the call again. */
export interface RateLimitWait {
  operation: OperationId;
  /** The service's Retry-After. */
  seconds: number;
  /** When the call is sent again. */
  until: Date;
  /** The 429 being waited out. */
  error: CardWalletError;
}

export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** For this call: the longest Retry-After to wait out (0: fail fast on a 429). */
  maxRetryAfterSeconds?: number;
  /** For this call: told before each wait for a rate limit. */
  onRateLimitWait?: (wait: RateLimitWait) => void;
}

/**
 * Options of a recharge or discharge. Without `idempotencyKey` the call is a new movement,
 * with a new key. With one (a key the POS keeps itself) it is that movement: the service
 * answers what happened to it instead of moving money again. To retry a movement that failed,
 * `wallet.retry(error)` is the safe way. A key that may be undefined does not compile (an
 * inline `{ idempotencyKey }` of type `string | undefined`), and is refused with a TypeError:
 * a lost key never turns a retry into a second payment.
 */
export interface MoneyCallOptions extends CallOptions {
  /**
   * The POS's own reference of the sale (its id, 1 to 80 printable ASCII characters, no
   * space at either end), sent as the `Pos-Reference` header: kept with the movement at the
   * ledger, and the key to find it again.
   */
  reference?: string;
  /** The movement's Idempotency-Key (see above). */
  idempotencyKey?: string;
}

/** A new movement: no key. */
type NewMovementOptions = Omit<MoneyCallOptions, 'idempotencyKey'>;
/** The movement a key the caller keeps names. */
type KeyedMovementOptions = NewMovementOptions & { idempotencyKey: string };

/** Options of `waitForCard`. */
export interface WaitForCardOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Stops waiting after this long: the promise rejects with a `TimeoutError` DOMException. */
  timeout?: number;
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

type Request = CallOptions & {
  /** The path with its parameters filled in (default: the operation's). */
  path?: string;
  body?: unknown;
  idempotencyKey?: string | undefined;
  reference?: string | undefined;
};

/** What a money call sent, kept on its error (under this symbol) for `retry`. */
const SENT = Symbol.for('card-wallet-worker-client.sent');
interface Sent {
  operation: MoneyOperation;
  body: unknown;
  idempotencyKey: string;
  reference: string | undefined;
}

/** The `Pos-Reference` header's rule (the service checks it too). */
const REFERENCE = /^[\x21-\x7e](?:[\x20-\x7e]{0,78}[\x21-\x7e])?$/;

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
 * `CardAnswerUnverified` and `CardNotResponding`: ask for the card, then `wallet.retry(error)`.
 */
export class CardWalletClient {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryAfterSeconds: number;
  readonly #onRateLimitWait: ((wait: RateLimitWait) => void) | undefined;
  readonly #fetch: typeof fetch;
  readonly #events: CardEventHub;
  #simulated: boolean | undefined;

  constructor(options: CardWalletClientOptions) {
    this.#apiKey = options.apiKey;
    this.#baseUrl = (options.baseUrl ?? 'http://127.0.0.1:4178').replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#retries = options.retries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 10;
    this.#onRateLimitWait = options.onRateLimitWait;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#events = new CardEventHub({
      baseUrl: this.#baseUrl,
      open: async (lastEventId, signal) => {
        const res = await this.#fetch(this.#url('cardEvents'), {
          headers: {
            ...this.#headers(),
            Accept: 'text/event-stream',
            ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
          },
          signal,
        });
        this.#noteSimulator(res);
        return res;
      },
      refusal: (res, text) => this.#errorOf('cardEvents', res, text, undefined),
      unreachable: (detail, cause) => this.#unreachable('cardEvents', detail, cause, undefined),
      backoff: (failures, retryAfterSeconds) => this.#backoff(failures, retryAfterSeconds),
      sleep: (ms, signal) => this.#sleep(ms, signal),
    });
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
   * Without `options.idempotencyKey` it is a new movement. On failure, `wallet.retry(error)`
   * retries that same movement.
   */
  rechargeCard(request: Recharge, options?: NewMovementOptions): Promise<Answers['rechargeCard']>;
  rechargeCard(request: Recharge, options: KeyedMovementOptions): Promise<Answers['rechargeCard']>;
  rechargeCard(
    request: Recharge,
    options: MoneyCallOptions = {},
  ): Promise<Answers['rechargeCard']> {
    return this.#movement('rechargeCard', request, options);
  }

  /**
   * `POST /dischargecard`: pays the card's whole balance out (the card goes to 0). Without
   * `options.idempotencyKey` it is a new movement. On failure, `wallet.retry(error)` retries
   * that same movement.
   */
  dischargeCard(options?: NewMovementOptions): Promise<Answers['dischargeCard']>;
  dischargeCard(options: KeyedMovementOptions): Promise<Answers['dischargeCard']>;
  dischargeCard(options: MoneyCallOptions = {}): Promise<Answers['dischargeCard']> {
    return this.#movement('dischargeCard', undefined, options);
  }

  /**
   * `POST /cards/undo`: a cashier's undo of this till's recharge `movementId` (the `movementId`
   * of a `rechargeCard` answer) from the card on the reader, online only, inside the shop's undo
   * window, while it is still the card's newest write (docs/integrators.md, "Undoing a
   * recharge"). `refundedAmount` in the answer is the euros to give back. A refusal is a
   * `CardWalletError` with its own code (`UndoWindowPassed`, `AlreadyUndone`, ...). Without
   * `options.idempotencyKey` it is a new movement. On failure, `wallet.retry(error)` retries
   * that same undo.
   */
  undoRecharge(
    movementId: string,
    options?: Omit<NewMovementOptions, 'reference'>,
  ): Promise<Answers['undoRecharge']>;
  undoRecharge(
    movementId: string,
    options: Omit<KeyedMovementOptions, 'reference'>,
  ): Promise<Answers['undoRecharge']>;
  undoRecharge(
    movementId: string,
    options: Omit<MoneyCallOptions, 'reference'> = {},
  ): Promise<Answers['undoRecharge']> {
    return this.#movement('undoRecharge', { movementId }, options);
  }

  /**
   * Retries the recharge or discharge that failed with `error`: the same request, the same
   * Idempotency-Key and reference, so the service answers what became of that movement (the
   * 200 it could not give, once it is settled) or carries it out now, once; never a second
   * movement. Only a recharge's or discharge's error is taken (narrow it first with
   * `isCardWalletError(error, 'rechargeCard')` or `isMoneyError(error)`).
   */
  retry<Op extends MoneyOperation>(
    error: CardWalletError<Op>,
    options: CallOptions = {},
  ): Promise<Answers[Op]> {
    const sent = (error as unknown as Record<symbol, Sent | undefined>)[SENT];
    if (!isCardWalletError(error) || sent === undefined) {
      return Promise.reject(
        new TypeError('retry: not the error of a recharge or discharge made by this client'),
      );
    }
    return this.#send(sent, options) as Promise<Answers[Op]>;
  }

  /**
   * `GET /movements/{id}`: a movement of the shop by its id (a receipt's `movementId`): its
   * state, whether the ledger has it yet, and any compensation.
   */
  movement(id: string, options: CallOptions = {}): Promise<Answers['movement']> {
    return this.#call('movement', { ...options, path: `/movements/${encodeURIComponent(id)}` });
  }

  /**
   * `GET /movements?reference=`: every movement of the shop sent with this POS reference,
   * newest first (a reference need not be unique).
   */
  async movements(
    query: { reference: string },
    options: CallOptions = {},
  ): Promise<Answers['movements']['movements']> {
    const path = `/movements?reference=${encodeURIComponent(query.reference)}`;
    return (await this.#call('movements', { ...options, path })).movements;
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

  /**
   * `GET /quote?amount=`: what a recharge of `amount` euros (a decimal string, like `"20.00"`)
   * buys before paying, by the shop's price and bonus tiers: `paidCredits`, `bonusCredits`,
   * `credits` (their sum), `rechargeAmount` and `creditCost` (strings). `offline` is true when
   * the ledger could not be reached: then it is by what the till learnt last.
   */
  quote(amount: string, options: CallOptions = {}): Promise<Answers['quote']> {
    return this.#call('quote', { ...options, path: `/quote?amount=${encodeURIComponent(amount)}` });
  }

  /**
   * `POST /cards/holder`: puts a holder label (a name or phone number) on the card on the
   * reader, at the ledger; `null` deletes it. Answers the label now and whether it changed.
   */
  setHolderLabel(
    label: string | null,
    options: CallOptions = {},
  ): Promise<Answers['setHolderLabel']> {
    return this.#call('setHolderLabel', { ...options, body: { label } });
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
   * CardWalletError. It starts with the reader's state and the card on it, if any. Every
   * iterator and `waitForCard` of one client share one stream (the service allows 3 per key).
   */
  cardEvents(options: CardEventsOptions = {}): AsyncGenerator<CardWalletEvent> {
    return this.#events.subscribe(options);
  }

  /**
   * Waits for a card on the reader, without polling: on the card events (the stream
   * `cardEvents()` uses), it reads each card placed, once (`GET /readcard`), and resolves with
   * the first it reads, or with the card already on the reader. A card taken off before it is
   * read is waited past; another failure of the read (a card of another system, a rate limit
   * longer than allowed) rejects with its CardWalletError. Aborted by `signal`, or after
   * `timeout` ms (a `TimeoutError` DOMException).
   */
  async waitForCard(options: WaitForCardOptions = {}): Promise<Answers['readCard']> {
    const { signal, timeout } = options;
    signal?.throwIfAborted();
    const waiting = new AbortController();
    const stop = () => waiting.abort(signal?.reason);
    signal?.addEventListener('abort', stop);
    const timer =
      timeout === undefined
        ? undefined
        : setTimeout(
            () =>
              waiting.abort(
                new DOMException(`no card was placed within ${timeout} ms`, 'TimeoutError'),
              ),
            timeout,
          );
    try {
      for await (const event of this.cardEvents({ signal: waiting.signal })) {
        if (event.type !== 'card' || event.data.type !== 'present') continue;
        try {
          return await this.readCard({ signal: waiting.signal });
        } catch (error) {
          // Taken off before it was read: wait for the next one.
          if (!isCardWalletError(error, 'readCard') || error.code !== 'NoCard') throw error;
        }
      }
      throw waiting.signal.reason;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      waiting.abort();
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
    /**
     * The endpoints' rate limits; with `changes`, sets those first (`null`: back to the spec's
     * window). For integration tests: only a service running the simulator has this.
     */
    rateLimits: (
      changes?: SimulatorRateLimitsRequest,
      options: CallOptions = {},
    ): Promise<Answers['simulatorRateLimits']> =>
      changes === undefined
        ? this.#call('simulatorRateLimits', options)
        : this.#call('simulatorSetRateLimits', { ...options, body: changes }),
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

  /** A recharge or discharge: a new movement, or the one the caller's key names. */
  #movement<Op extends MoneyOperation>(
    operation: Op,
    body: unknown,
    options: MoneyCallOptions,
  ): Promise<Answers[Op]> {
    if ('idempotencyKey' in options && typeof options.idempotencyKey !== 'string') {
      return Promise.reject(
        new TypeError(
          `${operation}: idempotencyKey is ${String(options.idempotencyKey)}: to retry a movement that failed, call wallet.retry(error); to start a new one, leave idempotencyKey out`,
        ),
      );
    }
    const { reference } = options;
    if (reference !== undefined && !REFERENCE.test(reference)) {
      return Promise.reject(
        new TypeError(
          `${operation}: reference must be 1 to 80 printable ASCII characters without a space at either end (got ${JSON.stringify(reference)})`,
        ),
      );
    }
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    return this.#send({ operation, body, idempotencyKey, reference }, options) as Promise<
      Answers[Op]
    >;
  }

  /** Sends a movement; its error keeps what was sent, for `retry`. */
  async #send(sent: Sent, options: CallOptions): Promise<unknown> {
    try {
      return await this.#call(sent.operation, { ...options, ...sent });
    } catch (error) {
      if (isCardWalletError(error)) Object.defineProperty(error, SENT, { value: sent });
      throw error;
    }
  }

  async #call<Op extends Exclude<OperationId, 'cardEvents'>>(
    operation: Op,
    request: Request,
  ): Promise<Answers[Op]> {
    const { method } = operations[operation];
    const { body, idempotencyKey, reference, signal } = request;
    const headers: Record<string, string> = this.#headers();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    if (reference !== undefined) headers['Pos-Reference'] = reference;
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
        res = await this.#fetch(this.#url(operation, request.path), {
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
            : `${this.#baseUrl} did not answer (${(cause as Error).message}): ${IN_A_PAGE ? "is the service running there, and is this page's origin on its allowlist?" : 'is the service running there, on that port?'}`,
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
      const wait = this.#retryWait(error, attempt, request);
      if (wait === undefined) throw error;
      await this.#sleep(wait, signal);
    }
  }

  /** How long to wait before trying a refused call again, or undefined: do not. */
  #retryWait(error: CardWalletError, attempt: number, options: CallOptions): number | undefined {
    if (attempt >= this.#retries) return undefined;
    const code: string = error.code;
    if (code === 'TooManyRequests') {
      const seconds = error.retryAfterSeconds ?? 1;
      if (seconds > (options.maxRetryAfterSeconds ?? this.#maxRetryAfterSeconds)) return undefined;
      const until = new Date(Date.now() + seconds * 1000);
      (options.onRateLimitWait ?? this.#onRateLimitWait)?.({
        operation: error.operation,
        seconds,
        until,
        error,
      });
      return seconds * 1000;
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
        idempotencyKey: idempotencyKey as IdempotencyKeyOf<OperationId>,
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
      idempotencyKey: idempotencyKey as IdempotencyKeyOf<Op>,
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
      idempotencyKey: idempotencyKey as IdempotencyKeyOf<Op>,
    });
  }

  #headers(): Record<string, string> {
    return { 'X-Api-Key': this.#apiKey, Accept: 'application/json' };
  }

  #url(operation: OperationId, path?: string): string {
    return `${this.#baseUrl}${path ?? operations[operation].path}`;
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

/** In a web page (a browser refuses an origin off the allowlist as if nothing answered). */
const IN_A_PAGE = 'document' in globalThis;

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
