#!/usr/bin/env node
// The headless host: runs the service core without Electron. It alone reads the environment,
// writes to the terminal and exits.
import { homedir } from 'node:os';
import { readFileSync } from 'node:fs';
import type { ServiceCall } from './cli-call.ts';
import { resolveCliRequest, USAGE } from './cli-options.ts';
import { ConfigError } from './config.ts';
import { openEarlierKeysFile } from './earlier-keys-file.ts';
import { stderrLogger } from './logger.ts';
import type { WorkerService } from './worker-service.ts';

const EXIT_CONFIG = 2;

async function main(): Promise<void> {
  if (process.argv[2] === 'simulator') return simulatorCommand(process.argv.slice(3));
  if (process.argv[2] === 'personalize') return personalizeCommand(process.argv.slice(3));
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

  // The tray app's log format (service/logger.ts), keys redacted: stderr may end up in a journal.
  const log = stderrLogger((line) => process.stderr.write(line), {
    secrets: () => [request.config.apiKey, request.config.cardMasterKey],
  });
  if (request.generatedKeyFile) {
    log.info(`generated an API key, kept in ${request.generatedKeyFile}`);
  }
  let service: WorkerService;
  try {
    // Loaded only now: a bad flag or --help answers without loading PC/SC and express.
    const { startWorkerService } = await import('./worker-service.ts');
    service = await startWorkerService({
      config: request.config,
      log,
      earlierKeys: openEarlierKeysFile(request.config.dataDir, request.config.apiKey),
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
  if (request.config.simulator)
    process.stderr.write(simulatorBanner(service.url, request.config.apiKey));
  // Last: whoever waits for this line may act at once; everything above is already out.
  process.stdout.write(`listening on ${service.url}\n`);
}

/** Says loudly that the cards are simulated, and how to place one. */
function simulatorBanner(url: string, key: string): string {
  const json = `-H 'X-Api-Key: ${key}' -H 'Content-Type: application/json'`;
  return [
    'CARD SIMULATOR ON: no real reader is used; every answer carries Card-Wallet-Simulator: 1',
    'place a simulated card holding 50 credits, then recharge it:',
    `  curl -s -X POST ${json} -d '{"credits": 50}' ${url}/simulator/place`,
    `  curl -s -X POST ${json} -d '{"credits": 10}' ${url}/writecard`,
    '  (or: card-wallet-worker simulator place --credits 50)',
    '',
  ].join('\n');
}

/** `card-wallet-worker simulator ...`: one call to the running service's control API. */
async function simulatorCommand(argv: string[]): Promise<void> {
  const { resolveSimulatorCall } = await import('./cli-simulator.ts');
  const answer = await serviceCommand('simulator', () => resolveSimulatorCall(argv, cliHost()));
  if (answer.status === 404 && answer.text.includes('"NotFound"')) {
    process.stderr.write('card-wallet-worker simulator: the service runs without --simulator\n');
  }
  if (answer.status >= 400) process.exit(1);
}

/** `card-wallet-worker personalize`: POST /cards/personalize on the running service. */
async function personalizeCommand(argv: string[]): Promise<void> {
  const { resolvePersonalizeCall } = await import('./cli-personalize.ts');
  const answer = await serviceCommand('personalize', () => resolvePersonalizeCall(argv, cliHost()));
  if (answer.status >= 400) process.exit(1);
}

function cliHost() {
  return { env: process.env, platform: process.platform, home: homedir(), cwd: process.cwd() };
}

/** Resolves a subcommand's call (exit 2 on bad options), makes it and prints the answer. */
async function serviceCommand(
  name: string,
  resolveCall: () => ServiceCall,
): Promise<{ status: number; text: string }> {
  let call: ServiceCall;
  try {
    call = resolveCall();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`card-wallet-worker ${name}: ${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  const { callService } = await import('./cli-call.ts');
  let answer;
  try {
    answer = await callService(call);
  } catch (error) {
    const reason =
      ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    process.stderr.write(`card-wallet-worker ${name}: cannot reach ${call.url}: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(`${answer.text}\n`);
  return answer;
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
