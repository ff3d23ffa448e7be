import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './run-seeds.ts';

// The deterministic simulation in CI: SIMULATION_SEEDS seeds (default 10 000) from
// SIMULATION_FROM (default 1). More on demand: npm run simulate -- --seeds N.
const count = Number(process.env.SIMULATION_SEEDS ?? 10_000);
const from = Number(process.env.SIMULATION_FROM ?? 1);

test(`when ${count} seeds of interleaved requests, faults, crashes and key changes run, then every invariant holds`, async () => {
  const lines: string[] = [];
  const failures = await runSeeds(from, count, { print: (line) => lines.push(line) });
  assert.equal(failures.length, 0, lines.slice(0, 40).join('\n'));
});
