/** The service logs through this; hosts decide where lines go (stderr, a file, the tray). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Timestamped lines on stderr; stdout stays for the one `listening on` line. */
export function stderrLogger(write: (line: string) => void): Logger {
  const line = (level: string, message: string) =>
    write(`${new Date().toISOString()} ${level} ${message}\n`);
  return {
    info: (message) => line('info', message),
    warn: (message) => line('warn', message),
    error: (message) => line('error', message),
  };
}
