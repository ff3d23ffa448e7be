/**
 * The simulation as StrykerJS runs it against every mutant it reaches (stryker.config.mjs): a
 * fixed seed range, so every mutant meets the same runs, small enough to run per mutant. One
 * test per seed, so a killed mutant's report names the seed that caught it; after the first
 * failing seed the rest are skipped (a killed mutant costs only the seeds up to it). Not an area
 * of test/run-tests.js: CI runs the simulation's own, larger ranges.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runSeeds } from '../simulation/run-seeds.ts';

const FROM = 1;
const COUNT = 100;

describe(`the simulation, seeds ${FROM}..${FROM + COUNT - 1}`, () => {
  let failed = false;
  for (let seed = FROM; seed < FROM + COUNT; seed += 1) {
    test(`when seed ${seed} runs, then every invariant holds`, async (t) => {
      if (failed) return t.skip('an earlier seed failed');
      const lines: string[] = [];
      const failures = await runSeeds(seed, 1, { print: (line) => lines.push(line) });
      failed = failures.length > 0;
      assert.equal(failures.length, 0, lines.join('\n'));
    });
  }
});
