// `card-wallet-worker simulator ...`: the card simulator's control API from a terminal. It calls
// the running service over HTTP like any integrator (cli-call.ts).
import { parseArgs } from 'node:util';
import { SERVICE_FLAGS, serviceTarget, type ServiceCall } from './cli-call.ts';
import type { CliEnvironment } from './cli-options.ts';
import { ConfigError, DEFAULT_PORT } from './config.ts';

export const SIMULATOR_USAGE = `Usage: card-wallet-worker simulator COMMAND [options]

Drives the card simulator of a service started with --simulator.

Commands:
  status                      the card in the field and every card seen
  place [--credits N] [--uid HEX] [--type mifare-classic|desfire]
                              a new card in the field (blank, or holding N credits);
                              a MIFARE Classic 1K card unless --type desfire
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
  ...SERVICE_FLAGS,
  credits: { type: 'string' },
  uid: { type: 'string' },
  type: { type: 'string' },
  'delay-ms': { type: 'string' },
} as const;

export type SimulatorCall = ServiceCall;

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
  const { baseUrl, apiKey } = serviceTarget(values, host);
  const base = `${baseUrl}/simulator`;
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
      if (values.type !== undefined) body.type = values.type;
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
