#!/usr/bin/env node
// Builds the package into dist/, needing nothing but this folder's devDependencies (TypeScript
// and esbuild): from a clean checkout, `npm ci && npm pack` here makes the tarball, without the
// worker's own install or native build. `--out DIR` builds into DIR instead of dist/ (tests).
//   dist/index.js, *.d.ts          ES modules (Node's `import`, bundlers, browsers with a path)
//   dist/cjs/index.js, *.d.ts      CommonJS (Node's `require`), in a folder typed commonjs
//   dist/browser/card-wallet-worker-client.js   one ES module file for a page without a bundler
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(join(here, 'package.json'));
const out = process.argv.indexOf('--out');
const dist = out > 0 ? resolve(process.argv[out + 1] ?? '') : join(here, 'dist');
const esbuild = require('esbuild');

rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', dist], {
  cwd: here,
  stdio: 'inherit',
});

const bundle = (format, outfile) =>
  esbuild.buildSync({
    absWorkingDir: here,
    entryPoints: ['src/index.ts'],
    bundle: true,
    format,
    target: 'es2022',
    platform: 'neutral',
    sourcemap: true,
    logLevel: 'warning',
    outfile,
  });
bundle('cjs', join(dist, 'cjs', 'index.js'));
bundle('esm', join(dist, 'browser', 'card-wallet-worker-client.js'));

// The CommonJS build's types: the same declarations, read as CommonJS in that folder.
const cjs = join(dist, 'cjs');
writeFileSync(join(cjs, 'package.json'), '{ "type": "commonjs" }\n');
for (const file of readdirSync(dist)) {
  if (file.endsWith('.d.ts')) copyFileSync(join(dist, file), join(cjs, file));
}
