// README command 1 shows the main job on a fresh machine: it starts the service with the card
// simulator, and the README's next block places a card and recharges it with curl. This test
// runs those lines as the README has them. Of `bash scripts/setup.sh` it runs only the last
// step (the build): its apt-get needs root, and its `npm ci` would replace the node_modules this
// test runs from. The service listens on a free port instead of 4178, which the block's URLs
// are pointed at, so the test can run beside another service.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withoutReceipt } from '../support/http-client.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const home = mkdtempSync(join(tmpdir(), 'cww-readme-'));
const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
delete env.XDG_DATA_HOME;
delete env.CARD_WALLET_API_KEY;
let stopService: (() => void) | undefined;

// `npx card-wallet-worker` runs the build, as after setup.sh; built once for both tests.
before(() => {
  const build = spawnSync('npm', ['run', 'build', '--silent'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  assert.equal(build.status, 0, build.stderr);
});

after(() => {
  stopService?.();
  rmSync(home, { recursive: true, force: true });
});

/** The processes whose command line names `dataDir` (Linux's /proc). */
function workersOf(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** The first ```sh block after `marker`. */
function shellBlockAfter(marker: string, text = readme): string {
  const start = text.indexOf(marker);
  assert.ok(start >= 0, `the document has ${marker}`);
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(start));
  assert.ok(match?.[1], `a sh block after ${marker}`);
  return match[1];
}

test('when README command 1 starts the service and its simulator block runs, then a simulated card is placed, recharged and paid out', async () => {
  const command1 = /^bash scripts\/setup\.sh && (.+)$/m.exec(
    shellBlockAfter('# Card Wallet Worker'),
  );
  assert.equal(command1?.[1], 'npx card-wallet-worker --simulator');

  // In a process group of its own, stopped as a group: npx does not pass SIGTERM on to the
  // worker it starts, which would otherwise outlive the test.
  const child = spawn('bash', ['-c', `exec ${command1[1]} --port 0`], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  stopService = () => {
    try {
      process.kill(-(child.pid as number), 'SIGTERM');
    } catch (error) {
      // Gone already (it failed to start): its own failure is the test's.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before listening:\n${stderr}`)));
  });
  assert.match(stderr, /CARD SIMULATOR ON/);

  const block = shellBlockAfter('<!-- readme-simulator').replaceAll('http://127.0.0.1:4178', url);
  // From the clone, as the README's commands are typed (`npx card-wallet-worker key` there).
  const run = spawnSync('bash', ['-e', '-c', block], { cwd: root, env, encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  // curl -s prints each answer without a newline: one JSON object after the other.
  const answers = run.stdout
    .replaceAll('}{', '}\n{')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(answers.length, 4, run.stdout);
  const [placed, read, recharged, discharged] = answers;
  const cardId = placed?.cardId;
  assert.deepEqual(placed, { cardId, credits: 50 });
  assert.deepEqual(read, { cardId, credits: 50, rechargeAmount: null });
  assert.deepEqual(withoutReceipt(recharged), { cardId, credits: 60, rechargeAmount: 5 });
  assert.deepEqual(withoutReceipt(discharged), {
    cardId,
    dischargedCredits: 60,
    dischargedAmount: 30,
  });
  assert.match(String(recharged?.movementId), /^[0-9a-f-]{36}$/, 'a receipt');
});

test("when the integrator guide's CI script runs as written, then every call answers what its comment says", () => {
  const guide = readFileSync(join(root, 'docs', 'integrators.md'), 'utf8');
  const script = shellBlockAfter('<!-- integrators-simulator-script', guide);
  const run = spawnSync('bash', ['-c', script], { cwd: root, env, encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const calls = script.split('\n').filter((line) => line.startsWith('call '));
  const answers = run.stdout.split('\n').slice(0, calls.length);
  assert.equal(answers.length, calls.length, run.stdout);
  calls.forEach((line, index) => {
    const expected = /# (\{.*\})$/.exec(line)?.[1];
    if (expected === undefined) return;
    // The comments show the spec's fields; a money answer's receipt comes beside them.
    assert.deepEqual(
      withoutReceipt(JSON.parse(answers[index] ?? '')),
      JSON.parse(expected),
      `${line}\n-> ${answers[index]}`,
    );
  });
});

test('when the worker started through npx is stopped by npx’s PID, as a harness’s `kill $!` does, then the worker stops too and its port is free', async () => {
  const dataDir = mkdtempSync(join(home, 'npx-'));
  const npx = spawn(
    'npx',
    ['card-wallet-worker', '--simulator', '--port', '0', '--data-dir', dataDir],
    {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  npx.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    npx.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    npx.on('exit', (code) => reject(new Error(`exited ${code} before listening:\n${stderr}`)));
  });
  npx.kill('SIGTERM');
  // The worker notices that npx is gone and stops as on SIGTERM: it closes and exits.
  let running = workersOf(dataDir);
  assert.ok(running.length > 0, 'the worker (and npx), found by the data folder');
  for (let tries = 0; tries < 300 && running.length > 0; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = workersOf(dataDir);
  }
  // Nothing this test started may outlive it, whatever the outcome.
  for (const pid of running) process.kill(pid, 'SIGKILL');
  assert.deepEqual(running, [], `the worker is still running:\n${stderr}`);
  const answer = await fetch(`${url}/ping`).then(
    (res) => res.status,
    () => 'refused',
  );
  assert.equal(answer, 'refused');
  assert.match(stderr, /npx \(process \d+\) has ended: stopping/);
});
