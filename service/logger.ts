/** The service logs through this; hosts decide where lines go (stderr, a file, the tray). */
export interface Logger {
  /** What only someone chasing a bug needs (stack traces); hosts may drop it. */
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogLevel = keyof Logger;

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * One log line, the same wherever it goes (the headless worker's stderr, the tray app's log
 * file): the time in ISO 8601 UTC, the level, the message. A message of several lines (a stack)
 * keeps its lines, each after the first indented, so every line that starts at the margin is
 * the start of an entry.
 */
export function formatLogLine(level: LogLevel, message: string, at = new Date()): string {
  return `${at.toISOString()} ${level} ${message.replace(/\r?\n/g, '\n    ')}\n`;
}

export const REDACTED = '[redacted]';

/**
 * `text` without the secrets in it: each value in `secrets` (API keys, the card master key; those
 * under 8 characters are not secrets worth the name and would redact ordinary words), and
 * whatever follows an X-Api-Key header name. A log a shop sends to support must not let anyone
 * call its till or open its cards.
 */
export function redactSecrets(
  text: string,
  secrets: readonly (string | null | undefined)[] = [],
): string {
  let redacted = text;
  const values = secrets.filter((secret): secret is string => !!secret && secret.length >= 8);
  // Longest first: a key that contains another is replaced whole.
  for (const secret of values.sort((a, b) => b.length - a.length))
    redacted = redacted.split(secret).join(REDACTED);
  // The card master key is hex: its case may differ from the configured text.
  for (const secret of values.filter((value) => /^[0-9a-f]{32}$/i.test(value)))
    redacted = redacted.replace(new RegExp(secret, 'gi'), REDACTED);
  return redacted.replace(/(x-api-key["']?\s*[:=]\s*["']?)[^\s"',;]+/gi, `$1${REDACTED}`);
}

export interface LineLoggerOptions {
  /** The secrets of the moment (they change when the operator saves a new key). */
  secrets?: () => readonly (string | null | undefined)[];
  /** Debug lines too (`--log-level debug`); dropped otherwise. */
  debug?: boolean;
}

/** Lines of formatLogLine, secrets redacted, to `write`. */
export function lineLogger(write: (line: string) => void, options: LineLoggerOptions = {}): Logger {
  const line = (level: LogLevel, message: string) =>
    write(formatLogLine(level, redactSecrets(message, options.secrets?.() ?? [])));
  return {
    debug: (message) => {
      if (options.debug) line('debug', message);
    },
    info: (message) => line('info', message),
    warn: (message) => line('warn', message),
    error: (message) => line('error', message),
  };
}

/** The headless worker's logger: lines on stderr; stdout stays for the one `listening on` line. */
export const stderrLogger = lineLogger;
