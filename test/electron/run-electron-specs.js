#!/usr/bin/env node
// `npm run test:electron`: the Playwright _electron specs (test/electron/*.spec.ts), wherever
// Electron's binary is installed (`node node_modules/electron/install.js` on a machine with
// internet). Where it is not, this says so and exits 0: these specs are not part of .ci/run.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { installedElectron } from '../../scripts/electron-binary.js';

const electron = installedElectron();
if (!electron) {
  console.log(
    'test:electron: skipped: the Electron binary is not installed here (run `node node_modules/electron/install.js` on a machine with internet).',
  );
  process.exit(0);
}
const build = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// The app loads the PC/SC binding in Electron: build it for Electron's ABI if it is not.
const binding = spawnSync(process.execPath, ['scripts/native-module.js', 'electron'], {
  stdio: 'inherit',
});
if (binding.status !== 0) process.exit(binding.status ?? 1);
const specs = readdirSync('test/electron')
  .filter((name) => name.endsWith('.spec.ts'))
  .map((name) => `test/electron/${name}`);
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    // One app at a time: each binds the default port and shows its window.
    '--test-concurrency=1',
    '--test-reporter=spec',
    ...specs,
  ],
  { stdio: 'inherit', env: { ...process.env, ELECTRON_BINARY: electron } },
);
process.exit(result.status ?? 1);
