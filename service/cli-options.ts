import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
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
  -h, --help                  this text
  -v, --version               the version

Commands calling a running service:
  card-wallet-worker personalize     give the card on the reader its own keys
  card-wallet-worker simulator ...   drive the card simulator of a --simulator service
`;

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
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export type CliRequest =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'run'; config: Config; generatedKeyFile?: string };

export interface CliEnvironment {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  home: string;
  cwd: string;
}

/** Turns argv, the config file and the environment into a validated Config (or help/version). */
export function resolveCliRequest(argv: string[], host: CliEnvironment): CliRequest {
  let values: ReturnType<typeof parseArgs<{ options: typeof FLAGS }>>['values'];
  try {
    ({ values } = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n\n${USAGE}`);
  }
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

  let generatedKeyFile: string | undefined;
  if (merged.apiKey === undefined && typeof merged.dataDir === 'string') {
    const stored = loadOrCreateApiKey(merged.dataDir);
    merged.apiKey = stored.key;
    if (stored.created) generatedKeyFile = stored.file;
  }
  return { kind: 'run', config: parseConfig(merged), generatedKeyFile };
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

/**
 * On first start without a key, one is generated and kept (mode 0600) in the data folder, so
 * the service starts on embedded defaults and the key stays the same across restarts.
 */
function loadOrCreateApiKey(dataDir: string): { key: string; file: string; created: boolean } {
  const file = join(dataDir, 'api-key');
  try {
    return { key: readFileSync(file, 'utf8').trim(), file, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = `cww_${randomBytes(24).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return { key, file, created: true };
}
