import { connect } from 'node:net';

/**
 * Whether pcscd accepts connections on its unix socket. nfc-pcsc's `new NFC()` busy-waits at
 * 100% CPU, blocking the event loop, while pcscd is not running (shared/pcsc-test-rig.md), so
 * the reader manager constructs it only after this says yes. A connect-and-close is harmless to
 * pcscd: it is what every client does first.
 */
export function isPcscdReachable(socketPath: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (reachable: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reachable);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
