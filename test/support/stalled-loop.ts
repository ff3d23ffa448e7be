// A process that stalls while a card's answer is on its way, for the card bounds' tests
// (test/unit/card-bounds-after-stall.test.ts). The answers travel as a native binding's do:
// @pokusew/pcsclite runs SCardTransmit on libuv's threadpool and its callback is called from the
// loop's poll phase; here a worker thread sends each answer back over a MessagePort, which the
// loop also reads in its poll phase (libuv's uv_async in both cases). So a stall of this thread
// lets the answer arrive meanwhile, and the loop's next turn runs the overdue timers before it
// reads it: the order a real till sees after a long GC or a busy moment.
import { performance } from 'node:perf_hooks';
import { MessageChannel, Worker } from 'node:worker_threads';
import { SimulatedPcscReader } from '../../service/card/simulator/simulated-pcsc.ts';
import { classifyApdu, type ApduCommand } from '../../service/card/simulator/virtual-card.ts';

// Each answer comes back on a MessagePort of its own: a port's handler reads every message
// that reached that port, even those that came while it ran, so one shared port would hand the
// handler an answer that arrived during a stall inside it before the loop's timers ran.
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ port, sent }) => {
  port.postMessage('answer');
  port.close();
  Atomics.store(sent, 0, 1);
  Atomics.notify(sent, 0);
});`;

/** How long a stall waits for the other thread to send an answer back: only if it is broken. */
const ECHO_WAIT_MS = 10_000;

/**
 * Blocks this thread (Atomics.wait: no CPU burnt on a 2-core machine) until `until`
 * (performance.now() time) has passed and, when `sent` is given, the other thread has sent its
 * answer: conditions, not durations, so a busy machine changes nothing.
 */
function block(until: number, sent?: Int32Array): void {
  if (sent) Atomics.wait(sent, 0, 0, ECHO_WAIT_MS);
  stallUntil(() => performance.now() >= until);
}

/** Blocks this thread until `done()` holds, asking every few ms (Atomics.wait: no CPU burnt). */
export function stallUntil(done: () => boolean): void {
  const idle = new Int32Array(new SharedArrayBuffer(4));
  while (!done()) Atomics.wait(idle, 0, 0, 5);
}

/** A round trip through another thread, answered in this thread's poll phase. */
export class Wire {
  readonly #echo = new Worker(ECHO, { eval: true });
  /** Stalls this process has gone through. */
  stalls = 0;

  constructor() {
    // Each answer's own port keeps the process alive while it is on its way; the echo never.
    this.#echo.unref();
  }

  /**
   * Sends `deliver` to the other thread and back. With `stallUntil`, this thread then stalls at
   * once until that time, and until the answer was sent back: it arrives during the stall.
   */
  send(deliver: () => void, stallUntil?: number): void {
    const { port1, port2 } = new MessageChannel();
    port1.once('message', () => {
      port1.close();
      deliver();
    });
    const sent = new Int32Array(new SharedArrayBuffer(4));
    this.#echo.postMessage({ port: port2, sent }, [port2]);
    if (stallUntil !== undefined) this.stall(stallUntil, sent);
  }

  /** Stalls this thread now until `until` (and until `sent` is set, if given). */
  stall(until: number, sent?: Int32Array): void {
    block(until, sent);
    this.stalls += 1;
  }

  async close(): Promise<void> {
    await this.#echo.terminate();
  }
}

/**
 * The simulator's PC/SC reader with its answers over a Wire, and a stall of the process armed
 * on chosen APDUs: `stallOn('write', 400)` stalls the process right after the next UPDATE
 * BINARY was sent and answered, until 400 ms after it was sent, while the card's answer comes
 * back over the wire (a silent card: the process stalls all the same).
 */
export class WiredPcscReader extends SimulatedPcscReader {
  readonly wire = new Wire();
  readonly #stalls: { command: ApduCommand; pastMs: number }[] = [];

  stallOn(command: ApduCommand, pastMs: number): void {
    this.#stalls.push({ command, pastMs });
  }

  override transmit(
    data: Buffer,
    maxLength: number,
    protocol: number,
    callback: (error: Error | null, response?: Buffer) => void,
  ): void {
    const sentAt = performance.now();
    const index = this.#stalls.findIndex((stall) => stall.command === classifyApdu(data).command);
    const stall = index >= 0 ? this.#stalls.splice(index, 1)[0] : undefined;
    let answered = false;
    // The simulated card answers in a microtask, after the caller armed its bound: the stall
    // starts there, right after the answer left for the other thread (whose reply this loop
    // would otherwise read at once, in the same poll phase).
    super.transmit(data, maxLength, protocol, (error, response) => {
      answered = true;
      this.wire.send(() => callback(error, response), stall && sentAt + stall.pastMs);
    });
    // A card that stays silent (its 'stall' fault) gives no answer to wait for: the process
    // stalls all the same, once the simulated card has decided (by the next check phase).
    if (stall) setImmediate(() => answered || this.wire.stall(sentAt + stall.pastMs));
  }
}
