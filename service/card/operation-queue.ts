import { errors } from '../errors.ts';

/** Lets an operation keep the lock past its own end, until `work` settles (a stalled APDU). */
export type Hold = (work: Promise<unknown>) => void;

/**
 * Runs card operations one at a time. A waiter gives up with CardNotResponding when the queue
 * makes no progress (no operation ahead of it starts) before its deadline: each start moves
 * every waiter's deadline by its whole wait window again. So a burst the queue admits is
 * served while the card keeps answering, however long the line, and only a card that stalls
 * one operation past the window fails those behind it. The queue refuses (CardBusy) when too
 * many wait.
 * Once an operation starts it is never abandoned from outside: its caller gets its true
 * result (a money movement must never be reported failed while it went on). The lock is
 * released when the operation and everything it holds (APDUs still in flight) have settled.
 */
export class OperationQueue {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  #running = 0;
  readonly #limit: number;
  /** Restarts the wait timer of each waiter: called whenever an operation starts. */
  readonly #waiters = new Set<() => void>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** True while an operation holds the lock. */
  get busy(): boolean {
    return this.#running > 0;
  }

  /** Resolves once everything queued so far has settled. */
  async drained(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.#tail;
      await tail;
    } while (tail !== this.#tail);
  }

  /**
   * Runs `operation` when the lock is free, if the queue moves before `waitDeadline` (epoch
   * ms); each operation that starts ahead of it gives it the same window again.
   */
  run<T>(operation: (hold: Hold) => Promise<T>, waitDeadline: number): Promise<T> {
    if (this.#running + this.#waiting > this.#limit) return Promise.reject(errors.cardBusy());
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    this.#waiting += 1;
    let abandoned = false;

    const windowMs = Math.max(0, waitDeadline - Date.now());
    const turn = new Promise<void>((resolve, reject) => {
      const giveUp = () => {
        abandoned = true;
        this.#waiters.delete(restart);
        reject(errors.cardNotResponding());
      };
      let timer = setTimeout(giveUp, windowMs);
      const restart = () => {
        clearTimeout(timer);
        timer = setTimeout(giveUp, windowMs);
      };
      this.#waiters.add(restart);
      void previous.then(() => {
        clearTimeout(timer);
        this.#waiters.delete(restart);
        this.#waiting -= 1;
        if (abandoned) {
          // Its caller was told it failed while waiting: it must not run now.
          release();
          return;
        }
        resolve();
      });
    });

    return turn.then(() => {
      this.#running += 1;
      for (const restart of this.#waiters) restart();
      const held: Promise<unknown>[] = [];
      const result = operation((work) => held.push(work));
      void result
        .catch(() => undefined)
        .then(async () => {
          // Holds may be added while earlier ones settle; wait until none is left.
          let settled = 0;
          while (settled < held.length) {
            const batch = held.slice(settled);
            settled = held.length;
            await Promise.allSettled(batch);
          }
          this.#running -= 1;
          release();
        });
      return result;
    });
  }
}
