// A private pcscd per test file, with the vpcd driver, so tests drive the real PC/SC stack
// (nfc-pcsc -> libpcsclite -> pcscd -> vpcd -> a virtual card in Node, see virtual-card.ts).
//
// pcscd 1.9.9 always serves /run/pcscd/pcscd.comm and ignores PCSCLITE_CSOCK_NAME, while the
// client library honours it. So each rig runs its pcscd in a private mount namespace where
// /run/pcscd is a bind mount of a temp folder, with its own reader.conf.d and its own pair of
// vpcd ports: test files running in parallel never share a daemon, a socket or a port, and
// the machine's own pcscd (if any) is left alone.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export interface PcscdOptions {
  /** Start pcscd with `--debug --apdu` so log() shows every APDU (noisy; for debugging). */
  apduLog?: boolean;
  /**
   * Preload tcp-nodelay.so into pcscd (default true): an APDU then costs ~0.1 ms instead of
   * ~44 ms. Turn off only to measure the stock behaviour.
   */
  tcpNoDelay?: boolean;
}

export interface PcscdRig {
  /** Give it to nfc-pcsc users as env PCSCLITE_CSOCK_NAME. Stable across stop/start. */
  readonly socketPath: string;
  /** `{ PCSCLITE_CSOCK_NAME: socketPath }`, for child processes. */
  readonly env: Record<string, string>;
  /** 'Virtual PCD 00 00' -> port, 'Virtual PCD 00 01' -> port + 1. Stable across stop/start. */
  readonly readers: { name: string; port: number }[];
  /** PID of the current (or last) pcscd process. */
  readonly pid: number;
  /** Whether the pcscd process is alive. */
  readonly running: boolean;
  /** pcscd's output so far, across restarts (for failure messages). */
  log(): string;
  /** SIGTERM, SIGKILL after 3 s, wait for exit, remove the temp folder. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL now (pcscd dying under the service) and wait for exit. The socket file stays. */
  kill(): Promise<void>;
  /** Start again with the same socket path and ports; no-op if running. */
  start(): Promise<void>;
}

const VPCD_DRIVER_CANDIDATES = [
  '/usr/lib/pcsc/drivers/serial/libifdvpcd.so',
  '/usr/lib64/pcsc/drivers/serial/libifdvpcd.so',
  '/usr/local/lib/pcsc/drivers/serial/libifdvpcd.so',
];
const INSTALL_HINT = 'apt-get install pcscd vsmartcard-vpcd';
const TEMP_PREFIX = 'card-wallet-pcscd-';
// The test process that owns a temp folder, so a later rig can sweep folders left behind by a
// test process killed by a signal (no 'exit' handler runs then; pcscd itself dies with it).
const OWNER_FILE = 'owner.pid';
const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 3_000;
// Keep the tail only: with --apdu, a long test file logs megabytes.
const MAX_LOG_CHARS = 1_000_000;

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const nodelaySource = fileURLToPath(new URL('./tcp-nodelay.c', import.meta.url));
const cacheDir = join(projectRoot, 'node_modules', '.cache', 'card-wallet-rig');

// Ports handed out in this process, so two rigs of one test file never pick the same pair
// even before their pcscd listens.
const reservedPorts = new Set<number>();

