/**
 * The shop simulation as StrykerJS runs it against every mutant it reaches (stryker.config.mjs):
 * a fixed seed range, so every mutant meets the same runs, small enough to run per mutant.
 * Not an area of test/run-tests.js: CI runs the simulation's own, larger ranges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from '../simulation/run-seeds.ts';

const FROM = 1;
const COUNT = 300;

test(`when seeds ${FROM}..${FROM + COUNT - 1} of the simulation run, then every invariant holds`, async () => {
  const lines: string[] = [];
  const failures = await runSeeds(FROM, COUNT, { print: (line) => lines.push(line) });
  assert.equal(failures.length, 0, lines.slice(0, 40).join('\n'));
});
