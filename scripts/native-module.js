#!/usr/bin/env node
// Keeps nfc-pcsc's native binding (@pokusew/pcsclite) built for the runtime that is about to
// load it: `electron` before `npm run app` (Electron has its own Node ABI), `node` before the
// headless service and the tests. The binding is loaded in that runtime and rebuilt only when
// the load fails with an ABI mismatch (NODE_MODULE_VERSION); a build for one runtime does not
// load in the other. (`npm run dist` needs nothing: electron-builder rebuilds it, npmRebuild.)
// Usage: node scripts/native-module.js electron|node
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedElectron } from './electron-binary.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const binding = join(
  dirname(require.resolve('@pokusew/pcsclite/package.json')),
  'build',
  'Release',
  'pcsclite.node',
);
const runtime = process.argv[2];
if (runtime !== 'electron' && runtime !== 'node') {
  console.error('usage: node scripts/native-module.js electron|node');
  process.exit(2);
}
const electron = runtime === 'electron' ? installedElectron() : undefined;
if (runtime === 'electron' && !electron) {
  console.error(
    'native-module: Electron is not installed here; run `node node_modules/electron/install.js` first (needs internet).',
  );
  process.exit(1);
}

/** The load error in the target runtime, or '' when the binding loads. */
function loadError() {
  const program = `try { require(${JSON.stringify(binding)}) } catch (e) { process.stdout.write(String(e.message)) }`;
  const result = spawnSync(electron ?? process.execPath, ['-e', program], {
    encoding: 'utf8',
    // Electron's binary runs as plain Node with this (the development binary; the fuse is off
    // only in the installed app).
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  return result.stdout || (result.status === 0 ? '' : result.stderr || 'did not run');
}

const before = loadError();
if (!/NODE_MODULE_VERSION/.test(before)) {
  // Loads, or fails for another reason (no libpcsclite): rebuilding would not help; the app
  // shows a reader error then.
  if (before) console.error(`native-module: the PC/SC binding does not load: ${before}`);
  process.exit(0);
}
console.error(`native-module: rebuilding the PC/SC binding for ${runtime} (${before.trim()})`);
// A `nodedir` in the npm configuration (npm passes it on as npm_config_nodedir) makes node-gyp
// build against that Node's headers whatever target is asked for; Electron's build must use
// Electron's headers, which @electron/rebuild fetches.
const { npm_config_nodedir: _nodedir, ...electronEnv } = process.env;
const rebuild =
  runtime === 'electron'
    ? spawnSync(
        process.execPath,
        [require.resolve('electron-builder/cli.js'), 'install-app-deps'],
        { cwd: root, stdio: 'inherit', env: electronEnv },
      )
    : spawnSync('npm', ['rebuild', '@pokusew/pcsclite'], { cwd: root, stdio: 'inherit' });
const after = rebuild.status === 0 ? loadError() : 'the rebuild failed';
if (after) {
  console.error(`native-module: the PC/SC binding still does not load in ${runtime}: ${after}`);
  process.exit(1);
}
