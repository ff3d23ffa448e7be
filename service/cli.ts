#!/usr/bin/env node
// The headless host: runs the service core without Electron. It alone reads the environment,
// writes to the terminal and exits.
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import type { ServiceCommand } from './cli-call.ts';
import { resolveCliRequest, storeApiKey, USAGE } from './cli-options.ts';
import { ConfigError, type Config } from './config.ts';
import { openEarlierKeysFile } from './earlier-keys-file.ts';
import { stderrLogger } from './logger.ts';
import { packageVersion } from './version.ts';
import type { WorkerService } from './worker-service.ts';

const EXIT_CONFIG = 2;
const NAME = 'card-wallet-worker';

async function main(): Promise<void> {
  if (process.argv[2] === 'simulator') return simulatorCommand(process.argv.slice(3));
  if (process.argv[2] === 'personalize') return personalizeCommand(process.argv.slice(3));
  if (process.argv[2] === 'key') return keyCommand(process.argv.slice(3));
  let request;
  try {
    request = resolveCliRequest(process.argv.slice(2), cliHost());
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${NAME}: ${error.message}\n`);
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

  // Before anything is created (a key, a ledger, a journal): a port in use is said at once.
  const { config } = request;
  const portProblem = await checkPortFree(config.port);
  if (portProblem) cannotStart(portProblem);

  // The tray app's log format (service/logger.ts), keys redacted: stderr may end up in a journal.
  const log = stderrLogger((line) => process.stderr.write(line), {
    debug: config.logLevel === 'debug',
    secrets: () => [config.apiKey, config.cardMasterKey],
  });
  // The key is printed once, when this start generates it; later starts say where it is.
  let keyShown: KeyShown = { given: request.keyFile === undefined, file: request.keyFile };
  if (request.newApiKey) {
    const stored = storeApiKey(request.newApiKey);
    config.apiKey = stored.key;
    if (stored.created) {
      log.info(`generated an API key, kept in ${request.newApiKey.file}`);
      keyShown = { generated: stored.key, file: request.newApiKey.file };
    }
  }
  // The provider's ledger is checked while the service starts; its one line comes before the
  // banner, so the operator reads at once whether money calls can work.
  const ledgerCheck = config.cloudUrl
    ? import('./cloud/ledger-check.ts').then(({ checkLedger }) =>
        checkLedger(config.cloudUrl as string, config.apiKey),
      )
    : undefined;
  let service: WorkerService;
  try {
    // Loaded only now: a bad flag or --help answers without loading PC/SC and express.
    const { startWorkerService } = await import('./worker-service.ts');
    service = await startWorkerService({
      config,
      log,
      earlierKeys: openEarlierKeysFile(config.dataDir, config.apiKey),
      pcscdSocket:
        process.platform === 'win32' || process.platform === 'darwin'
          ? undefined
          : (process.env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm'),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    cannotStart(code === 'EADDRINUSE' ? portInUse(config.port) : (error as Error).message);
  }
  let named: string | null = null;
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
  if (process.env.npm_command === 'exec') stopWithParent(() => stop('SIGTERM'));
  const checked = await ledgerCheck;
  if (checked?.ok) log.info(checked.line);
  else if (checked) log.warn(checked.line);
  process.stderr.write(banner(config, service));
  if (!config.cloudUrl) process.stderr.write(standaloneBanner(service.url, keyShown));
  // The setup link is made once the embedded ledger's database is open: said when it is.
  const sayConsole = (address: { url: string; setupUrl: string | null }) => {
    if (address.setupUrl) process.stderr.write(setupBanner(address.setupUrl));
  };
  sayConsole(service.console);
  service.on('console', sayConsole);
  service.on('till', (till) => {
    if (till.name !== null && till.name !== named)
      log.info(`this till is "${till.name}" in the back office`);
    named = till.name;
  });
  if (config.simulator) process.stderr.write(simulatorBanner(service.url, keyShown));
  // Last: whoever waits for this line may act at once; everything above is already out.
  process.stdout.write(`listening on ${service.url}\n`);
}

/** What this service is: its version and address, mode, ledger, reader and allowlist. */
function banner(config: Config, service: WorkerService): string {
  const origins = config.allowedOrigins;
  return [
    `${NAME} ${packageVersion()} on ${service.url}`,
    `  mode: ${config.cloudUrl ? "cloud (the provider's ledger)" : 'standalone (the embedded ledger, with a demo shop)'}`,
    `  ledger: ${service.ledgerUrl}`,
    `  back office: ${service.console.url || 'none'}`,
    `  reader: ${config.simulator ? 'the card simulator (no real reader)' : config.reader ? `PC/SC, the reader named like "${config.reader}"` : 'PC/SC, the first contactless reader'}`,
    origins.length > 0
      ? `  allowed origins: ${origins.join(', ')} (browser pages elsewhere are refused)`
      : '  allowed origins: none (browser pages are refused; add a POS page with --allowed-origins)',
    '',
  ].join('\n');
}

/**
 * Which key the banners may show: the one this start generated (printed once), or none (the
 * data folder's, or one given by flag, environment or config file).
 */
type KeyShown = { generated: string; file: string } | { given: boolean; file: string | undefined };

/** The key's line, and how the banners' curl lines name it. */
function keyLines(key: KeyShown): { lines: string[]; header: string } {
  if ('generated' in key) {
    return {
      lines: [
        `API key: ${key.generated} (generated now and kept in ${key.file}; \`${NAME} key\` prints it again)`,
      ],
      header: `'X-Api-Key: ${key.generated}'`,
    };
  }
  const where = key.given
    ? 'the API key given (--api-key, CARD_WALLET_API_KEY or --config)'
    : `the API key in ${key.file}`;
  return {
    lines: [`API key: ${where}; \`${NAME} key\` prints it`, `  KEY=$(${NAME} key)`],
    header: '"X-Api-Key: $KEY"',
  };
}

