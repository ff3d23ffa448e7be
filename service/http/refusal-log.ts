import type { Logger } from '../logger.ts';

/** How many distinct refusals are remembered before the memory starts over. */
const REMEMBERED = 100;

/**
 * Logs a refusal (an Origin or Host that is not let in) with its fix, once per distinct value:
 * a POS page retrying every second would otherwise bury the log, and the first line already
 * says what to do. A flood of made-up values cannot grow the memory: past 100, it starts over.
 */
export function refusalLog(log: Logger): (key: string, line: () => string) => void {
  const seen = new Set<string>();
  return (key, line) => {
    if (seen.has(key)) return;
    if (seen.size >= REMEMBERED) seen.clear();
    seen.add(key);
    log.warn(line());
  };
}
