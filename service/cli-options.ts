import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseCommandLine } from './cli-args.ts';
import { ConfigError, parseConfig, type Config } from './config.ts';

export const USAGE = `Usage: card-wallet-worker [options]

Runs the Card Wallet Worker service on http://127.0.0.1:PORT without the tray app.

Options (each also settable in the JSON file given with --config, by its camelCase name):
  --config FILE               JSON file with settings; flags override it
  --port N                    TCP port on 127.0.0.1 (0 = any free port; default 4178)
  --api-key KEY               the key integrators send in X-Api-Key (or env CARD_WALLET_API_KEY;
                              default: a key generated once and kept in the data folder)
  --allowed-origins LIST      comma-separated exact origins, e.g. https://pos.example.com
  --reader NAME               substring of the PC/SC reader name (default: the first contactless one)
  --card-key HEX12            6-byte key of the wallet sector (default FFFFFFFFFFFF)
  --card-key-type A|B         which key that is (default A)
  --card-master-key HEX32     16-byte master key of per-card keys (or env
                              CARD_WALLET_CARD_MASTER_KEY); see docs/card-security.md
  --wallet-sector N           sector holding the wallet (default 1)
  --desfire-aid HEX6          AID of the DESFire wallet application (default 435701)
  --refuse-cards-above-account  refuse recharging a card that holds more than its account at
                              the ledger (default: the ledger only flags it suspect)
  --cloud-url URL             the cloud ledger (default: the embedded ledger)
  --data-dir DIR              data folder (default: the user's data folder)
  --simulator                 a simulated reader with virtual cards instead of PC/SC (off by default)
  --log-level info|debug      debug adds stack traces to the log (default info)
  -h, --help                  this text
  -v, --version               the version

Commands calling a running service (each takes --help):
  card-wallet-worker personalize     give the card on the reader its own keys
  card-wallet-worker simulator ...   drive the card simulator of a --simulator service
Other commands:
  card-wallet-worker key             print the API key the service accepts (the data folder's)
`;

/** The subcommands, for "did you mean" when one is mistyped. */
export const SUBCOMMANDS = ['simulator', 'personalize', 'key'] as const;

const FLAGS = {
  config: { type: 'string' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'allowed-origins': { type: 'string' },
  reader: { type: 'string' },
  'card-key': { type: 'string' },
  'card-key-type': { type: 'string' },
  'card-master-key': { type: 'string' },
  'wallet-sector': { type: 'string' },
  'desfire-aid': { type: 'string' },
  'cloud-url': { type: 'string' },
  'data-dir': { type: 'string' },
  simulator: { type: 'boolean' },
  'refuse-cards-above-account': { type: 'boolean' },
  'log-level': { type: 'string' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** A key generated for a first start, written to the data folder only once the start can go on. */
export interface NewApiKey {
  file: string;
  key: string;
}

export type CliRequest =
  | { kind: 'help' }
  | { kind: 'version' }
  | {
      kind: 'run';
      config: Config;
      /** A key made up for a first start, to keep (storeApiKey) once the start can go on. */
      newApiKey?: NewApiKey;
      /** The data folder's key file, when the key is (or will be) the one kept there. */
      keyFile?: string;
    };

export interface CliEnvironment {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  home: string;
  cwd: string;
}

/**
 * Turns argv, the config file and the environment into a validated Config (or help/version).
 * It writes nothing: on a first start without a key, the key it makes up is `newApiKey`, for
 * the host to keep (storeApiKey) once it knows the service can start.
 */
export function resolveCliRequest(argv: string[], host: CliEnvironment): CliRequest {
  const { values } = parseCommandLine(argv, FLAGS, {
    name: 'card-wallet-worker',
    subcommands: SUBCOMMANDS,
  });
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };

  const fromFile = values.config ? readConfigFile(resolve(host.cwd, values.config)) : {};
  const fromFlags: Record<string, unknown> = {
    port: numberFlag('port', values.port),
    apiKey: values['api-key'],
    allowedOrigins: values['allowed-origins']?.split(',').map((origin) => origin.trim()),
    reader: values.reader,
    cardKey: values['card-key'],
    cardKeyType: values['card-key-type'],
    cardMasterKey: values['card-master-key'],
    walletSector: numberFlag('walletSector', values['wallet-sector']),
    desfireAid: values['desfire-aid'],
    cloudUrl: values['cloud-url'],
    dataDir: values['data-dir'] && resolve(host.cwd, values['data-dir']),
    simulator: values.simulator,
    refuseCardsAboveAccount: values['refuse-cards-above-account'],
    logLevel: values['log-level'],
  };
  const merged: Record<string, unknown> = { ...fromFile };
  if (host.env.CARD_WALLET_API_KEY) merged.apiKey = host.env.CARD_WALLET_API_KEY;
  if (host.env.CARD_WALLET_CARD_MASTER_KEY) {
    merged.cardMasterKey = host.env.CARD_WALLET_CARD_MASTER_KEY;
  }
  for (const [name, value] of Object.entries(fromFlags)) {
    if (value !== undefined) merged[name] = value;
  }
  merged.dataDir ??= defaultDataDir(host);

  let newApiKey: NewApiKey | undefined;
  let keyFile: string | undefined;
  if (merged.apiKey === undefined && typeof merged.dataDir === 'string') {
    keyFile = join(merged.dataDir, 'api-key');
    const stored = readApiKey(keyFile);
    if (stored === undefined)
      newApiKey = { file: keyFile, key: `cww_${randomBytes(24).toString('base64url')}` };
    merged.apiKey = stored ?? newApiKey?.key;
  }
  return { kind: 'run', config: parseConfig(merged), newApiKey, keyFile };
}

function numberFlag(setting: string, value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  // Leave non-numbers as strings so validation names the setting and says what it wants.
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`config: cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config: ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config: ${path} must hold a JSON object of settings`);
  }
  const settings = { ...(parsed as Record<string, unknown>) };
  // A data folder in the file is relative to the file, not to where the command runs.
  if (typeof settings.dataDir === 'string')
    settings.dataDir = resolve(dirname(path), settings.dataDir);
  if (typeof settings.allowedOrigins === 'string') {
    settings.allowedOrigins = settings.allowedOrigins.split(',').map((origin) => origin.trim());
  }
  return settings;
}

/** The per-user data folder of each platform. */
export function defaultDataDir({ env, platform, home }: CliEnvironment): string {
  if (platform === 'win32') {
    return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'card-wallet-worker');
  }
  if (platform === 'darwin')
    return join(home, 'Library', 'Application Support', 'card-wallet-worker');
  return join(env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'card-wallet-worker');
}

/** The key kept in the data folder by an earlier first start, if any. */
function readApiKey(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return undefined;
  }
}

/**
 * Keeps a first start's generated key (mode 0600) in the data folder, so the service starts on
 * embedded defaults and the key stays the same across restarts. Another process that got there
 * first wins: its key is the one to use. Returns the key in the file.
 */
export function storeApiKey({ file, key }: NewApiKey): { key: string; created: boolean } {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return { key, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: readFileSync(file, 'utf8').trim(), created: false };
  }
}