/** Starts a private pcscd with two vpcd readers; resolves when clients and cards can connect. */
export async function startPcscd(options: PcscdOptions = {}): Promise<PcscdRig> {
  const pcscdPath = findExecutable('pcscd');
  const driverPath = VPCD_DRIVER_CANDIDATES.find((path) => existsSync(path));
  if (!pcscdPath) throw new Error(`pcscd is not installed (${INSTALL_HINT})`);
  if (!driverPath)
    throw new Error(`the vpcd driver libifdvpcd.so is not installed (${INSTALL_HINT})`);
  for (const tool of ['unshare', 'mount', 'setpriv']) {
    if (!findExecutable(tool))
      throw new Error(`${tool} is not installed (apt-get install util-linux mount)`);
  }
  if (!existsSync('/run/pcscd')) {
    // The bind mount needs a mount point; only root can create it.
    try {
      mkdirSync('/run/pcscd', { recursive: true });
    } catch (error) {
      throw new Error(`/run/pcscd is missing and cannot be created: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  sweepStaleTempFolders();
  const preload = (options.tcpNoDelay ?? true) ? await buildTcpNoDelay() : undefined;

  // A port pair can be taken between the check and pcscd's bind (another test file, another
  // program): then vpcd fails to listen, or someone else's socket listens. Try other pairs.
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = pickPortPair();
    const rig = new Rig(pcscdPath, driverPath, port, options.apduLog ?? false, preload);
    try {
      await rig.start();
      return rig;
    } catch (error) {
      lastError = error as Error;
      await rig.stop();
      reservedPorts.delete(port);
      reservedPorts.delete(port + 1);
      if (!(error instanceof PortTakenError)) throw error;
    }
  }
  throw lastError ?? new Error('could not start pcscd');
}

class PortTakenError extends Error {}

class Rig implements PcscdRig {
  readonly socketPath: string;
  readonly env: Record<string, string>;
  readonly readers: { name: string; port: number }[];
  readonly #dir: string;
  readonly #args: string[];
  readonly #spawnEnv: NodeJS.ProcessEnv;
  readonly #driverPath: string;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #alive = false;
  #output = '';
  readonly #onProcessExit = () => this.#killSync();

  constructor(
    pcscdPath: string,
    driverPath: string,
    readonly port: number,
    apduLog: boolean,
    preload: string | undefined,
  ) {
    this.#dir = mkdtempSync(join(tmpdir(), TEMP_PREFIX));
    writeFileSync(join(this.#dir, OWNER_FILE), String(process.pid));
    this.socketPath = join(this.#dir, 'run', 'pcscd.comm');
    this.env = { PCSCLITE_CSOCK_NAME: this.socketPath };
    this.readers = [
      { name: 'Virtual PCD 00 00', port },
      { name: 'Virtual PCD 00 01', port: port + 1 },
    ];
    // --info logs reader and card events, cheap and useful in a failure message.
    const logLevel = apduLog ? ['--debug', '--apdu'] : ['--info'];
    const pcscdArgs = ['--foreground', ...logLevel, '--config', join(this.#dir, 'conf')];
    // The shell does the bind mount inside the new namespace, then execs (same PID throughout,
    // so `pid` is pcscd's own). setpriv's parent-death signal kills pcscd even when the test
    // process dies by SIGKILL, where no 'exit' handler runs.
    const script = 'mount --bind "$0" /run/pcscd && exec setpriv --pdeathsig KILL -- "$@"';
    this.#args = [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      script,
      join(this.#dir, 'run'),
      pcscdPath,
      ...pcscdArgs,
    ];
    this.#spawnEnv = { ...process.env, ...(preload ? { LD_PRELOAD: preload } : {}) };
    // The daemon must not inherit a client-side socket override meant for the test process.
    delete this.#spawnEnv.PCSCLITE_CSOCK_NAME;
    this.#driverPath = driverPath;
  }

  get pid(): number {
    return this.#child?.pid ?? -1;
  }

  get running(): boolean {
    return this.#alive;
  }

  log(): string {
    return this.#output;
  }

  async start(): Promise<void> {
    if (this.#alive) return;
    const runDir = join(this.#dir, 'run');
    const confDir = join(this.#dir, 'conf');
    mkdirSync(runDir, { recursive: true });
    mkdirSync(confDir, { recursive: true });
    // A killed pcscd leaves its socket and PID file; the new one must not trip over them.
    rmSync(join(runDir, 'pcscd.comm'), { force: true });
    rmSync(join(runDir, 'pcscd.pid'), { force: true });
    const channel = `0x${this.port.toString(16).toUpperCase()}`;
    writeFileSync(
      join(confDir, 'vpcd'),
      [
        'FRIENDLYNAME "Virtual PCD"',
        `DEVICENAME   /dev/null:${channel}`,
        `LIBPATH      ${this.#driverPath}`,
        `CHANNELID    ${channel}`,
        '',
      ].join('\n'),
    );

    const child = spawn('unshare', this.#args, {
      env: this.#spawnEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    this.#alive = true;
    this.#appendLog(`--- pcscd starting (ports ${this.port}, ${this.port + 1}) ---\n`);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.#appendLog(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.#appendLog(chunk));
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#alive = false;
        process.off('exit', this.#onProcessExit);
        this.#appendLog(`--- pcscd exited (${signal ?? `code ${code}`}) ---\n`);
        resolve();
      });
      child.once('error', (error) => {
        this.#alive = false;
        process.off('exit', this.#onProcessExit);
        this.#appendLog(`--- could not spawn pcscd: ${error.message} ---\n`);
        resolve();
      });
    });
    process.on('exit', this.#onProcessExit);

    const deadline = Date.now() + READY_TIMEOUT_MS;
    const logStart = this.#output.length;
    for (;;) {
      if (!this.#alive) throw new Error(`pcscd exited while starting:\n${this.#output}`);
      // vpcd could not bind (any socket on the port, even a client's, blocks it): pcscd goes
      // on without readers, so this is the only sign.
      if (this.#output.includes('Could not initialize connection to virtual ICC', logStart)) {
        throw new PortTakenError(`vpcd could not listen on port ${this.port}:\n${this.#output}`);
      }
      const pid = child.pid;
      if (pid !== undefined && existsSync(this.socketPath)) {
        const owners = [this.port, this.port + 1].map((port) => listenerOwnership(port, pid));
        if (owners.includes('other')) {
          throw new PortTakenError(
            `vpcd port ${this.port} or ${this.port + 1} is taken by another process`,
          );
        }
        if (owners.every((owner) => owner === 'ours')) return;
      }
      if (Date.now() > deadline) {
        throw new Error(`pcscd did not get ready within ${READY_TIMEOUT_MS} ms:\n${this.#output}`);
      }
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    if (this.#alive && this.#child?.pid !== undefined) {
      signal(this.#child.pid, 'SIGTERM');
      // pcscd waits for its reader threads, and a thread blocked on a stalled virtual card
      // never returns: SIGKILL after a grace period.
      const timer = setTimeout(() => {
        if (this.#alive && this.#child?.pid !== undefined) signal(this.#child.pid, 'SIGKILL');
      }, STOP_GRACE_MS);
      await this.#exited;
      clearTimeout(timer);
    }
    await this.#exited;
    rmSync(this.#dir, { recursive: true, force: true });
  }

  async kill(): Promise<void> {
    if (this.#alive && this.#child?.pid !== undefined) signal(this.#child.pid, 'SIGKILL');
    await this.#exited;
  }

  #killSync(): void {
    if (this.#alive && this.#child?.pid !== undefined) signal(this.#child.pid, 'SIGKILL');
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #appendLog(text: string): void {
    this.#output += text;
    if (this.#output.length > MAX_LOG_CHARS) this.#output = this.#output.slice(-MAX_LOG_CHARS);
  }
}

function sweepStaleTempFolders(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((name) => name.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    try {
      const owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
      if (owner > 0 && !isAlive(owner)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // No owner file (being created right now, or not ours): leave it.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone: the 'exit' event follows or has fired.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function findExecutable(name: string): string | undefined {
  // Debian keeps pcscd in /usr/sbin, which a non-login PATH may lack.
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

interface TcpSocketEntry {
  port: number;
  listening: boolean;
  inode: string;
}

// Reads the kernel's socket tables instead of probing: a TCP connection to a vpcd port would
// be taken for a card.
function tcpSockets(): TcpSocketEntry[] {
  const entries: TcpSocketEntry[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const state = fields[3];
      const inode = fields[9];
      if (!local || !state || inode === undefined) continue;
      const portHex = local.slice(local.lastIndexOf(':') + 1);
      entries.push({ port: parseInt(portHex, 16), listening: state === '0A', inode });
    }
  }
  return entries;
}

function listenerOwnership(port: number, pid: number): 'none' | 'ours' | 'other' {
  const listeners = tcpSockets().filter((entry) => entry.port === port && entry.listening);
  if (listeners.length === 0) return 'none';
  const inodes = socketInodesOf(pid);
  return listeners.some((entry) => inodes.has(entry.inode)) ? 'ours' : 'other';
}

function socketInodesOf(pid: number): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // fd closed meanwhile
    }
  }
  return inodes;
}

function pickPortPair(): number {
  const used = new Set(tcpSockets().map((entry) => entry.port));
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = 40_000 + 2 * Math.floor(Math.random() * 10_000);
    const pair = [port, port + 1];
    if (pair.some((p) => used.has(p) || reservedPorts.has(p))) continue;
    pair.forEach((p) => reservedPorts.add(p));
    return port;
  }
  throw new Error('no free TCP port pair in 40000-60000');
}

const execFileAsync = promisify(execFile);

/**
 * Builds tcp-nodelay.so into node_modules/.cache/card-wallet-rig on first use (and when the
 * source is newer). Written under a temp name and renamed, so test files starting in parallel
 * never load a half-written library.
 */
export async function buildTcpNoDelay(): Promise<string> {
  const output = join(cacheDir, 'tcp-nodelay.so');
  try {
    if (statSync(output).mtimeMs >= statSync(nodelaySource).mtimeMs) return output;
  } catch {
    // not built yet
  }
  if (!findExecutable('gcc')) {
    throw new Error(
      'gcc is needed to build tcp-nodelay.so (apt-get install gcc), or pass tcpNoDelay: false',
    );
  }
  mkdirSync(cacheDir, { recursive: true });
  const temp = `${output}.${process.pid}.tmp`;
  try {
    await execFileAsync('gcc', ['-shared', '-fPIC', '-O2', '-o', temp, nodelaySource, '-ldl']);
    renameSync(temp, output);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new Error(`building tcp-nodelay.so failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return output;
}
