/** The service logs through this; hosts decide where lines go (stderr, a file, the tray). */
export interface Logger {
  /** What only someone chasing a bug needs (stack traces); hosts may drop it. */
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Timestamped lines on stderr; stdout stays for the one `listening on` line. Debug lines only
 * when asked for (`--log-level debug`).
 */
export function stderrLogger(
  write: (line: string) => void,
  options: { debug?: boolean } = {},
): Logger {
  const line = (level: string, message: string) =>
    write(`${new Date().toISOString()} ${level} ${message}\n`);
  return {
    debug: (message) => {
      if (options.debug) line('debug', message);
    },
    info: (message) => line('info', message),
    warn: (message) => line('warn', message),
    error: (message) => line('error', message),
  };
}
