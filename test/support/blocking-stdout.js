// Loaded into every test file's process (run-tests.js passes it with --import): its results
// go to the runner over stdout, a pipe, which Node writes asynchronously on Linux; a forced
// exit could cut the last of them off (https://github.com/nodejs/node/issues/64833). Blocking
// writes reach the pipe before the process exits.
for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true);
