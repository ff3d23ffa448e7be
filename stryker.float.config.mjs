// @ts-check
/**
 * Mutation testing of the till float's money files, file by file (docs/testing.md, "The till
 * float's money files"): `npx stryker run stryker.float.config.mjs --mutate service/wallet/float-sale.ts`.
 *
 * The money core's settings (stryker.config.mjs), with only the unit test files that reach the
 * float: the whole unit suite and the simulation's 100 seeds make the first (coverage) run alone
 * take most of an hour on a 2-core machine. A mutant only another test file would kill counts as
 * a survivor here, so the score is never flattered. Its own incremental file and reports, so a
 * run of one file does not undo the whole core's.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'service/wallet/float-*.ts',
    'service/wallet/till-floats.ts',
    'service/wallet/journal-entries.ts',
  ],
  tap: {
    ...base.tap,
    // The float's tests, and those of the journal's lines (journal-entries.ts: a float
    // recharge's among them), their fold and their compaction.
    testFiles: [
      'test/unit/float-*.test.ts',
      'test/unit/till-float*.test.ts',
      'test/unit/till-heartbeat.test.ts',
      'test/unit/journal-entries.test.ts',
      'test/unit/movement-journal*.test.ts',
    ],
  },
  htmlReporter: { fileName: 'reports/mutation-float/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-float/mutation.json' },
  incrementalFile: 'reports/stryker-float-incremental.json',
};
