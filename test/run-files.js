// Runs the given test files with node's test runner API; started by run-tests.js with
// `--import tsx` (TypeScript), which every test file's process inherits.
//
// Not `node --test --test-force-exit`: with that flag the runner process itself exits as soon
// as the last file's process has, before it has read all of that file's results, and those
// tests vanish from the report with exit code 0 (seen here: the last file's last 11 tests
// under load; https://github.com/nodejs/node/issues/64833). `run({ forceExit })` applies the
// flag to the files' processes only, and this process ends when every result is read.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

const files = process.argv.slice(2);
run({
  files,
  concurrency: 2,
  // A hung file fails after 20 minutes with its name, instead of holding CI for its 90 (the
  // longest takes about 2.5 minutes on a busy 2-core machine). Node 20's run() has no
  // per-test timeout: `--test-timeout` does not reach the files' processes from here.
  timeout: 20 * 60_000,
  // A file whose tests are done exits even if something it started still holds a handle.
  forceExit: true,
})
  .on('test:fail', () => (process.exitCode = 1))
  .compose(spec)
  .pipe(process.stdout);