/** Standalone mode on embedded defaults: the key and calls to try at once. */
function standaloneBanner(url: string, key: KeyShown): string {
  const { lines, header } = keyLines(key);
  return [
    ...lines,
    'try:',
    `  curl -s ${url}/ping`,
    `  curl -s -H ${header} ${url}/info`,
    `  curl -s -H ${header} ${url}/readcard`,
    '',
  ].join('\n');
}

/** The one-time link that makes a standalone till's first back-office account. */
function setupBanner(setupUrl: string): string {
  return [
    "BACK OFFICE: make the shop owner's account (once, in a browser on this computer):",
    `  ${setupUrl}`,
    '',
  ].join('\n');
}

/** Says loudly that the cards are simulated, and how to place one. */
function simulatorBanner(url: string, key: KeyShown): string {
  const json = `-H ${keyLines(key).header} -H 'Content-Type: application/json'`;
  return [
    'CARD SIMULATOR ON: no real reader is used; every answer carries Card-Wallet-Simulator: 1',
    'place a simulated card holding 50 credits, then recharge it:',
    `  curl -s -X POST ${json} -d '{"credits": 50}' ${url}/simulator/place`,
    `  curl -s -X POST ${json} -d '{"credits": 10}' ${url}/writecard`,
    '  (or: card-wallet-worker simulator place --credits 50)',
    '',
  ].join('\n');
}

/**
 * Started through `npx card-wallet-worker`: npx does not pass a signal on to the worker, so a
 * harness that stops npx (`kill $!`) would leave the worker running and the port taken. The
 * worker stops as on SIGTERM once its parent is gone (it is handed to another parent then).
 */
function stopWithParent(stop: () => void): void {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.stderr.write(`${NAME}: npx (process ${parent}) has ended: stopping\n`);
    stop();
  }, 500);
  watch.unref();
}

/** Why the port cannot be listened on, or nothing (port 0 takes any free one). */
function checkPortFree(port: number): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? portInUse(port) : `port ${port}: ${error.message}`),
    );
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
      probe.close(() => resolve(undefined)),
    );
  });
}

function portInUse(port: number): string {
  return `port ${port} is in use (another ${NAME}, or the tray app?): stop it, or choose another port with --port N`;
}

function cannotStart(reason: string): never {
  process.stderr.write(`${NAME}: cannot start: ${reason}\n`);
  process.exit(1);
}

/** `card-wallet-worker simulator ...`: one call to the running service's control API. */
async function simulatorCommand(argv: string[]): Promise<void> {
  const { resolveSimulatorCall } = await import('./cli-simulator.ts');
  const answer = await serviceCommand('simulator', () => resolveSimulatorCall(argv, cliHost()));
  if (answer?.status === 404 && answer.text.includes('"NotFound"')) {
    process.stderr.write(`${NAME} simulator: the service runs without --simulator\n`);
  }
  if (answer && answer.status >= 400) process.exit(1);
}

/** `card-wallet-worker key`: prints the key the service accepts. */
async function keyCommand(argv: string[]): Promise<void> {
  const { resolveKeyCommand } = await import('./cli-key.ts');
  let answer;
  try {
    answer = resolveKeyCommand(argv, cliHost());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${NAME} key: ${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  process.stdout.write('help' in answer ? answer.help : `${answer.key}\n`);
}

/** `card-wallet-worker personalize`: POST /cards/personalize on the running service. */
async function personalizeCommand(argv: string[]): Promise<void> {
  const { resolvePersonalizeCall } = await import('./cli-personalize.ts');
  const answer = await serviceCommand('personalize', () => resolvePersonalizeCall(argv, cliHost()));
  if (answer && answer.status >= 400) process.exit(1);
}

function cliHost() {
  return { env: process.env, platform: process.platform, home: homedir(), cwd: process.cwd() };
}

/**
 * Resolves a subcommand's call (exit 2 on bad options), makes it and prints the answer; for
 * --help prints the usage and resolves with nothing.
 */
async function serviceCommand(
  name: string,
  resolveCall: () => ServiceCommand,
): Promise<{ status: number; text: string } | undefined> {
  let call: ServiceCommand;
  try {
    call = resolveCall();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${NAME} ${name}: ${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  if ('help' in call) {
    process.stdout.write(call.help);
    return undefined;
  }
  const { callService } = await import('./cli-call.ts');
  let answer;
  try {
    answer = await callService(call);
  } catch (error) {
    const reason =
      ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    process.stderr.write(`${NAME} ${name}: cannot reach ${call.url}: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(`${answer.text}\n`);
  return answer;
}

main().catch((error: unknown) => {
  process.stderr.write(`${NAME}: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
