// @ts-check
/**
 * Mutation testing of the money core (docs/testing.md, "Mutation testing"): `npm run mutate`.
 *
 * The tap runner, because the tests are plain node:test files run through tsx: it runs each test
 * file in its own `node` process with the TAP reporter, records which mutants each file reaches
 * (coverage per file), and runs a mutant only against the files that reach it, stopping at the
 * first failure. The command runner would run the whole suite for every mutant.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  mutate: [
    'service/wallet/**/*.ts',
    'service/card/wallet-format.ts',
    'service/card/classic-wallet.ts',
    'service/card/wallet-card.ts',
    'service/cloud/ledger-client.ts',
  ],
  testRunner: 'tap',
  tap: {
    // The unit tests and the simulation; the pcsc, http and cloud tests start servers and real
    // pcscd, too slow to run per mutant. Two unit files fail in Stryker's sandbox and reach no
    // mutated code, so they are left out: code-shape.test.ts counts the lines of service/wallet/'s
    // files, there the instrumented ones (all over 300 lines); main/platform-updater.test.ts
    // loads electron-updater in a child process from the sandbox's linked node_modules.
    testFiles: ['test/unit/**/!(code-shape|platform-updater).test.ts', 'test/mutation/*.test.ts'],
    nodeArgs: ['--test-reporter=tap', '-r', '{{hookFile}}', '--import', 'tsx', '{{testFile}}'],
    forceBail: true,
  },
  coverageAnalysis: 'perTest',
  // Mutants that do not compile are left out of the score (CompileError), as tsc would refuse them.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  // Stryker's sandbox would put `// @ts-nocheck` atop every file under a test/, src/ or lib/
  // folder, for runners that type-check (ts-jest). tsx never type-checks, and the header broke
  // test/unit/client-types.test.ts, which compares client/src/api.ts with its generator's output.
  disableTypeChecks: false,
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  ignorePatterns: ['dist', 'release', 'test-results', '/reports', 'bench'],
  concurrency: 2,
  // A busy machine: wait long enough before calling a slow run an infinite loop.
  timeoutMS: 30_000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  incrementalFile: 'reports/stryker-incremental.json',
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
