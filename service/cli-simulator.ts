// `card-wallet-worker simulator ...`: the card simulator's control API from a terminal. It calls
// the running service over HTTP like any integrator (cli-call.ts).
import { SIMULATOR_FAULTS } from './card/simulator/card-simulator.ts';
import { parseCommandLine } from './cli-args.ts';
import { SERVICE_FLAGS, serviceTarget, type ServiceCommand } from './cli-call.ts';
import type { CliEnvironment } from './cli-options.ts';
import { ConfigError, DEFAULT_PORT } from './config.ts';
import { didYouMean } from './did-you-mean.ts';

export const SIMULATOR_USAGE = `Usage: card-wallet-worker simulator COMMAND [options]

Drives the card simulator of a service started with --simulator.

Commands:
  status                      the card in the field and every card seen
  place [--credits N] [--uid HEX] [--type mifare-classic|desfire]
                              a new card in the field (blank, or holding N credits);
                              a MIFARE Classic 1K card unless --type desfire
  take-away                   the card leaves the field
  put-back CARD_ID            a card seen before comes back, with its memory
  fault NAME [--delay-ms N]   arm a fault: ${SIMULATOR_FAULTS.join(', ')}

Options:
  --port N                    the service's port (default ${DEFAULT_PORT})
  --api-key KEY               the key (default: env CARD_WALLET_API_KEY, else the data folder's)
  --data-dir DIR              the service's data folder (for its key)
  -h, --help                  this text
`;

const COMMANDS = ['status', 'place', 'take-away', 'put-back', 'fault'] as const;

const FLAGS = {
  ...SERVICE_FLAGS,
  credits: { type: 'string' },
  uid: { type: 'string' },
  type: { type: 'string' },
  'delay-ms': { type: 'string' },
} as const;

/** Turns `simulator ...` arguments into the HTTP call to make (or the usage, for --help). */
export function resolveSimulatorCall(argv: string[], host: CliEnvironment): ServiceCommand {
  const { values, positionals } = parseCommandLine(argv, FLAGS, {
    name: 'card-wallet-worker simulator',
    allowPositionals: true,
  });
  if (values.help) return { help: SIMULATOR_USAGE };
  const [command, argument] = positionals;
  const number = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) throw new ConfigError(`${name}: must be a whole number`);
    return Number(value);
  };
  const base = () => {
    const { baseUrl, apiKey } = serviceTarget(values, host);
    return { url: `${baseUrl}/simulator`, apiKey };
  };
  switch (command) {
    case 'status': {
      const { url, apiKey } = base();
      return { method: 'GET', url, apiKey };
    }
    case 'place': {
      const body: Record<string, unknown> = {};
      const credits = number('credits', values.credits);
      if (credits !== undefined) body.credits = credits;
      if (values.uid !== undefined) body.uid = values.uid;
      if (values.type !== undefined) body.type = values.type;
      const { url, apiKey } = base();
      return { method: 'POST', url: `${url}/place`, apiKey, body };
    }
    case 'take-away': {
      const { url, apiKey } = base();
      return { method: 'POST', url: `${url}/take-away`, apiKey };
    }
    case 'put-back': {
      if (!argument) throw new ConfigError(`put-back needs a card id\n\n${SIMULATOR_USAGE}`);
      const { url, apiKey } = base();
      return { method: 'POST', url: `${url}/put-back`, apiKey, body: { cardId: argument } };
    }
    case 'fault': {
      if (!argument) throw new ConfigError(`fault needs a name: ${SIMULATOR_FAULTS.join(', ')}`);
      if (!(SIMULATOR_FAULTS as readonly string[]).includes(argument)) {
        throw new ConfigError(
          `unknown fault ${argument}${didYouMean(argument, SIMULATOR_FAULTS)} (the faults: ${SIMULATOR_FAULTS.join(', ')})`,
        );
      }
      const delayMs = number('delay-ms', values['delay-ms']);
      const body = { fault: argument, ...(delayMs === undefined ? {} : { delayMs }) };
      const { url, apiKey } = base();
      return { method: 'POST', url: `${url}/fault`, apiKey, body };
    }
    default:
      throw new ConfigError(
        command === undefined
          ? `a command is needed\n\n${SIMULATOR_USAGE}`
          : `unknown simulator command ${command}${didYouMean(command, COMMANDS)}\n\n${SIMULATOR_USAGE}`,
      );
  }
}
