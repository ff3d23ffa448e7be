// Idle CPU of the headless worker over the same 30 s, side by side: (a) with pcscd running and
// a reader attached, (b) with pcscd down (the worker probes its socket; nfc-pcsc would spin at
// 100% if it were constructed), and a bare `node` process idling as the baseline. Read from
// /proc/PID/stat (utime + stime). Target: under 1% for both workers.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPcscd } from '../test/support/pcscd.ts';
import { startTestLedger, TEST_API_KEY } from '../test/support/test-ledger.ts';
import { startWorkerProcess } from '../test/support/worker-process.ts';
import { clockTicksPerSecond, cpuTicks, table, verdict } from './measure.ts';

const SECONDS = Number(process.env.IDLE_SECONDS ?? 30);
const TICKS_PER_SECOND = clockTicksPerSecond();

const pcscd = await startPcscd();
const ledger = await startTestLedger();
const dirs = [mkdtempSync(join(tmpdir(), 'cww-idle-')), mkdtempSync(join(tmpdir(), 'cww-idle-'))];
const args = (dir: string) => [
  '--port',
  '0',
  '--api-key',
  TEST_API_KEY,
  '--cloud-url',
  ledger.url,
  '--data-dir',
  dir,
];
const withPcscd = await startWorkerProcess(args(dirs[0] as string), pcscd.env);
const withoutPcscd = await startWorkerProcess(args(dirs[1] as string), {
  PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm',
});
const baseline: ChildProcess = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
  stdio: 'ignore',
});
try {
  await new Promise((resolve) => setTimeout(resolve, 2_000)); // past start-up
  const processes = [
    ['worker, pcscd running', withPcscd.child.pid as number],
    ['worker, pcscd down', withoutPcscd.child.pid as number],
    ['bare node (baseline)', baseline.pid as number],
  ] as const;
  const before = processes.map(([, pid]) => cpuTicks(pid));
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const percents = processes.map(
    ([, pid], i) => ((cpuTicks(pid) - (before[i] as number)) / TICKS_PER_SECOND / SECONDS) * 100,
  );
  console.log(`idle CPU over ${SECONDS} s, side by side`);
  console.log(
    table(
      ['process', 'CPU %'],
      processes.map(([name], i) => [name, (percents[i] as number).toFixed(2)]),
    ),
  );
  console.log(
    verdict(
      'worker with pcscd running, CPU %',
      percents[0] as number,
      '< 1',
      (percents[0] as number) < 1,
    ),
  );
  console.log(
    verdict(
      'worker with pcscd down, CPU %',
      percents[1] as number,
      '< 1',
      (percents[1] as number) < 1,
    ),
  );
} finally {
  baseline.kill();
  await withPcscd.stop();
  await withoutPcscd.stop();
  await ledger.close();
  await pcscd.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
