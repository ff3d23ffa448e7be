import type { Clock } from './clock.ts';

export interface OutboxOptions {
  clock: Clock;
  /** One pass over what is left to post or void; true when everything was acknowledged. */
  drain: () => Promise<boolean>;
  /** First retry delay; doubles per failed pass up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
}

/**
 * The durable outbox's timer. What is in it is the journal itself (movements to post or void);
 * this only decides when to go through it again: at once when asked, then with a doubling
 * delay while the ledger does not acknowledge, back to the first delay once it does. One pass
 * runs at a time; a kick during a pass runs another pass after it.
 */
export class Outbox {
  readonly #options: OutboxOptions;
  #delay: number;
  #timer: unknown;
  #pass: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(options: OutboxOptions) {
    this.#options = options;
    this.#delay = options.retryMs;
  }

  /** Schedules a pass after `delayMs` (default: the current backoff), unless one is due. */
  kick(delayMs = this.#delay): void {
    if (this.#closed || this.#timer !== undefined) return;
    this.#timer = this.#options.clock.setTimer(() => {
      this.#timer = undefined;
      if (this.#pass) {
        this.#again = true;
        return;
      }
      this.#pass = this.#run().finally(() => (this.#pass = undefined));
    }, delayMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#options.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#pass;
  }

  async #run(): Promise<void> {
    do {
      this.#again = false;
      const allDone = await this.#options.drain();
      if (this.#closed) return;
      if (allDone) {
        this.#delay = this.#options.retryMs;
      } else {
        this.#delay = Math.min(this.#delay * 2, this.#options.maxRetryMs);
        if (!this.#again) this.kick();
      }
    } while (this.#again && !this.#closed);
  }
}
