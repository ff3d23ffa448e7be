import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import electronLog from 'electron-log/node';
import { lineLogger, type LineLoggerOptions, type Logger } from '../service/logger.ts';

export const LOG_FILE = 'card-wallet-worker.log';

export interface AppLogOptions extends LineLoggerOptions {
  /** Also written here (stderr, for `npm run app` and the Playwright specs). */
  echo?: (line: string) => void;
  /** The file is rotated when it grows past this. */
  maxBytes?: number;
  /** Rotated files kept: card-wallet-worker.1.log (newest) to .N.log. */
  keep?: number;
}

/**
 * The tray app's log: the headless worker's lines (service/logger.ts: time, level, message,
 * secrets redacted) in `folder` (app.getPath('logs'): %APPDATA%\card-wallet-worker\logs,
 * ~/Library/Logs/card-wallet-worker, ~/.config/card-wallet-worker/logs), rotated by size, so
 * an operator can open the folder and send the file to support.
 *
 * Written by electron-log's file transport: built for exactly this in Electron apps (appends
 * each line before the next, so a crash loses nothing said before it; rotates by size; keeps
 * working on a full disk, saying so once), and it runs in plain Node too (`electron-log/node`),
 * so the tests write and rotate the same way the app does. pino was the other candidate: its
 * JSON lines are for machines rather than for a shop owner, and its file transports run in a
 * worker thread that must be unpacked from the asar.
 */
export function openAppLog(
  folder: string,
  options: AppLogOptions = {},
): { log: Logger; file: string } {
  const { maxBytes = 2 * 1024 * 1024, keep = 5, echo } = options;
  const file = join(folder, LOG_FILE);
  const writer = electronLog.create({ logId: `card-wallet-worker:${file}` });
  writer.transports.console.level = false;
  writer.transports.file.level = 'info';
  writer.transports.file.format = '{text}';
  writer.transports.file.maxSize = maxBytes;
  writer.transports.file.resolvePathFn = () => file;
  writer.transports.file.archiveLogFn = (current) => {
    try {
      rotate(file, keep);
    } catch {
      // A rotated file held open by another program (Windows): start the file over rather
      // than let it grow without end.
      current.clear();
    }
  };
  const log = lineLogger((line) => {
    // electron-log ends every entry with a line break itself.
    writer.info(line.replace(/\n$/, ''));
    echo?.(line);
  }, options);
  return { log, file };
}

/** card-wallet-worker.log becomes .1.log, .1 becomes .2 ... and the oldest beyond `keep` goes. */
function rotate(file: string, keep: number): void {
  const numbered = (n: number) => file.replace(/\.log$/, `.${n}.log`);
  rmSync(numbered(keep), { force: true });
  for (let n = keep - 1; n >= 1; n -= 1)
    if (existsSync(numbered(n))) renameSync(numbered(n), numbered(n + 1));
  if (keep >= 1) renameSync(file, numbered(1));
  else rmSync(file, { force: true });
}
