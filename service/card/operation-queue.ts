import { errors } from '../errors.ts';

/**
 * Runs card operations one at a time. A waiter gives up with CardNotResponding when the
 * operation ahead of it does not finish before the waiter's deadline, and the queue refuses
 * (CardBusy) when too many are already waiting. The lock is released only when an operation
 * really settles, even after its caller timed out: a stalled APDU must never overlap another.
 */
export class OperationQueue {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  #running = 0;
  readonly #limit: number;

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
   * Runs `operation` when the lock is free. `deadline` (epoch ms) bounds the wait and the run
   * as seen by the caller.
   */
  async run<T>(operation: () => Promise<T>, deadline: number): Promise<T> {
    if (this.#running + this.#waiting > this.#limit) throw errors.cardBusy();
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    this.#waiting += 1;
    let abandoned = false;
    const start = previous.then(() => {
      this.#waiting -= 1;
      // A caller that gave up while waiting was told it failed: its operation must not run.
      if (abandoned) {
        release();
        throw errors.cardNotResponding();
      }
      this.#running += 1;
      const settled = operation();
      const finish = () => {
        this.#running -= 1;
        release();
      };
      settled.then(finish, finish);
      return settled;
    });
    return withDeadline(start, deadline, () => {
      abandoned = true;
      void start.catch(() => undefined);
    });
  }
}

function withDeadline<T>(work: Promise<T>, deadline: number, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        onTimeout();
        reject(errors.cardNotResponding());
      },
      Math.max(0, deadline - Date.now()),
    );
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
