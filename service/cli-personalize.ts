// `card-wallet-worker personalize`: gives the card on the reader its own keys, through the
// running service's POST /cards/personalize (cli-call.ts), as the POS or the tray would.
import { parseCommandLine } from './cli-args.ts';
import { SERVICE_FLAGS, serviceTarget, type ServiceCommand } from './cli-call.ts';
import type { CliEnvironment } from './cli-options.ts';
import { DEFAULT_PORT } from './config.ts';

export const PERSONALIZE_USAGE = `Usage: card-wallet-worker personalize [options]

Personalizes the card on the reader of the running service: writes its own keys, derived from
the card master key the service is configured with (docs/card-security.md). Prints the answer
of POST /cards/personalize; a card personalized before answers alreadyPersonalized: true.

Options:
  --port N                    the service's port (default ${DEFAULT_PORT})
  --api-key KEY               the key (default: env CARD_WALLET_API_KEY, else the data folder's)
  --data-dir DIR              the service's data folder (for its key)
  -h, --help                  this text
`;

/** Turns `personalize ...` arguments into the HTTP call to make (or the usage, for --help). */
export function resolvePersonalizeCall(argv: string[], host: CliEnvironment): ServiceCommand {
  const { values } = parseCommandLine(argv, SERVICE_FLAGS, {
    name: 'card-wallet-worker personalize',
  });
  if (values.help) return { help: PERSONALIZE_USAGE };
  const { baseUrl, apiKey } = serviceTarget(values, host);
  return { method: 'POST', url: `${baseUrl}/cards/personalize`, apiKey };
}
