#!/usr/bin/env node
// Runs the test files of the given areas (default: all) with node's test runner, TypeScript
// through tsx. Node 20's --test takes no globs, so the files are listed here.
// Usage: node test/run-tests.js [unit|http|client|pcsc|cloud|renderer|browser|console|simulation|packaging ...] [--only PATTERN]
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const allAreas = [
  'unit',
  'http',
  'client',
  'pcsc',
  'cloud',
  'renderer',
  'browser',
  'console',
  'simulation',
  'packaging',
];
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
    '--import',
    './test/support/blocking-stdout.js',
    'test/run-files.js',
    ...files,
  ],
  { cwd: root, stdio: ['inherit', 'pipe', 'inherit'] },
);

// The closing line CI reads, `N passed, N failed`, from the spec reporter's own summary.
const summary = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
let pending = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^ℹ (pass|fail|cancelled|skipped) (\d+)$/.exec(line.trim());
    if (match) summary[match[1]] = Number(match[2]);
  }
});
// 'close', not 'exit': 'exit' can come before the last of the runner's output is read.
child.on('close', (code, signal) => {
  const failed = summary.fail + summary.cancelled;
  const skipped = summary.skipped ? `, ${summary.skipped} skipped` : '';
  process.stdout.write(`\n${summary.pass} passed, ${failed} failed${skipped}\n`);
  // A failed or cancelled test fails the run whatever the runner's own exit code says.
  process.exit(failed > 0 ? 1 : (code ?? (signal ? 1 : 0)));
});
