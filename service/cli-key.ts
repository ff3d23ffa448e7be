// `card-wallet-worker key`: prints the API key the service uses, on request. The service
// prints a key it generates once, when it generates it; every other start names only where it
// is, so that the key is not in every terminal's scrollback and every captured log.
import { parseCommandLine } from './cli-args.ts';
import { serviceTarget } from './cli-call.ts';
import type { CliEnvironment } from './cli-options.ts';

export const KEY_USAGE = `Usage: card-wallet-worker key [--data-dir DIR]

Prints the API key the service accepts (X-Api-Key): env CARD_WALLET_API_KEY when set, else the
key kept in the data folder (generated on the first start). For a script:
  KEY=$(card-wallet-worker key)

Options:
  --data-dir DIR              the service's data folder (default: the user's data folder)
  -h, --help                  this text
`;

const FLAGS = { 'data-dir': { type: 'string' } } as const;

/** The key to print, or the usage (--help). A missing key is a ConfigError saying why. */
export function resolveKeyCommand(
  argv: string[],
  host: CliEnvironment,
): { key: string } | { help: string } {
  const { values } = parseCommandLine(argv, FLAGS, { name: 'card-wallet-worker key' });
  if (values.help) return { help: KEY_USAGE };
  return { key: serviceTarget(values, host).apiKey };
}
