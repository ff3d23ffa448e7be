import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnWorker(args: string[], env: Record<string, string | undefined>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'service/cli.ts', ...args], {
    cwd: root,
    env: {
      ...process.env,
      CARD_WALLET_API_KEY: undefined,
      CARD_WALLET_CARD_MASTER_KEY: undefined,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the headless worker to completion (for --help and bad configurations). */
export function runWorker(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<ProcessResult> {
  const child = spawnWorker(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Starts the headless worker and resolves once it printed its `listening on` line. */
export function startWorkerProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  // A readiness bound, not a speed check: a standalone start (PGlite) on a busy 2-core machine
  // has been seen to take over 15 s.
  timeoutMs = 60_000,
): Promise<WorkerProcess> {
  const child = spawnWorker(args, env);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`worker did not start in ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before listening:\n${stderr}`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/m.exec(stdout);
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve({
        child,
        url: match[1],
        stderr: () => stderr,
        async stop(signal = 'SIGTERM') {
          process.off('exit', kill);
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
      });
    });
  });
}
