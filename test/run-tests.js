#!/usr/bin/env node
// Runs the test files of the given areas (default: all) with node's test runner, TypeScript
// through tsx. Node 20's --test takes no globs, so the files are listed here.
// Usage: node test/run-tests.js [unit|http|pcsc|cloud|renderer|browser ...] [--only PATTERN]
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const allAreas = ['unit', 'http', 'pcsc', 'cloud', 'renderer', 'browser'];
const args = process.argv.slice(2);
const onlyIndex = args.indexOf('--only');
const only = onlyIndex >= 0 ? args.splice(onlyIndex, 2)[1] : undefined;
const areas = args.length > 0 ? args : allAreas;

function testFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = areas
  .flatMap((area) => testFiles(join(root, 'test', area)))
  .map((file) => relative(root, file))
  .filter((file) => !only || file.includes(only))
  .sort();
if (files.length === 0) {
  console.error(`no test files in ${areas.join(', ')}`);
  process.exit(1);
}

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    // A hung test fails after 3 minutes with its name, instead of holding CI for its 90;
    // a file whose tests are done exits even if something it started still holds a handle.
    '--test-timeout=180000',
    '--test-force-exit',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/support/summary-reporter.js',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { cwd: root, stdio: 'inherit' },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
