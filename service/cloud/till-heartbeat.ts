import { EventEmitter } from 'node:events';
import type { TillHeartbeat, TillReader, TillState } from '../../common/ledger-contract.ts';
import type { ReaderStatus } from '../card/reader-manager.ts';
import type { Logger } from '../logger.ts';

/** What the heartbeat says besides the version, read at each send. */
export type TillHeartbeatState = Omit<TillHeartbeat, 'version'>;

export interface TillHeartbeatOptions {
  ledger: {
    sendHeartbeat(apiKey: string, tillId: string, heartbeat: TillHeartbeat): Promise<TillState>;
  };
  tillId: string;
  /** The key in effect (it may change while the service runs). */
  apiKey: () => string;
  version: string;
  state: () => TillHeartbeatState;
  /** Every this long, whatever changed (docs/cloud-api.md: every minute). */
  everyMs: number;
  /** A change is sent this long after it, several changes in one heartbeat (default 1 s). */
  settleMs?: number;
  log: Logger;
}

/** The reader as the heartbeat says it, from the reader manager's status. */
export function readerOf(status: ReaderStatus): TillReader {
  if (status.pcsc === 'stopped') return { state: 'stopped', name: null, problem: null };
  if (status.pcsc === 'unavailable') {
    return { state: 'unavailable', name: null, problem: status.problem?.code ?? null };
  }
  return status.reader === null
    ? { state: 'no-reader', name: null, problem: null }
    : { state: 'ready', name: status.reader.slice(0, 200), problem: null };
}

/**
 * The till's heartbeat to the ledger (docs/cloud-api.md, "Till heartbeats"): its version,
 * reader, movements pending and waiting for their card, with the shop's key, every minute and
 * soon after each change, so the back office sees every till, headless ones too, and marks one
 * that goes quiet. The answer is the till as the ledger knows it: its name, for the tray.
 *
 * One heartbeat at a time: a change or a tick while one is on its way sends another once it
 * is answered, with the state as it is then. A heartbeat that fails is not retried beyond the
 * ledger client's own tries: the next tick or change sends a fresh one. Failures are logged
 * once per outage, not per minute.
 */
export class TillHeartbeatSender extends EventEmitter<{ till: [TillState] }> {
  readonly #options: TillHeartbeatOptions;
  #till: TillState | null = null;
  #lastSent: string | null = null;
  #timer: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  #again = false;
  #failing = false;
  #closed = false;

  constructor(options: TillHeartbeatOptions) {
    super();
    this.#options = options;
  }

  /** The till as the ledger last answered it (its name), or null before the first answer. */
  get till(): TillState | null {
    return this.#till;
  }

  /** Sends at once, then every `everyMs`. */
  start(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setInterval(() => this.#send(), this.#options.everyMs);
    this.#timer.unref();
    this.#send();
  }

  /** Something the heartbeat says may have changed: sent soon if it did. */
  changed(): void {
    if (this.#closed || !this.#timer || this.#settle) return;
    this.#settle = setTimeout(() => {
      this.#settle = undefined;
      if (JSON.stringify(this.#options.state()) !== this.#lastSent) this.#send();
    }, this.#options.settleMs ?? 1_000);
    this.#settle.unref();
  }

  /** What it says did not change, but who it is said with did (a new API key): sent now. */
  resend(): void {
    if (this.#timer) this.#send();
  }

  /**
   * Stops sending. A heartbeat on its way is not waited for (a stopping till does not wait on
   * the ledger); its answer or failure is dropped.
   */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#settle);
  }

  #send(): void {
    if (this.#closed) return;
    if (this.#sending) {
      this.#again = true;
      return;
    }
    this.#sending = this.#once().finally(() => {
      this.#sending = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        this.#send();
      }
    });
  }

  async #once(): Promise<void> {
    const { ledger, tillId, apiKey, version, state, log } = this.#options;
    const now = state();
    const sent = JSON.stringify(now);
    try {
      const till = await ledger.sendHeartbeat(apiKey(), tillId, { version, ...now });
      if (this.#closed) return;
      this.#lastSent = sent;
      if (this.#failing) log.info('heartbeat: the ledger hears this till again');
      this.#failing = false;
      this.#till = till;
      this.emit('till', till);
    } catch (error) {
      if (this.#closed) return;
      if (!this.#failing) {
        log.warn(
          `heartbeat: the ledger did not take this till's heartbeat (${(error as Error).message}); the back office will mark the till quiet until it does`,
        );
      }
      this.#failing = true;
    }
  }
}
