import type { LedgerMovement } from '../cloud/ledger-client.ts';
import type { Clock } from './clock.ts';
import { phaseOf, type Movement } from './movement-journal.ts';

/** Documented defaults (docs/integrators.md, "Reconciliation"). */
export const RECONCILE_EVERY_MS = 60_000;
/**
 * How long a pending movement the journal does not know is left alone before it is voided.
 * Far longer than any create can still be on its way (3 attempts of 5 s and their backoff),
 * counted on this worker's own clock from when it first saw the movement, so the ledger's
 * clock does not matter.
 */
export const UNKNOWN_PENDING_GRACE_MS = 5 * 60_000;

export type ReconcileDecision =
  /** A running request owns it: only that request resolves it. */
  | 'owned'
  | 'post'
  | 'void'
  /** The card write may have landed: decided when the card is seen again. */
  | 'wait-for-card'
  /** Not in the journal and not yet past the grace time. */
  | 'wait-grace';

/**
 * What to do with a movement the ledger holds pending, by what the journal says. The journal
 * writes a movement's start before the ledger is asked, so a movement this worker made is
 * always known; an unknown one is left over (a compacted journal, a lost data folder) and is
 * voided once past the grace time.
 */
export function decidePending(input: {
  movement: Movement | undefined;
  owned: boolean;
  /** When this worker first saw the unknown movement pending (its own clock). */
  firstSeenAt: number;
  now: number;
  graceMs: number;
}): ReconcileDecision {
  const { movement } = input;
  if (input.owned) return 'owned';
  if (!movement) return input.now - input.firstSeenAt >= input.graceMs ? 'void' : 'wait-grace';
  switch (phaseOf(movement)) {
    case 'to-post':
      return 'post';
    case 'to-void':
      return 'void';
    case 'uncertain':
      return 'wait-for-card';
    case 'done':
      // The journal has it resolved, the ledger not: say it again (both calls are idempotent).
      return movement.resolved === 'posted' ? 'post' : 'void';
  }
}

/** The movements a shop's pending list holds, for one key. */
export interface PendingSource {
  listPending(apiKey: string): Promise<LedgerMovement[]>;
}

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
