/**
 * Virtual time for the deterministic simulation: a seeded generator, and a scheduler that runs
 * one event at a time in (time, random tie-break) order. Each worker process has a Life: its
 * timers, waits and the answers it waits for die with it when it crashes, while the outside
 * world (cards, the network, the ledger) goes on.
 *
 * An event may be asynchronous (the real ledger answering a call: real-ledger.ts): the next
 * event runs only once it has finished, and so has any work the world handed to track(). So a
 * seed replays exactly whatever the ledger's code awaits inside.
 */
import type { Clock } from '../../service/wallet/clock.ts';

/** A small, fast, seedable generator (mulberry32). */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(below: number): number {
    return Math.floor(this.next() * below);
  }
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

/** One run of a worker process: what it scheduled never runs once it crashed. */
export class Life {
  alive = true;
}

interface Event {
  at: number;
  tie: number;
  run: () => void | Promise<void>;
  /** The process whose event it is (null: the outside world, which never crashes). */
  life: Life | null;
  cancelled: boolean;
}

/** Whether event a runs before event b. */
const before = (a: Event, b: Event) => a.at < b.at || (a.at === b.at && a.tie < b.tie);

/** The virtual clock and the seeded scheduler (a binary heap of events). */
export class Scheduler {
  /** Virtual ms since the run began. */
  time = 0;
  /** What the clocks read when the run began (ms since 1970). */
  readonly start: number;
  readonly rng: Rng;
  readonly #heap: Event[] = [];
  /** Work the world started outside an event (see track()). */
  readonly #tracked: Promise<unknown>[] = [];

  constructor(rng: Rng, start = 0) {
    this.rng = rng;
    this.start = start;
  }

  /** What the clocks read now (ms since 1970). */
  now(): number {
    return this.start + this.time;
  }

  /**
   * Runs `run` after `delayMs` of virtual time, unless `life` ended by then. When `run` returns
   * a promise, nothing else happens until it settles. `rng` draws the tie-break (a stream of
   * the world's own may leave the main one's draws as they were).
   */
  at(delayMs: number, run: () => void | Promise<void>, life: Life | null, rng = this.rng): Event {
    const event: Event = {
      at: this.time + Math.max(0, delayMs),
      tie: rng.next(),
      run,
      life,
      cancelled: false,
    };
    this.#push(event);
    return event;
  }

  /** Resolves after `delayMs` of virtual time; never, if `life` ended meanwhile. */
  sleep(delayMs: number, life: Life | null): Promise<void> {
    return new Promise((resolve) => this.at(delayMs, resolve, life));
  }

  /** The clock a worker process's code sees. */
  clock(life: Life): Clock {
    return {
      now: () => this.now(),
      setTimer: (run, ms) => this.at(ms, run, life),
      clearTimer: (timer) => {
        if (timer) (timer as Event).cancelled = true;
      },
    };
  }

  /**
   * Work the world started from a callback, not an event (an operator's call to the real
   * ledger, say): it settles before the next event runs, in virtual time no time at all.
   */
  track(work: Promise<unknown>): void {
    this.#tracked.push(work);
  }

  /** Runs events until none is left before `until` (virtual ms). */
  async runUntil(until: number): Promise<void> {
    for (;;) {
      // Everything the last event set off (promise chains) runs before the next event.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#tracked.length > 0) {
        await Promise.all(this.#tracked.splice(0));
        continue;
      }
      let event: Event | undefined;
      do {
        event = this.#heap[0];
        if (!event || event.at > until) {
          this.time = Math.max(this.time, until);
          return;
        }
        this.#pop();
        this.time = Math.max(this.time, event.at);
      } while (event.cancelled || (event.life !== null && !event.life.alive));
      const work = event.run();
      if (work instanceof Promise) await work;
    }
  }

  #push(event: Event): void {
    const heap = this.#heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent] as Event)) break;
      heap[i] = heap[parent] as Event;
      i = parent;
    }
    heap[i] = event;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop() as Event;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && before(heap[right] as Event, heap[left] as Event) ? right : left;
      if (!before(heap[child] as Event, last)) break;
      heap[i] = heap[child] as Event;
      i = child;
    }
    heap[i] = last;
  }
}
