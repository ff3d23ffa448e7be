/**
 * What standalone mode costs a till, beside the cloud-mode worker, in one run: README command 1
 * as a shop runs it (the built `card-wallet-worker --simulator`, a fresh data folder), its time
 * to listen and its resident memory once idle, on a first start (the embedded ledger's
 * database is made) and a later one; and the same worker with `--cloud-url` (the ledger runs
 * elsewhere: here in a process of its own, not counted). Resident memory is read from
 * /proc/PID/status (VmRSS once idle, VmHWM the peak) of the worker's process and its children.
 * Targets: standalone idle at most 150 MB, a first start under 3 s to listen. The embedded
 * ledger opens behind the listener, so the time to the first answer that needs it (GET /info,
 * which reads the shop) is printed beside.
 *
 *   npm run build && node --import tsx bench/standalone-footprint.ts [--idle-seconds 25] [--rounds 3]
 *
 * Rounds alternate the three kinds of start, each in a new data folder; figures are medians.
 * On a loaded machine every start is slower: "ms beyond cloud mode" is what standalone adds.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freshPgliteFolder, startLedgerProcess } from '../test/support/ledger-process.ts';
import { median, procStat, table, verdict } from './measure.ts';

const IDLE_TARGET_MB = 150;
const API_KEY = 'bench-footprint-key-0123456789';
const FIRST_START_TARGET_MS = 3000;

const { values } = parseArgs({
  options: {
    'idle-seconds': { type: 'string', default: '25' },
    rounds: { type: 'string', default: '3' },
  },
});
const idleSeconds = Number(values['idle-seconds']);
const rounds = Number(values.rounds);
const cli = fileURLToPath(new URL('../dist/service/cli.js', import.meta.url));
if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);

interface Start {
  listenMs: number;
  /** To the first answer that needed the ledger (GET /info reads the shop), from the start. */
  ledgerMs: number;
  idleMb: number;
  peakMb: number;
}

/** The process and its descendants (the worker starts none today; counted if it ever does). */
function tree(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      try {
        return Number(procStat(child)[1]) === pid;
      } catch {
        return false;
      }
    });
  return [pid, ...children.flatMap(tree)];
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  return tree(pid).reduce((sum, each) => {
    try {
      const status = readFileSync(`/proc/${each}/status`, 'utf8');
      return sum + Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
    } catch {
      return sum;
    }
  }, 0);
}

/** Starts the built worker, times it to its `listening on` line, idles, reads its memory. */
async function start(dataDir: string, extraArgs: string[]): Promise<Start> {
  const started = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [cli, '--simulator', '--port', '0', '--data-dir', dataDir, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CARD_WALLET_API_KEY: API_KEY } },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  try {
    const [listenMs, url] = await new Promise<[number, string]>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const listening = /^listening on (\S+)/m.exec(stdout);
        if (listening?.[1]) {
          resolve([Number(process.hrtime.bigint() - started) / 1e6, listening[1]]);
        }
      });
      child.on('exit', (code) => reject(new Error(`worker exited with ${code}:\n${stderr}`)));
    });
    // The standalone ledger opens behind the listener: its first answer is the other half.
    const info = await fetch(`${url}/info`, { headers: { 'X-Api-Key': API_KEY } });
    if (info.status !== 200) throw new Error(`GET /info: ${info.status} ${await info.text()}`);
    const ledgerMs = Number(process.hrtime.bigint() - started) / 1e6;
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    const pid = child.pid as number;
    return { listenMs, ledgerMs, idleMb: statusMb(pid, 'VmRSS'), peakMb: statusMb(pid, 'VmHWM') };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

const ledgerFolder = await freshPgliteFolder();
const ledger = await startLedgerProcess({
  database: ledgerFolder,
  seed: { customers: [{ name: 'Bench shop', credits: 100, creditCost: '1.00', keys: [API_KEY] }] },
});
const folders: string[] = [];
const fresh = () => {
  const folder = mkdtempSync(join(tmpdir(), 'cww-footprint-'));
  folders.push(folder);
  return folder;
};
const loadBefore = loadavg()[0] ?? 0;
const kinds = {
  'standalone, first start': [] as Start[],
  'standalone, later start': [] as Start[],
  'cloud mode (--cloud-url)': [] as Start[],
};
try {
  for (let round = 0; round < rounds; round += 1) {
    const standalone = fresh();
    kinds['standalone, first start'].push(await start(standalone, []));
    kinds['standalone, later start'].push(await start(standalone, []));
    kinds['cloud mode (--cloud-url)'].push(await start(fresh(), ['--cloud-url', ledger.url]));
  }
} finally {
  await ledger.stop();
  rmSync(ledgerFolder, { recursive: true, force: true });
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}

const of = (starts: Start[], key: keyof Start) => median(starts.map((s) => s[key]));
const cloud = kinds['cloud mode (--cloud-url)'];
console.log(
  `standalone footprint: README command 1 (built worker, --simulator), ${rounds} rounds, ` +
    `${idleSeconds} s idle before reading memory, ${cpus().length} CPUs, ` +
    `load average ${loadBefore.toFixed(1)} before the run`,
);
console.log(
  table(
    [
      'start',
      'ms to listen',
      'ms beyond cloud mode',
      'ms to first ledger answer',
      'idle resident MB',
      'peak resident MB',
      'idle MB / cloud mode',
    ],
    Object.entries(kinds).map(([kind, starts]) => [
      kind,
      of(starts, 'listenMs').toFixed(0),
      (of(starts, 'listenMs') - of(cloud, 'listenMs')).toFixed(0),
      of(starts, 'ledgerMs').toFixed(0),
      of(starts, 'idleMb').toFixed(0),
      of(starts, 'peakMb').toFixed(0),
      (of(starts, 'idleMb') / of(cloud, 'idleMb')).toFixed(2),
    ]),
  ),
);
for (const kind of ['standalone, first start', 'standalone, later start'] as const) {
  const idle = of(kinds[kind], 'idleMb');
  console.log(
    verdict(`${kind}: idle resident MB`, idle, `<= ${IDLE_TARGET_MB}`, idle <= IDLE_TARGET_MB),
  );
}
const firstStart = of(kinds['standalone, first start'], 'listenMs');
console.log(
  verdict(
    'standalone, first start: seconds to listen',
    firstStart / 1000,
    `< ${FIRST_START_TARGET_MS / 1000}`,
    firstStart < FIRST_START_TARGET_MS,
  ),
);
