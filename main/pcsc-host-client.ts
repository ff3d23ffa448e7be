import { EventEmitter } from 'node:events';
import type { NFC, Reader } from 'nfc-pcsc';
import readerModule from 'nfc-pcsc/dist/Reader.js';
import { ReaderProblemError, type ReaderProblem } from '../service/card/reader-problems.ts';
import type { Logger } from '../service/logger.ts';
import { asBuffer, type FromHost, type ReaderMethod, type ToHost } from './pcsc-host-protocol.ts';

/** The part of Electron's UtilityProcess the supervisor drives (test/support/electron-mock.ts). */
export interface UtilityProcessLike {
  postMessage(message: ToHost): void;
  kill(): boolean;
  on(event: 'message', listener: (message: FromHost) => void): this;
  on(event: 'exit', listener: (code: number) => void): this;
  on(event: 'spawn', listener: () => void): this;
  readonly stderr?: NodeJS.ReadableStream | null;
}

export interface PcscHostOptions {
  /** Starts the host (utilityProcess.fork of main/pcsc-host.ts); only after app `ready`. */
  fork(): UtilityProcessLike;
  log: Logger;
  /** How often the host is asked whether it still answers. */
  heartbeatMs?: number;
  /**
   * How long a heartbeat or a card call may go unanswered before the host counts as hung and is
   * replaced. Longer than any card operation's own deadline (cardTimeoutMs): a call past it is
   * stuck in native code, and only a new process frees the reader.
   */
  answerWithinMs?: number;
  /** The same for creating the PC/SC context (the binding's constructor). */
  openWithinMs?: number;
}

interface HostEvents {
  /** The host hung or died and was let go; the next createNfc starts a new one. */
  lost: [ReaderProblem];
}

type Callback = (error: Error | null, value?: unknown) => void;

/**
 * Supervises the PC/SC host (main/pcsc-host.ts) and gives the service core an nfc-pcsc NFC over
 * it: nfc-pcsc's Reader runs here, its pcsclite reader is a proxy whose every call is a message
 * to the host. A host that stops answering the heartbeat, leaves a call unanswered past its
 * deadline, or exits, is killed and let go: its pending calls fail, its NFC emits `error` (the
 * reader manager then tears down and retries with its backoff), and the next createNfc forks a
 * new host. Nothing here ever waits on the host synchronously.
 */
export class PcscHost extends EventEmitter<HostEvents> {
  readonly #options: Required<Omit<PcscHostOptions, 'fork' | 'log'>> &
    Pick<PcscHostOptions, 'fork' | 'log'>;
  #child: UtilityProcessLike | undefined;
  readonly #pending = new Map<number, { callback: Callback; timer: NodeJS.Timeout }>();
  /** Verdicts waiting for the host's answer to their ping (afterMessagesRead). */
  readonly #barriers = new Map<number, () => void>();
  #nextId = 1;
  #nextContext = 1;
  #nfc: HostNfc | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** When the unanswered ping was sent, or undefined while the last one was answered. */
  #pingSentAt: number | undefined;
  /** Whether the running host said anything yet: until then it may still be starting. */
  #answered = false;
  #stopped = false;

