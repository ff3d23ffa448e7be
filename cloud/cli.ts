#!/usr/bin/env node
/**
 * card-wallet-cloud: the reference cloud ledger's server and admin commands (run-cli.ts).
 * This host is the only file of cloud/ that reads the environment, handles signals or exits.
 */
import { runCli } from './run-cli.ts';

function waitForStop(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      // A second signal while closing ends the process at once.
      process.once('SIGINT', () => process.exit(1));
      process.once('SIGTERM', () => process.exit(1));
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  waitForStop,
});
process.exit(code);
