import { errors } from '../errors.ts';

/** Lets an operation keep the lock past its own end, until `work` settles (a stalled APDU). */
export type Hold = (work: Promise<unknown>) => void;

/**
 * Runs card operations one at a time. A waiter gives up with CardNotResponding when its turn
 * does not come before its deadline, and the queue refuses (CardBusy) when too many wait.
 * Once an operation starts it is never abandoned from outside: its caller gets its true
 * result (a money movement must never be reported failed while it went on). The lock is
 * released when the operation and everything it holds (APDUs still in flight) have settled.
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

  /** Runs `operation` when the lock is free, if that happens before `waitDeadline` (epoch ms). */
  run<T>(operation: (hold: Hold) => Promise<T>, waitDeadline: number): Promise<T> {
    if (this.#running + this.#waiting > this.#limit) return Promise.reject(errors.cardBusy());
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    this.#waiting += 1;
    let abandoned = false;

    const turn = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          abandoned = true;
          reject(errors.cardNotResponding());
        },
        Math.max(0, waitDeadline - Date.now()),
      );
      void previous.then(() => {
        clearTimeout(timer);
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
