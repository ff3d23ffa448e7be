#!/usr/bin/env node
// The last step of `npm run build`: the files package.json names as bins are made executable.
// tsc writes them 0644, and npx does not mark a project's own bins executable when it runs
// them from a checkout (README command 1, `npx card-wallet-worker`): without this, a fresh
// clone answered "sh: 1: card-wallet-worker: Permission denied". chmod is a no-op on Windows.
import { chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const file of Object.values(bin)) chmodSync(join(root, file), 0o755);
