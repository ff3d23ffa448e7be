import type { CardWalletError } from './errors.ts';
import {
  readEventStream,
  type CardEvent,
  type CardWalletEvent,
  type ReaderEvent,
} from './events.ts';

/** What the hub needs of the client to open `GET /events` and to word its problems. */
export interface EventTransport {
  readonly baseUrl: string;
  open(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
  refusal(res: Response, text: string): CardWalletError<'cardEvents'>;
  unreachable(detail: string, cause?: unknown): CardWalletError<'cardEvents'>;
  backoff(failures: number, retryAfterSeconds?: number): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface SubscribeOptions {
  signal?: AbortSignal | undefined;
  lastEventId?: string | undefined;
  silenceMs?: number | undefined;
  onReconnect?: ((problem: CardWalletError<'cardEvents'>) => void) | undefined;
}

interface Subscriber {
  queue: CardWalletEvent[];
  wake: (() => void) | undefined;
  failure: CardWalletError<'cardEvents'> | undefined;
  ended: boolean;
  onReconnect: SubscribeOptions['onReconnect'];
}

/** Events kept for a reader that joins with a Last-Event-ID (the service keeps as many). */
const KEPT = 100;

/**
 * One `GET /events` stream per client, shared by every `cardEvents()` reader and every
 * `waitForCard()`: the service allows 3 open streams per API key, and a POS that waits for a
 * tap while showing the reader's state must not use two. The stream opens with the first
 * reader and closes with the last. A reader that joins an open stream starts, as a new stream
 * would, with the reader's state and the card on it, or, with a Last-Event-ID the hub still
 * keeps, with the events after it. A dropped or silent stream is reopened with Last-Event-ID.
 */
export class CardEventHub {
  readonly #transport: EventTransport;
  readonly #subscribers = new Set<Subscriber>();
  #recent: CardWalletEvent[] = [];
  #reader: ReaderEvent | undefined;
  #card: CardEvent | undefined;
  #lastEventId: string | undefined;
  #connection: AbortController | undefined;

  constructor(transport: EventTransport) {
    this.#transport = transport;
  }

  async *subscribe(options: SubscribeOptions): AsyncGenerator<CardWalletEvent> {
    const { signal } = options;
    if (signal?.aborted) return;
    const subscriber: Subscriber = {
      queue: this.#connection ? this.#catchUp(options.lastEventId) : [],
      wake: undefined,
      failure: undefined,
      ended: false,
      onReconnect: options.onReconnect,
    };
    this.#subscribers.add(subscriber);
    const leave = () => {
      subscriber.ended = true;
      this.#leave(subscriber);
      subscriber.wake?.();
    };
    signal?.addEventListener('abort', leave);
    if (!this.#connection) this.#connect(options);
    try {
      for (;;) {
        const event = subscriber.queue.shift();
        if (event) {
          yield event;
          continue;
        }
        if (subscriber.failure) throw subscriber.failure;
        if (subscriber.ended) return;
        await new Promise<void>((resolve) => (subscriber.wake = resolve));
        subscriber.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', leave);
      this.#leave(subscriber);
    }
  }

  /** What a reader joining the open stream gets first. */
  #catchUp(lastEventId: string | undefined): CardWalletEvent[] {
    const seen =
      lastEventId === undefined ? -1 : this.#recent.findIndex((e) => e.id === lastEventId);
    if (seen >= 0) return this.#recent.slice(seen + 1);
    return [this.#reader, this.#card].filter((event) => event !== undefined);
  }

  #leave(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0) return;
    this.#connection?.abort();
    this.#connection = undefined;
  }

  #publish(event: CardWalletEvent): void {
    this.#lastEventId = event.id;
    this.#recent.push(event);
    if (this.#recent.length > KEPT) this.#recent.shift();
    if (event.type === 'reader') this.#reader = event;
    else if (event.data.type === 'present') this.#card = event;
    else if (this.#card?.data.cardId === event.data.cardId) this.#card = undefined;
    for (const subscriber of this.#subscribers) {
      subscriber.queue.push(event);
      subscriber.wake?.();
    }
  }

  #connect(options: SubscribeOptions): void {
    const connection = new AbortController();
    this.#connection = connection;
    this.#recent = [];
    this.#reader = undefined;
    this.#card = undefined;
    this.#lastEventId = options.lastEventId;
    void this.#run(connection.signal, options.silenceMs ?? 45_000);
  }

  async #run(signal: AbortSignal, silenceMs: number): Promise<void> {
    const transport = this.#transport;
    for (let failures = 0; !signal.aborted; failures += 1) {
      const attempt = new AbortController();
      const stop = () => attempt.abort(signal.reason);
      signal.addEventListener('abort', stop);
      let silence: ReturnType<typeof setTimeout> | undefined;
      const awake = () => {
        clearTimeout(silence);
        silence = setTimeout(() => attempt.abort(), silenceMs);
      };
      // Why the stream is not open (any more), to say before trying again.
      let problem: CardWalletError<'cardEvents'>;
      try {
        awake();
        const res = await transport.open(this.#lastEventId, attempt.signal);
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => '');
          problem = transport.refusal(res, text);
          // Too many streams (an old one not closed yet) or a service problem: try again later.
          if (res.status !== 429 && res.status < 500) {
            this.#fail(problem);
            return;
          }
        } else {
          for await (const event of readEventStream(res.body, awake)) {
            failures = 0;
            this.#publish(event);
          }
          problem = transport.unreachable('the service ended the event stream');
        }
      } catch (cause) {
        // Nothing answered, or the stream broke (or went silent and was cut).
        problem = transport.unreachable(`${transport.baseUrl} did not answer`, cause);
      } finally {
        clearTimeout(silence);
        signal.removeEventListener('abort', stop);
        attempt.abort();
      }
      if (signal.aborted) return;
      for (const subscriber of this.#subscribers) subscriber.onReconnect?.(problem);
      const wait = transport.backoff(failures, problem.retryAfterSeconds);
      await transport.sleep(wait, signal).catch(() => {});
    }
  }

  /** A refusal that retrying cannot mend (a wrong key, a refused origin) ends every reader. */
  #fail(problem: CardWalletError<'cardEvents'>): void {
    for (const subscriber of this.#subscribers) {
      subscriber.failure = problem;
      subscriber.wake?.();
    }
    this.#subscribers.clear();
    this.#connection = undefined;
  }
}
