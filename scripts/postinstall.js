#!/usr/bin/env node
// After `npm install` / `npm ci` in this project: applies patches/ to the PC/SC binding and
// nfc-pcsc (patch-package) and rebuilds the binding from the patched source (patches/README.md).
// Not when npm runs this package's scripts for another reason: `npx card-wallet-worker` links
// the project into npx's cache and runs its postinstall there (npm_command `exec`), where the
// node_modules it would patch were patched when they were installed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const command = process.env.npm_command;
if (command !== undefined && command !== 'install' && command !== 'ci') process.exit(0);

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [program, args] of [
  ['npx', ['--no-install', 'patch-package']],
  ['npm', ['rebuild', '@pokusew/pcsclite']],
]) {
  const result = spawnSync(program, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
