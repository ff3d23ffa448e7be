import type { Clock } from './clock.ts';

/** Documented defaults (docs/integrators.md, "Reconciliation"). */
export const RECONCILE_EVERY_MS = 60_000;
/**
 * How long a movement may wait for its card before it is shown as overdue, for an operator. It
 * is never decided on a timer: only its card, or an operator with evidence, decides it.
 */
export const UNCERTAIN_MOVEMENT_BOUND_MS = 24 * 60 * 60_000;

/**
 * When reconciliation runs: at start, every `everyMs`, and soon after the ledger comes back
 * from an outage. One run at a time; a request during a run runs once more after it.
 */
export class ReconcileSchedule {
  readonly #clock: Clock;
  readonly #everyMs: number;
  readonly #run: () => Promise<void>;
  #timer: unknown;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(clock: Clock, everyMs: number, run: () => Promise<void>) {
    this.#clock = clock;
    this.#everyMs = everyMs;
    this.#run = run;
  }

  /** Runs as soon as possible, then every `everyMs`. */
  soon(): void {
    this.#schedule(0);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      if (this.#running) {
        this.#again = true;
        return;
      }
      this.#running = this.#loop().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#everyMs);
      });
    }, delayMs);
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      await this.#run();
    } while (this.#again && !this.#closed);
  }
}
