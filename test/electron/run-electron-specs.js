#!/usr/bin/env node
// `npm run test:electron`: the Playwright _electron specs, wherever Electron's binary is
// installed (`node node_modules/electron/install.js` on a machine with internet). Where it is
// not, this says so and exits 0: these specs are not part of .ci/run.
import { spawnSync } from 'node:child_process';
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
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/electron/tray-app.spec.ts'],
  { stdio: 'inherit', env: { ...process.env, ELECTRON_BINARY: electron } },
);
process.exit(result.status ?? 1);
