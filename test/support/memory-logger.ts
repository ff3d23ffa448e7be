import type { Logger } from '../../service/logger.ts';

export interface MemoryLogger extends Logger {
  /** Every line logged, as "level message". */
  readonly lines: string[];
}

/** A logger that keeps its lines, for tests that check what the service logs. */
export function memoryLogger(): MemoryLogger {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
