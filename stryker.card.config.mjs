// @ts-check
/**
 * Mutation testing of the card layer's money files against the unit tests alone (docs/testing.md,
 * "The card layer's money files the float changed"): `npx stryker run stryker.card.config.mjs`.
 *
 * The wallet codec (the Classic and DESFire card formats, the float reference, the card face) and
 * the card session's Classic wallet writes, with the money core's settings (stryker.config.mjs)
 * without the simulation's 100 seeds, as stryker.engine.config.mjs does for the engine. Every unit
 * test file in test/unit/ runs (the card files are reached through the virtual cards from many of
 * them), but the tray app's (test/unit/main/): the two of those that reach the card layer run the
 * reader manager against a stalled PC/SC host for minutes, and with them the first (coverage)
 * run passed Stryker's 5 minutes on the shared machine. A mutant only they, the simulation or the
 * pcsc area would kill counts as a survivor here, so the score is never flattered. Its own reports, incremental file and sandbox, so a run does not undo the
 * whole core's nor meet another config's run.
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
  tap: { ...base.tap, testFiles: ['test/unit/!(code-shape).test.ts'] },
  // The coverage run of the unit files takes minutes when other runs share the machine.
  dryRunTimeoutMinutes: 20,
  htmlReporter: { fileName: 'reports/mutation-card/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-card/mutation.json' },
  incrementalFile: 'reports/stryker-card-incremental.json',
  tempDirName: '.stryker-tmp/card',
};
