// @ts-check
/**
 * Mutation testing of the card layer's money files against the unit tests alone (docs/testing.md,
 * "The card layer's money files the float changed"): `npx stryker run stryker.card.config.mjs`.
 *
 * The wallet codec (the Classic and DESFire card formats, the float reference, the card face) and
 * the card sessions that write them, with the money core's settings (stryker.config.mjs), against
 * the card layer's own unit test files only: the codec is reached through the virtual cards from
 * some forty more (the engine's), and a mutant those reach and do not kill would run them all,
 * most of an hour more on the shared 2-core machine. A mutant only another test file, the
 * simulation or the pcsc area would kill counts as a survivor here, so the score is never
 * flattered. Its own reports, incremental file and sandbox, so a run undoes no other config's.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'service/card/classic-wallet.ts',
    'service/card/wallet-format.ts',
    'service/card/wallet-card.ts',
    'service/card/float-reference.ts',
    'service/card/card-face.ts',
    'service/card/card-session.ts',
    'service/card/desfire/desfire-wallet-format.ts',
    'service/card/desfire/desfire-wallet-session.ts',
  ],
  tap: {
    ...base.tap,
    testFiles: [
      'test/unit/card-face.test.ts',
      'test/unit/classic-wallet.test.ts',
      'test/unit/float-reference.test.ts',
      'test/unit/wallet-format*.test.ts',
      'test/unit/wallet-use-cases.test.ts',
      'test/unit/virtual-card.test.ts',
      'test/unit/read-card.test.ts',
      'test/unit/card-session*.test.ts',
      'test/unit/desfire-*.test.ts',
      'test/unit/personalize-*.test.ts',
    ],
  },
  // The coverage run takes minutes when other runs share the machine.
  dryRunTimeoutMinutes: 20,
  htmlReporter: { fileName: 'reports/mutation-card/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-card/mutation.json' },
  incrementalFile: 'reports/stryker-card-incremental.json',
  tempDirName: '.stryker-tmp/card',
};
