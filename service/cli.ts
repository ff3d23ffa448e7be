#!/usr/bin/env node
// The headless host: runs the service core without Electron. It alone reads the environment,
// writes to the terminal and exits.
import { homedir } from 'node:os';
import { readFileSync } from 'node:fs';
import { resolveCliRequest, USAGE } from './cli-options.ts';
import { ConfigError } from './config.ts';
import { stderrLogger } from './logger.ts';
import type { WorkerService } from './worker-service.ts';

const EXIT_CONFIG = 2;

async function main(): Promise<void> {
  let request;
  try {
    request = resolveCliRequest(process.argv.slice(2), {
      env: process.env,
      platform: process.platform,
      home: homedir(),
      cwd: process.cwd(),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`card-wallet-worker: ${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (request.kind === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }

  const log = stderrLogger((line) => process.stderr.write(line));
  if (request.generatedKeyFile) {
    log.info(`generated an API key, kept in ${request.generatedKeyFile}: ${request.config.apiKey}`);
  }
  let service: WorkerService;
  try {
    // Loaded only now: a bad flag or --help answers without loading PC/SC and express.
    const { startWorkerService } = await import('./worker-service.ts');
    service = await startWorkerService({
      config: request.config,
      log,
      pcscdSocket:
        process.platform === 'win32' || process.platform === 'darwin'
          ? undefined
          : (process.env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm'),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRINUSE' ? `port ${request.config.port} is in use` : (error as Error).message;
    process.stderr.write(`card-wallet-worker: cannot start: ${reason}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log.info(`${signal}: stopping (the running card operation finishes first)`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error(`stopping failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (!request.config.cloudUrl) {
    const key = request.config.apiKey;
    process.stderr.write(
      [
        `standalone mode: the embedded ledger (${service.ledgerUrl}) holds the demo shop;`,
        `API key: ${key}`,
        'try:',
        `  curl -s ${service.url}/ping`,
        `  curl -s -H 'X-Api-Key: ${key}' ${service.url}/info`,
        `  curl -s -H 'X-Api-Key: ${key}' ${service.url}/readcard`,
        '',
      ].join('\n'),
    );
  }
  // Last: whoever waits for this line may act at once; everything above is already out.
  process.stdout.write(`listening on ${service.url}\n`);
}

function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  const fallback = new URL('../package.json', import.meta.url);
  for (const candidate of [url, fallback]) {
    try {
      return (JSON.parse(readFileSync(candidate, 'utf8')) as { version: string }).version;
    } catch {
      // Built (dist/service) and source (service/) sit at different depths.
    }
  }
  return 'unknown';
}

main().catch((error: unknown) => {
  process.stderr.write(`card-wallet-worker: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
