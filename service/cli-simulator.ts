// `card-wallet-worker simulator ...`: the card simulator's control API from a terminal. It calls
// the running service over HTTP like any integrator, with the key from --api-key, the
// environment or the data folder.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDataDir, type CliEnvironment } from './cli-options.ts';
import { ConfigError, DEFAULT_PORT } from './config.ts';

export const SIMULATOR_USAGE = `Usage: card-wallet-worker simulator COMMAND [options]

Drives the card simulator of a service started with --simulator.

Commands:
  status                      the card in the field and every card seen
  place [--credits N] [--uid HEX]
                              a new card in the field (blank, or holding N credits)
  take-away                   the card leaves the field
  put-back CARD_ID            a card seen before comes back, with its memory
  fault NAME [--delay-ms N]   arm a fault: tear-before-commit, tear-after-commit, wrong-key,
                              corrupt, slow, none

Options:
  --port N                    the service's port (default ${DEFAULT_PORT})
  --api-key KEY               the key (default: env CARD_WALLET_API_KEY, else the data folder's)
  --data-dir DIR              the service's data folder (for its key)
`;

const FLAGS = {
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'data-dir': { type: 'string' },
  credits: { type: 'string' },
  uid: { type: 'string' },
  'delay-ms': { type: 'string' },
} as const;

export interface SimulatorCall {
  method: 'GET' | 'POST';
  url: string;
  apiKey: string;
  body?: Record<string, unknown>;
}

/** Turns `simulator ...` arguments into the HTTP call to make. */
export function resolveSimulatorCall(argv: string[], host: CliEnvironment): SimulatorCall {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n\n${SIMULATOR_USAGE}`);
  }
  const { values, positionals } = parsed;
  const [command, argument] = positionals;
  const port = values.port ?? String(DEFAULT_PORT);
  if (!/^\d+$/.test(port)) throw new ConfigError('port: must be a whole number');
  const base = `http://127.0.0.1:${port}/simulator`;
  const apiKey =
    values['api-key'] ??
    host.env.CARD_WALLET_API_KEY ??
    readKey(values['data-dir'] ? resolve(host.cwd, values['data-dir']) : defaultDataDir(host));
  const number = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) throw new ConfigError(`${name}: must be a whole number`);
    return Number(value);
  };
  switch (command) {
    case 'status':
      return { method: 'GET', url: base, apiKey };
    case 'place': {
      const body: Record<string, unknown> = {};
      const credits = number('credits', values.credits);
      if (credits !== undefined) body.credits = credits;
      if (values.uid !== undefined) body.uid = values.uid;
      return { method: 'POST', url: `${base}/place`, apiKey, body };
    }
    case 'take-away':
      return { method: 'POST', url: `${base}/take-away`, apiKey };
    case 'put-back':
      if (!argument) throw new ConfigError(`put-back needs a card id\n\n${SIMULATOR_USAGE}`);
      return { method: 'POST', url: `${base}/put-back`, apiKey, body: { cardId: argument } };
    case 'fault': {
      if (!argument) throw new ConfigError(`fault needs a name\n\n${SIMULATOR_USAGE}`);
      const delayMs = number('delay-ms', values['delay-ms']);
      const body = { fault: argument, ...(delayMs === undefined ? {} : { delayMs }) };
      return { method: 'POST', url: `${base}/fault`, apiKey, body };
    }
    default:
      throw new ConfigError(
        `unknown simulator command ${command ?? '(none)'}\n\n${SIMULATOR_USAGE}`,
      );
  }
}

function readKey(dataDir: string): string {
  const file = join(dataDir, 'api-key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new ConfigError(
      `no API key: give --api-key, set CARD_WALLET_API_KEY, or start the service once (it keeps its key in ${file})`,
    );
  }
}

/** Makes the call; resolves with the HTTP status and the body as text. */
export async function callSimulator(
  call: SimulatorCall,
): Promise<{ status: number; text: string }> {
  const res = await fetch(call.url, {
    method: call.method,
    headers: {
      'X-Api-Key': call.apiKey,
      ...(call.body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: call.body ? JSON.stringify(call.body) : undefined,
  });
  return { status: res.status, text: await res.text() };
}
