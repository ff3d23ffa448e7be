import type { Reader } from 'nfc-pcsc';
import { performance } from 'node:perf_hooks';

/**
 * When each reader last answered anything (performance.now() time, when the loop read it), for
 * the bounds on the card's silence (silence-deadline.ts). nfc-pcsc's Reader sends several APDUs
 * for one call (authenticate: LOAD KEY, then AUTHENTICATE; a long read: one per 16 bytes), so
 * the answers are seen under it, on the PC/SC reader it drives (@pokusew/pcsclite's CardReader,
 * the PC/SC host's proxy of it, or the simulator's): every call that answers through a callback.
 */
const lastAnswers = new WeakMap<object, number>();

/**
 * The PC/SC reader calls that answer through a callback, their last argument: those nfc-pcsc
 * 0.8.1's Reader makes (dist/Reader.js: connect, disconnect, transmit, control; besides them
 * only on and close), each of @pokusew/pcsclite 0.6.0's CardReader a JS method over a native
 * call (_connect, _disconnect, _transmit, _control). On an upgrade of either, recheck that
 * nfc-pcsc still reaches the card only through these methods, and that pcsclite answers each
 * through its callback (not a promise, not an event): test/unit/reader-answers.test.ts drives
 * the installed Reader over pcsclite's own methods and fails if an answer goes unnoted. A call
 * pcsclite ends itself (transmit while not connected) also counts as an answer: it ends the
 * call at once, so no silence is left to bound.
 */
const ANSWERING = ['transmit', 'control', 'connect', 'disconnect'] as const;

/** Starts noting `reader`'s answers (once per PC/SC reader; a reader without one: nothing). */
export function watchAnswers(reader: Reader): void {
  const pcsc = (reader as { reader?: unknown }).reader as Record<string, unknown> | undefined;
  if (!pcsc || lastAnswers.has(pcsc)) return;
  lastAnswers.set(pcsc, -Infinity);
  for (const method of ANSWERING) {
    const call = pcsc[method];
    if (typeof call !== 'function') continue;
    pcsc[method] = function (this: unknown, ...args: unknown[]) {
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = (...answer: unknown[]) => {
          lastAnswers.set(pcsc, performance.now());
          return callback(...answer) as unknown;
        };
      }
      return call.apply(this, args) as unknown;
    };
  }
}

/** When `reader` last answered (-Infinity: never, or not watched). */
export function lastAnswerAt(reader: Reader): number {
  const pcsc = (reader as { reader?: object }).reader;
  return (pcsc && lastAnswers.get(pcsc)) ?? -Infinity;
}

/**
 * Runs `judge` once the answers that reached this process are read, for a verdict of silence
 * (silence-deadline.ts): the PC/SC reader's own way when it has one (the PC/SC host's proxy in
 * Electron's main process asks the host for a round trip: main/pcsc-host-client.ts), else one
 * setImmediate (a native binding's answers are read in the loop's poll phase, before it).
 */
export function afterAnswersRead(reader: Reader | undefined, judge: () => void): void {
  const pcsc = (reader as { reader?: { afterAnswersRead?: unknown } } | undefined)?.reader;
  if (typeof pcsc?.afterAnswersRead === 'function')
    (pcsc.afterAnswersRead as (judge: () => void) => void)(judge);
  else setImmediate(judge);
}
