// README command 1 on a till or CI machine that reaches the package registries but not
// nodejs.org: the PC/SC binding's node-gyp build must find Node's headers installed, as
// scripts/setup.sh tells it (scripts/node-headers.sh), never download them. Here node-gyp gets
// an empty header cache and a download address where nothing listens (as .ci/run gives
// setup.sh), and builds a copy of the binding.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const nodeGyp = join(dirname(require.resolve('node-gyp/package.json')), 'bin/node-gyp.js');
const exec = promisify(execFile);
let work: string;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'cww-offline-setup-'));
  for (const name of ['@pokusew/pcsclite', 'nan']) {
    cpSync(join(root, 'node_modules', name), join(work, 'node_modules', name), {
      recursive: true,
      filter: (path) => !path.includes(`${name}/build`),
    });
  }
});
after(() => rmSync(work, { recursive: true, force: true }));

/** node-gyp rebuild of the binding's copy, with downloads blocked; its exit code and output. */
async function buildOffline(nodedir: string | undefined) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_devdir: mkdtempSync(join(work, 'gyp-cache-')),
    npm_config_dist_url: 'http://127.0.0.1:2/',
  };
  delete env.npm_config_nodedir;
  if (nodedir) env.npm_config_nodedir = nodedir;
  try {
    const { stdout, stderr } = await exec(process.execPath, [nodeGyp, 'rebuild'], {
      cwd: join(work, 'node_modules/@pokusew/pcsclite'),
      env,
      maxBuffer: 1 << 24,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
}

test('when the headers are not given, then the blocked download fails the build (the check can fail)', async () => {
  const built = await buildOffline(undefined);
  assert.notEqual(built.code, 0, built.output);
  assert.match(built.output, /ECONNREFUSED 127\.0\.0\.1:2/);
});

test('when setup finds this Node’s installed headers, then the PC/SC binding builds with header downloads blocked', async () => {
  const { stdout } = await exec('bash', [join(root, 'scripts/node-headers.sh')]);
  const nodedir = stdout.trim();
  assert.ok(existsSync(join(nodedir, 'include/node/node_version.h')), nodedir);
  const built = await buildOffline(nodedir);
  assert.equal(built.code, 0, built.output);
  assert.ok(
    existsSync(join(work, 'node_modules/@pokusew/pcsclite/build/Release/pcsclite.node')),
    built.output,
  );
});
