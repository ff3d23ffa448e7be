// The client library as an integrator installs it: from a fresh checkout of client/ alone (no
// install or build of the worker), `npm ci && npm pack` makes the tarball; arethetypeswrong
// finds no problem in its types under node10, node16 and bundler resolution; and two POS
// projects install it, type-check, and run against a service with the card simulator: one on
// moduleResolution node10 (CommonJS), one on bundler (ES modules).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestLedger, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const attw = join(dirname(require.resolve('@arethetypeswrong/cli/package.json')), 'dist/index.js');
const exec = promisify(execFile);

let work: string;
let tarball: string;
let ledger: TestLedger;
let service: TestService;

/** Runs a command; a failure shows its output. */
async function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    return await exec(file, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 1 << 24 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} in ${cwd} failed:\n${stdout}\n${stderr}`, {
      cause: error,
    });
  }
}

/** What `git clone` gives of client/: the files git has (committed or not), nothing built. */
async function checkoutClient(into: string): Promise<string> {
  const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', 'client'], root);
  for (const file of stdout.split('\n').filter(Boolean)) {
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(join(root, file), join(into, file));
  }
  return join(into, 'client');
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'cww-client-package-'));
  const [client, started] = await Promise.all([
    checkoutClient(join(work, 'checkout')),
    startTestLedger(),
  ]);
  ledger = started;
  service = await startTestService({ cloudUrl: ledger.url, simulator: true });
  // The registry's packages come from npm's cache when it has them (the worker's install put
  // the same TypeScript and esbuild there).
  await run(
    'npm',
    ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    client,
  );
  await run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], client);
  const packed = readdirSync(work).find((file) => file.endsWith('.tgz'));
  assert.ok(packed, `a tarball in ${readdirSync(work).join(', ')}`);
  tarball = join(work, packed);
});
after(async () => {
  await service?.close();
  await ledger?.close();
  rmSync(work, { recursive: true, force: true });
});

test('when the packed client is checked by arethetypeswrong, then its types resolve under node10, node16 (from CommonJS and ESM) and bundler with no problem', async () => {
  const { stdout } = await run(process.execPath, [attw, tarball, '--format', 'json'], work);
  const report = JSON.parse(stdout) as {
    analysis: { problems: unknown[]; entrypoints: Record<string, { resolutions: object }> };
  };
  assert.deepEqual(report.analysis.problems, [], stdout);
  assert.deepEqual(Object.keys(report.analysis.entrypoints['.']?.resolutions ?? {}).sort(), [
    'bundler',
    'node10',
    'node16-cjs',
    'node16-esm',
  ]);
});

/** A POS program using the client: place a card, wait for it, recharge it with a reference. */
const POS_PROGRAM = `
import { CardWalletClient, isCardWalletError, type RechargeResult } from 'card-wallet-worker-client';

declare const process: { env: Record<string, string | undefined> };

async function main(): Promise<void> {
  const wallet = new CardWalletClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY as string });
  const sale = process.env.SALE as string;
  await wallet.simulator.place({ credits: 5 });
  const card = await wallet.waitForCard({ timeout: 10_000 });
  let done: RechargeResult;
  try {
    done = await wallet.rechargeCard({ credits: 10 }, { reference: sale });
  } catch (error) {
    if (!isCardWalletError(error, 'rechargeCard')) throw error;
    const key: string = error.idempotencyKey;
    done = await wallet.retry(error);
    void key;
  }
  const found = await wallet.movements({ reference: sale });
  console.log(
    JSON.stringify({
      before: card.credits,
      after: done.credits,
      simulated: wallet.simulated,
      receipt: found.map((m) => m.movementId === done.movementId && m.reference),
    }),
  );
}
void main();
`;

const PROJECTS = {
  node10: {
    packageJson: { name: 'pos-node10', private: true },
    tsconfig: {
      compilerOptions: {
        module: 'commonjs',
        moduleResolution: 'node10',
        // TypeScript 6 deprecates node10 resolution; projects still on it say so.
        ignoreDeprecations: '6.0',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        strict: true,
        skipLibCheck: false,
        outDir: 'out',
      },
      include: ['pos.ts'],
    },
  },
  bundler: {
    packageJson: { name: 'pos-bundler', private: true, type: 'module' },
    tsconfig: {
      compilerOptions: {
        module: 'esnext',
        moduleResolution: 'bundler',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        strict: true,
        skipLibCheck: false,
        outDir: 'out',
      },
      include: ['pos.ts'],
    },
  },
};

for (const [name, project] of Object.entries(PROJECTS)) {
  test(`when a POS project on moduleResolution ${name} installs the tarball, then it type-checks and runs against the simulator`, async () => {
    const dir = join(work, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify(project.packageJson));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(project.tsconfig));
    writeFileSync(join(dir, 'pos.ts'), POS_PROGRAM);
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], dir);
    await run(process.execPath, [tsc, '-p', '.'], dir);
    const { stdout } = await run(process.execPath, ['out/pos.js'], dir, {
      BASE_URL: service.url,
      API_KEY: TEST_API_KEY,
      SALE: `sale-${name}`,
    });
    assert.deepEqual(
      JSON.parse(stdout),
      { before: 5, after: 15, simulated: true, receipt: [`sale-${name}`] },
      stdout,
    );
  });
}
