// @ts-check
/**
 * Mutation testing of the money engine's files against the unit tests alone (docs/testing.md,
 * "The engine's files the float changed"): `npx stryker run stryker.engine.config.mjs --mutate
 * service/wallet/recharge-card.ts`.
 *
 * The money core's settings (stryker.config.mjs) without the simulation's 100 seeds: with them the
 * first (coverage) run alone takes most of an hour on a busy 2-core machine, with the unit tests
 * a few minutes. A mutant only the simulation would kill counts as a survivor here, so the score
 * is never flattered. Its own reports and incremental file, so a run does not undo the whole
 * core's.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'service/wallet/recharge-card.ts',
    'service/wallet/discharge-card.ts',
    'service/wallet/customer-info.ts',
    'service/wallet/read-card.ts',
    'service/wallet/movement-engine.ts',
    'service/wallet/movement-resolver.ts',
    'service/wallet/movement-journal.ts',
    'service/wallet/movement-requests.ts',
    'service/wallet/movement-book.ts',
    'service/wallet/movement-phases.ts',
    // Changed since the whole-folder score of 2026-11-24 (docs/testing.md, "The engine's other
    // files changed since 2026-11-24").
    'service/wallet/ledger-word.ts',
    'service/wallet/compensations.ts',
    'service/wallet/undo-recharge.ts',
    'service/wallet/movement-lookup.ts',
    'service/wallet/card-changes.ts',
    'service/wallet/block-clear.ts',
    'service/wallet/card-blocks.ts',
    'service/wallet/card-holds.ts',
    'service/wallet/card-request.ts',
    'service/wallet/settle-card.ts',
    'service/wallet/holder-label.ts',
    'service/wallet/journal-file-store.ts',
    'service/wallet/amount-quote.ts',
    'service/wallet/movement-reconciler.ts',
    'service/wallet/card-settlement.ts',
    'service/wallet/answer-store.ts',
    'service/wallet/write-evidence.ts',
  ],
  // main/pcsc-host.test.ts stalls in Stryker's sandbox (its utility-process child never answers
  // the stall test, and the first run times out); it reaches no money code.
  tap: {
    ...base.tap,
    testFiles: ['test/unit/**/!(code-shape|platform-updater|pcsc-host).test.ts'],
  },
  htmlReporter: { fileName: 'reports/mutation-engine/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-engine/mutation.json' },
  incrementalFile: 'reports/stryker-engine-incremental.json',
  tempDirName: '.stryker-tmp/engine',
};
