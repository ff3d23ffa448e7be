import { performance } from 'node:perf_hooks';

/** Runs `judge` once what reached the process so far is read (see silenceDeadline). */
export type AfterAnswersRead = (judge: () => void) => void;

/**
 * A deadline on silence, for the card's bounds (an APDU exchange, a turn in the operation
 * queue): `onSilent` runs once `windowMs` passed since it was armed or since the last progress
 * (`lastProgressAt`, performance.now() time: the reader's last answer, an operation's start),
 * whichever is later, and only after what reached the process was read (`afterRead`). Returns a
 * cancel.
 *
 * Why not a plain setTimeout: Node runs a loop turn's overdue timers before its poll phase,
 * where I/O that arrived meanwhile is read (a native binding's threadpool completion, a PC/SC
 * host's message): https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick
 * and https://docs.libuv.org/en/v1.x/design.html. After the process itself stalled (a long GC,
 * a busy till) a timer would call an answer that came in time silence. So the verdict waits for
 * `afterRead`: by default one setImmediate (the check phase, after poll; as groupon/gofer did
 * for HTTP timeouts, https://github.com/groupon/gofer/pull/71), which is enough for a native
 * binding in this process. A reader behind the PC/SC host in Electron's main process gives a
 * round trip to the host instead (reader-answers.ts, main/pcsc-host-client.ts): Electron takes
 * the host's messages from Chromium's message loop, after the immediates of the libuv turn
 * that queued them (electron/electron#28261). That alone is not enough for a bound that spans
 * more than one round trip (nfc-pcsc's authenticate is LOAD KEY then AUTHENTICATE; an operation
 * ahead in the queue sends several APDUs): the stall ate the window, and the next answer needs
 * another turn. An answer read after arming is progress, and the window runs again from it. A
 * card that says nothing is still judged silent one window (plus what `afterRead` takes) after
 * the last thing it said.
 */
export function silenceDeadline(
  windowMs: number,
  lastProgressAt: () => number,
  onSilent: () => void,
  afterRead: AfterAnswersRead = setImmediate,
): () => void {
  const armedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const judge = () => {
    if (cancelled) return;
    const left = Math.max(armedAt, lastProgressAt()) + windowMs - performance.now();
    if (left > 0) arm(left);
    else onSilent();
  };
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      timer = undefined;
      afterRead(judge);
    }, ms);
  };
  arm(windowMs);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
