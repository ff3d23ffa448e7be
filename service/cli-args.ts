// Argument parsing shared by `card-wallet-worker` and its subcommands: node's parseArgs, with
// errors that say what was meant and where the options are listed, and --help everywhere.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from './config.ts';
import { didYouMean } from './did-you-mean.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

interface Command {
  /** How the command is typed, for "(see card-wallet-worker simulator --help)". */
  name: string;
  allowPositionals?: boolean;
  /** Suggested for an unexpected argument (a mistyped subcommand). */
  subcommands?: readonly string[];
}

const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const;

/**
 * Parses `argv` against `options` (strict). An unknown option or argument is a ConfigError
 * naming it, with the nearest known one ("did you mean") and the command that lists them.
 */
export function parseCommandLine<T extends Options>(argv: string[], options: T, command: Command) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, ...HELP_FLAG },
      strict: true,
      allowPositionals: command.allowPositionals ?? false,
    });
  } catch (error) {
    throw new ConfigError(`${problemOf(error, options, command)} (see ${command.name} --help)`);
  }
}

function problemOf(error: unknown, options: Options, command: Command): string {
  const { code, message } = error as { code?: string; message: string };
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flags = Object.keys({ ...options, ...HELP_FLAG }).map((name) => `--${name}`);
    return `unknown option ${quoted}${didYouMean(quoted, flags)}`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return `unexpected argument ${quoted}${didYouMean(quoted, command.subcommands ?? [])}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // "Option '--port <value>' argument missing" / "...does not take an argument".
    return message.replace(/^Option '([^ ']+)[^']*'/, 'option $1');
  }
  return message;
}
