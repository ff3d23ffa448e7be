import { performance } from 'node:perf_hooks';
import { errors } from '../errors.ts';
import { silenceDeadline, type AfterAnswersRead } from './silence-deadline.ts';

/** Lets an operation keep the lock past its own end, until `work` settles (a stalled APDU). */
export type Hold = (work: Promise<unknown>) => void;

/**
 * Runs card operations one at a time. A waiter gives up with CardNotResponding when the queue
 * makes no progress before its deadline: no operation ahead of it starts and the card answers
 * nothing (`lastAnswerAt`, see reader-answers.ts); each start and each answer gives every
 * waiter its whole wait window again, judged only after what reached the process was read
 * (silence-deadline.ts: after the process itself stalled, the operation ahead may need a few
 * more round trips, each read in time). So a burst the queue admits is served while the card
 * keeps answering, however long the line, and only a card that stalls one operation past the
 * window fails those behind it. The queue refuses (CardBusy) when too many wait.
 * Once an operation starts it is never abandoned from outside: its caller gets its true
 * result (a money movement must never be reported failed while it went on). The lock is
 * released when the operation and everything it holds (APDUs still in flight) have settled.
 */
export class OperationQueue {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  #running = 0;
  readonly #limit: number;
  readonly #lastAnswerAt: () => number;
  readonly #afterAnswersRead: AfterAnswersRead | undefined;
  /** When an operation last started (performance.now() time). */
  #startedAt = -Infinity;

  constructor(
    limit: number,
    lastAnswerAt: () => number = () => -Infinity,
    afterAnswersRead?: AfterAnswersRead,
  ) {
    this.#limit = limit;
    this.#lastAnswerAt = lastAnswerAt;
    this.#afterAnswersRead = afterAnswersRead;
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
   * ms); each operation that starts ahead of it, and each answer of the card, gives it the same
   * window again.
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
      const stopWaiting = silenceDeadline(
        windowMs,
        () => Math.max(this.#startedAt, this.#lastAnswerAt()),
        () => {
          abandoned = true;
          reject(errors.cardNotResponding());
        },
        this.#afterAnswersRead,
      );
      void previous.then(() => {
        stopWaiting();
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
      this.#startedAt = performance.now();
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
