/**
 * Time as the money engine sees it: the wall clock in the service, a virtual one in the
 * deterministic simulation (test/simulation), so timers and timestamps replay exactly.
 */
export interface Clock {
  now(): number;
  /** Runs `run` once after `ms`; the timer never keeps the process alive on its own. */
  setTimer(run: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(run, ms) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return timer;
  },
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
};
