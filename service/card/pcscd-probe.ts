import { connect } from 'node:net';

/**
 * Whether pcscd accepts connections on its unix socket. nfc-pcsc's `new NFC()` busy-waits at
 * 100% CPU, blocking the event loop, while pcscd is not running (docs/pcsc-test-rig.md), so
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

/** Runs a program and gives its standard output (node:child_process execFile, promisified). */
export type RunProgram = (file: string, args: string[]) => Promise<string>;

const runProgram: RunProgram = async (file, args) => {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 5_000, windowsHide: true }, (error, stdout) => {
      // `sc query` of a missing service exits 1060 with its explanation on stdout.
      if (error && !stdout) reject(error);
      else resolve(stdout);
    });
  });
};

/**
 * Whether Windows' Smart Card service (SCardSvr) is running, from `sc.exe query SCardSvr`.
 * Since Windows 8 the service is trigger-started: it stops when the last reader is unplugged
 * and starts when one is plugged in. While it is stopped, @pokusew/pcsclite asks for elevation
 * and then loops at 100% CPU on the main thread (pokusew/nfc-pcsc#48, pokusew/nfc-pcsc#84,
 * pokusew/node-pcsclite#21, pokusew/node-pcsclite#55), so nfc-pcsc is constructed only once
 * this says yes. `sc` prints `STATE : 4  RUNNING` in English and in translated Windows alike
 * (the number is not translated).
 */
export async function isSCardSvrRunning(run: RunProgram = runProgram): Promise<boolean> {
  try {
    const output = await run('sc.exe', ['query', 'SCardSvr']);
    return /^\s*STATE\s*:\s*4\b/m.test(output);
  } catch {
    return false;
  }
}

/**
 * The probe of the platform's smart-card service, run before each attempt to create a PC/SC
 * context: pcscd's socket on Linux, SCardSvr's state on Windows. macOS's CryptoTokenKit PC/SC
 * service is part of the OS and started on demand, so there is nothing to wait for.
 */
export function smartCardServiceProbe(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv = process.env,
  run?: RunProgram,
): { describe: string; reachable: () => Promise<boolean> } {
  if (platform === 'win32') {
    return {
      describe: 'the Windows Smart Card service (SCardSvr) is not running; plug in the reader',
      reachable: () => isSCardSvrRunning(run),
    };
  }
  if (platform === 'darwin') {
    return { describe: 'the macOS smart-card service', reachable: async () => true };
  }
  const socket = env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm';
  return {
    describe: `pcscd is not running (no ${socket}); install and start pcscd`,
    reachable: () => isPcscdReachable(socket),
  };
}