  constructor(options: PcscHostOptions) {
    super();
    this.#options = {
      heartbeatMs: 2_000,
      answerWithinMs: 15_000,
      openWithinMs: 15_000,
      ...options,
    };
  }

  /** Whether a host process runs now. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** A new PC/SC context in the host (started if needed): the reader manager's createNfc. */
  async createNfc(): Promise<NFC> {
    if (this.#stopped) throw new Error('the PC/SC host is stopped');
    const child = this.#child ?? this.#start();
    // The context's first events may arrive with the answer to `open`, in the same tick: the
    // NFC takes them from now on and holds them until its caller has added its listeners.
    const nfc = new HostNfc(this, this.#nextContext++);
    this.#nfc = nfc;
    try {
      await new Promise<void>((resolve, reject) =>
        this.#request(
          child,
          { kind: 'open', id: this.#nextId++, context: nfc.context },
          this.#options.openWithinMs,
          'creating the PC/SC context',
          (error) => (error ? reject(error) : resolve()),
        ),
      );
    } catch (error) {
      if (this.#nfc === nfc) this.#nfc = undefined;
      throw error;
    }
    // As pcsclite does, readers are announced after the caller's listeners are on.
    setImmediate(() => nfc.start());
    return nfc as unknown as NFC;
  }

  /** Stops the host (on quit, before an update): no restart until `resume`. */
  stop(): void {
    this.#stopped = true;
    this.#let('the PC/SC host was stopped', false);
  }

  /** The next createNfc starts a host again (an update whose installer did not start). */
  resume(): void {
    this.#stopped = false;
  }

  /** A CardReader call for a proxy; `callback` gets the host's answer or why there is none. */
  call(reader: number, method: ReaderMethod, args: unknown[], callback: Callback): void {
    const child = this.#child;
    if (!child) {
      setImmediate(() => callback(hostGone('the PC/SC host is not running')));
      return;
    }
    this.#request(
      child,
      { kind: 'call', id: this.#nextId++, reader, method, args },
      this.#options.answerWithinMs,
      `a card call (${method})`,
      callback,
    );
  }

  send(message: ToHost): void {
    this.#child?.postMessage(message);
  }

  /**
   * Runs `verdict` once every message the host sent before now is read: for a verdict of
   * silence, taken by a timer that may run before them. After main itself stalled (a busy till,
   * a long GC, a wake from sleep) an answer already here would otherwise be taken for silence,
   * and a healthy host restarted or a card call failed. In Node a child's messages are read in
   * the loop's poll phase, so one setImmediate would do; Electron's main process takes a
   * utility process's messages from Chromium's message loop, and setImmediate runs inside the
   * libuv turn that queued it, before them (electron/electron#28261; Playwright works around
   * the same, microsoft/playwright#5867). One message pipe keeps its order, so the host's
   * answer to a ping sent now comes after all it sent before. A host that does not answer that
   * ping within a heartbeat is hung: the verdict runs then.
   */
  afterMessagesRead(verdict: () => void): void {
    const child = this.#child;
    if (!child) {
      setImmediate(verdict);
      return;
    }
    const id = this.#nextId++;
    const done = () => {
      if (!this.#barriers.delete(id)) return;
      clearTimeout(timer);
      verdict();
    };
    const timer = setTimeout(() => setImmediate(done), this.#options.heartbeatMs);
    timer.unref();
    this.#barriers.set(id, done);
    child.postMessage({ kind: 'ping', id });
  }

  #start(): UtilityProcessLike {
    const child = this.#options.fork();
    this.#child = child;
    this.#pingSentAt = undefined;
    this.#answered = false;
    child.on('message', (message) => this.#receive(child, message));
    child.on('exit', (code) => {
      if (this.#child === child) this.#let(`the PC/SC host stopped (exit code ${code})`);
    });
    // The host's own output (a native crash report, a warning) goes to the log.
    child.stderr?.on('data', (chunk: Buffer) =>
      this.#options.log.warn(`PC/SC host: ${chunk.toString('utf8').trimEnd()}`),
    );
    clearInterval(this.#heartbeat);
    this.#heartbeat = setInterval(() => this.#beat(child), this.#options.heartbeatMs);
    this.#heartbeat.unref();
    this.#options.log.info('PC/SC host started');
    return child;
  }

  #beat(child: UtilityProcessLike): void {
    if (this.#child !== child) return;
    if (this.#pingSentAt !== undefined) {
      // A host that never answered yet is given the start-up allowance.
      const within = this.#answered ? this.#options.answerWithinMs : this.#options.openWithinMs;
      const silent = () =>
        this.#child === child &&
        this.#pingSentAt !== undefined &&
        Date.now() - this.#pingSentAt >= within;
      if (silent()) {
        this.afterMessagesRead(() => {
          if (silent())
            this.#let(
              `the PC/SC host stopped answering (no heartbeat for ${within} ms); it was restarted`,
            );
        });
      }
      return;
    }
    this.#pingSentAt = Date.now();
    child.postMessage({ kind: 'ping', id: this.#nextId++ });
  }

  #request(
    child: UtilityProcessLike,
    message: Extract<ToHost, { id: number }>,
    withinMs: number,
    what: string,
    callback: Callback,
  ): void {
    const timer = setTimeout(
      () =>
        this.afterMessagesRead(() => {
          if (this.#child === child && this.#pending.get(message.id)?.timer === timer)
            this.#let(
              `${what} got no answer from the PC/SC host in ${withinMs} ms; it was restarted`,
            );
        }),
      withinMs,
    );
    timer.unref();
    this.#pending.set(message.id, { callback, timer });
    child.postMessage(message);
  }

  #receive(child: UtilityProcessLike, message: FromHost): void {
    if (this.#child !== child) return;
    this.#answered = true;
    switch (message.kind) {
      case 'pong':
        this.#pingSentAt = undefined;
        this.#barriers.get(message.id)?.();
        return;
      case 'reply': {
        const pending = this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id);
        clearTimeout(pending.timer);
        pending.callback(message.error === undefined ? null : new Error(message.error), message);
        return;
      }
      default:
        this.#nfc?.receive(message);
    }
  }

  /**
   * Lets the host go: kills it, fails what waits on it, tells its NFC. `report` false: an
   * orderly stop, said only in the log.
   */
  #let(reason: string, report = true): void {
    const child = this.#child;
    this.#child = undefined;
    clearInterval(this.#heartbeat);
    child?.kill();
    const problem: ReaderProblem = { code: 'host-not-answering', message: reason };
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.callback(new ReaderProblemError(problem));
    }
    // Nothing more comes from that host: what waited for its messages is judged now.
    for (const done of [...this.#barriers.values()]) done();
    const nfc = this.#nfc;
    this.#nfc = undefined;
    if (!report) {
      nfc?.close();
      this.#options.log.info(reason);
      return;
    }
    this.#options.log.error(reason);
    nfc?.lost(new ReaderProblemError(problem));
    this.emit('lost', problem);
  }
}

function hostGone(message: string): ReaderProblemError {
  return new ReaderProblemError({ code: 'host-not-answering', message });
}

const NfcReader = readerModule.default;

/**
 * nfc-pcsc's NFC over the host: a `reader` event for each reader the host's context sees, as
 * nfc-pcsc's Reader over a proxy of pcsclite's CardReader. (nfc-pcsc's own NFC picks its
 * ACR122Reader subclass by name only for LED and buzzer commands, which the service never sends.)
 */
class HostNfc extends EventEmitter {
  readonly context: number;
  readonly #host: PcscHost;
  readonly #readers = new Map<number, HostCardReader>();
  #closed = false;
  /** Events that came before start(): the caller had no listeners yet. */
  #held: FromHost[] | undefined = [];

  constructor(host: PcscHost, context: number) {
    super();
    this.#host = host;
    this.context = context;
  }

  start(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const message of held) this.receive(message);
  }

  get readers(): Record<string, HostCardReader> {
    return Object.fromEntries([...this.#readers.values()].map((reader) => [reader.name, reader]));
  }

  receive(message: FromHost): void {
    if (this.#closed) return;
    if (this.#held) {
      this.#held.push(message);
      return;
    }
    if (message.kind === 'reader' && message.context === this.context) {
      const proxy = new HostCardReader(this.#host, message);
      this.#readers.set(message.reader, proxy);
      const reader: Reader = new NfcReader(proxy);
      this.emit('reader', reader);
      return;
    }
    if (message.kind === 'error' && message.context === this.context) {
      this.emit('error', new Error(message.message));
      return;
    }
    if (!('reader' in message)) return;
    const reader = this.#readers.get(message.reader);
    if (!reader) return;
    if (message.kind === 'reader-end') this.#readers.delete(message.reader);
    reader.receive(message);
  }

  /** The host is gone: this context with it (one still opening: its creator is told). */
  lost(error: Error): void {
    if (this.#closed || this.#held) return;
    this.emit('error', error);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#host.send({ kind: 'close', context: this.context });
    this.#readers.clear();
  }
}

/**
 * @pokusew/pcsclite's CardReader, answered by the host: the same methods, callbacks, events
 * (`status` emitted before `state` is updated, as pcsclite does: nfc-pcsc compares the two)
 * and constants, so nfc-pcsc's Reader and the card session's reset run unchanged over it.
 */
class HostCardReader extends EventEmitter {
  readonly name: string;
  state: number;
  connected = false;
  readonly #host: PcscHost;
  readonly #id: number;
  [constant: `SCARD_${string}` | `IOCTL_${string}`]: number;

  constructor(host: PcscHost, announced: Extract<FromHost, { kind: 'reader' }>) {
    super();
    this.#host = host;
    this.#id = announced.reader;
    this.name = announced.name;
    this.state = announced.state;
    Object.assign(this, announced.constants);
  }

  receive(message: FromHost): void {
    if (message.kind === 'status') {
      this.connected = message.connected;
      const atr = asBuffer(message.atr);
      this.emit('status', atr ? { state: message.state, atr } : { state: message.state });
      this.state = message.state;
    } else if (message.kind === 'reader-end') {
      this.connected = false;
      this.emit('end');
      this.removeAllListeners('status');
    } else if (message.kind === 'reader-error') {
      this.emit('error', new Error(message.message));
    }
  }

  connect(options: object | Callback, callback?: Callback): void {
    const done = (typeof options === 'function' ? options : callback) as Callback;
    this.#call('connect', [typeof options === 'function' ? {} : options], (error, reply) =>
      done(error, error ? undefined : (reply as { value?: unknown }).value),
    );
  }

  disconnect(disposition: number | Callback, callback?: Callback): void {
    const done = (typeof disposition === 'function' ? disposition : callback) as Callback;
    const args = typeof disposition === 'number' ? [disposition] : [];
    this.#call('disconnect', args, (error) => done(error));
  }

  transmit(data: Buffer, maxLength: number, protocol: number, callback: Callback): void {
    this.#call('transmit', [data, maxLength, protocol], (error, reply) =>
      callback(error, error ? undefined : asBuffer((reply as { value?: unknown }).value)),
    );
  }

  control(data: Buffer, code: number, maxLength: number, callback: Callback): void {
    this.#call('control', [data, code, maxLength], (error, reply) =>
      callback(error, error ? undefined : asBuffer((reply as { value?: unknown }).value)),
    );
  }

  close(): void {
    this.#host.send({ kind: 'close-reader', reader: this.#id });
  }

  /** For the card's bounds (service/card/reader-answers.ts): see PcscHost.afterMessagesRead. */
  afterAnswersRead(judge: () => void): void {
    this.#host.afterMessagesRead(judge);
  }

  #call(method: ReaderMethod, args: unknown[], callback: Callback): void {
    this.#host.call(this.#id, method, args, (error, reply) => {
      const connected = (reply as { connected?: boolean } | undefined)?.connected;
      if (connected !== undefined) this.connected = connected;
      else if (error) this.connected = false;
      callback(error, reply);
    });
  }
}
