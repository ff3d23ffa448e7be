/**
 * The simulation as StrykerJS runs it against every mutant it reaches (stryker.config.mjs): a
 * fixed seed range, so every mutant meets the same runs, stopping at the first seed that fails
 * (a killed mutant costs the seeds up to it; a surviving one, the whole range). Not an area of
 * test/run-tests.js: CI runs the simulation's own, larger ranges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from '../simulation/run-seeds.ts';

const FROM = 1;
const COUNT = 300;

test(`when seeds ${FROM}..${FROM + COUNT - 1} of the simulation run, then every invariant holds`, async () => {
  for (let seed = FROM; seed < FROM + COUNT; seed += 1) {
    const lines: string[] = [];
    const failures = await runSeeds(seed, 1, { print: (line) => lines.push(line) });
    assert.equal(failures.length, 0, lines.join('\n'));
  }
});
