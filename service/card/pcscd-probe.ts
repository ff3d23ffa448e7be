import { connect } from 'node:net';
import type { ReaderProblem } from './reader-problems.ts';

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
    // latin1: sc.exe and reg.exe write in the console's OEM code page; nothing parsed here
    // depends on a letter outside ASCII, and no byte sequence can make the decoding throw.
    execFile(
      file,
      args,
      { timeout: 5_000, windowsHide: true, encoding: 'latin1' },
      (error, stdout) => {
        // `sc query` of a missing service exits 1060 with its explanation on stdout.
        if (error && !stdout) reject(error);
        else resolve(stdout);
      },
    );
  });
};

/** A Windows service's state (SERVICE_STATUS.dwCurrentState): 4 is SERVICE_RUNNING. */
export const SERVICE_RUNNING = 4;

/**
 * The state number in `sc.exe query NAME`, in any language. Windows translates the labels
 * (STATE is STATUS in German, ÉTAT in French, ESTADO in Spanish) and on some versions the state's
 * name, never the numbers or the order: SERVICE_NAME, then TYPE and STATE, each "label : number
 * name". So the state is the second "label : number" line. `missing` when sc says the service
 * does not exist (error 1060, said in the local language with the number), null when the output
 * is not sc's.
 */
export function parseServiceState(output: string): number | 'missing' | null {
  if (/\b1060\b/.test(output) && !/:\s*\d+\s+\S/.test(output)) return 'missing';
  const numbers = [...output.matchAll(/^[ \t]*[^:\r\n]+?[ \t]*:[ \t]*(\d+)[ \t]+\S/gm)].map(
    (match) => Number(match[1]),
  );
  const state = numbers[1];
  return state !== undefined && state >= 1 && state <= 7 ? state : null;
}

/** A Windows service's start type (the registry's `Start`): 2 automatic, 3 manual, 4 disabled. */
export const START_AUTOMATIC = 2;
export const START_ON_DEMAND = 3;
export const START_DISABLED = 4;

/**
 * The `Start` value in `reg.exe query HKLM\...\Services\NAME /v Start`: `Start    REG_DWORD    0x3`.
 * reg.exe prints value names, types and data as stored, in every language. Null when absent.
 */
export function parseStartType(output: string): number | null {
  const match = /^\s*Start\s+REG_DWORD\s+0x([0-9a-f]+)\s*$/im.exec(output);
  return match ? Number.parseInt(match[1] as string, 16) : null;
}

const SCARDSVR_KEY = 'HKLM\\SYSTEM\\CurrentControlSet\\Services\\SCardSvr';

/**
 * Windows' Smart Card service (SCardSvr), read without a translated word: its state number from
 * `sc.exe query`, and, when it is not running, its start type from the registry. Windows installs
 * it as manual (trigger) start: it runs only while a reader is plugged in, and stops when the
 * last one is unplugged. @pokusew/pcsclite's constructor used to "fix" that itself with an
 * elevated `sc config` and an endless retry (patches/@pokusew+pcsclite+0.6.0.patch removes both),
 * so the reader manager asks this before each attempt, and the tray offers the fix instead
 * (main/smart-card-service.ts, and the installer: build/installer.nsh).
 */
export async function scardSvrProblem(run: RunProgram = runProgram): Promise<ReaderProblem | null> {
  let state: number | 'missing' | null;
  try {
    state = parseServiceState(await run('sc.exe', ['query', 'SCardSvr']));
  } catch (error) {
    return {
      code: 'service-stopped',
      message: `the state of the Windows Smart Card service (SCardSvr) could not be read: ${(error as Error).message}`,
    };
  }
  if (state === SERVICE_RUNNING) return null;
  if (state === 'missing')
    return {
      code: 'service-disabled',
      message: 'the Windows Smart Card service (SCardSvr) is not installed on this computer',
    };
  let startType: number | null = null;
  try {
    startType = parseStartType(await run('reg.exe', ['query', SCARDSVR_KEY, '/v', 'Start']));
  } catch {
    // Unknown start type: said as stopped below.
  }
  const now = state === null ? 'its state is unknown' : `its state is ${state}, not running (4)`;
  if (startType === START_ON_DEMAND)
    return {
      code: 'service-on-demand',
      message: `the Windows Smart Card service (SCardSvr) starts only while a reader is plugged in (start type manual); ${now}`,
    };
  if (startType === START_DISABLED)
    return {
      code: 'service-disabled',
      message: `the Windows Smart Card service (SCardSvr) is disabled; ${now}`,
    };
  return {
    code: 'service-stopped',
    message: `the Windows Smart Card service (SCardSvr) is not running; ${now}`,
  };
}

/** pcscd's socket as a probe: a problem while nothing accepts connections there. */
export async function pcscdProblem(socketPath: string): Promise<ReaderProblem | null> {
  if (await isPcscdReachable(socketPath)) return null;
  return {
    code: 'service-stopped',
    message: `pcscd is not running (no ${socketPath}); install and start pcscd`,
  };
}

/** Asked before each attempt to create a PC/SC context: null when one can be made now. */
export interface SmartCardServiceProbe {
  check(): Promise<ReaderProblem | null>;
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
): SmartCardServiceProbe {
  if (platform === 'win32') return { check: () => scardSvrProblem(run) };
  if (platform === 'darwin') return { check: async () => null };
  const socket = env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm';
  return { check: () => pcscdProblem(socket) };
}

/**
 * How long to wait before looking for the service again: 1 s, doubling to 30 s, so an idle
 * till without a reader starts a process every 30 s rather than every second (`sc.exe` each
 * time: about 2 900 a day instead of 86 000). Reset once a reader is attached, so the next
 * outage is noticed as quickly as the first.
 */
export class RetryBackoff {
  readonly #firstMs: number;
  readonly #maxMs: number;
  #nextMs: number;

  constructor(firstMs = 1_000, maxMs = 30_000) {
    this.#firstMs = firstMs;
    this.#maxMs = Math.max(firstMs, maxMs);
    this.#nextMs = firstMs;
  }

  /** The wait before the next attempt; each call doubles the following one, up to the cap. */
  next(): number {
    const wait = this.#nextMs;
    this.#nextMs = Math.min(wait * 2, this.#maxMs);
    return wait;
  }

  reset(): void {
    this.#nextMs = this.#firstMs;
  }
}
