// One HTTP call from a `card-wallet-worker` subcommand to the running service, made like any
// integrator's, with the key from --api-key, the environment or the data folder.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultDataDir, type CliEnvironment } from './cli-options.ts';
import { ConfigError, DEFAULT_PORT } from './config.ts';

export interface ServiceCall {
  method: 'GET' | 'POST';
  url: string;
  apiKey: string;
  body?: Record<string, unknown>;
}

/** What a subcommand's arguments ask for: a call to make, or its usage (--help). */
export type ServiceCommand = ServiceCall | { help: string };

/** The options every subcommand that calls the service takes. */
export const SERVICE_FLAGS = {
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'data-dir': { type: 'string' },
} as const;

/** The service's base URL and the key to call it with, from the subcommand's options. */
export function serviceTarget(
  values: { port?: string; 'api-key'?: string; 'data-dir'?: string },
  host: CliEnvironment,
): { baseUrl: string; apiKey: string } {
  const port = values.port ?? String(DEFAULT_PORT);
  if (!/^\d+$/.test(port)) throw new ConfigError('port: must be a whole number');
  const apiKey =
    values['api-key'] ??
    host.env.CARD_WALLET_API_KEY ??
    readKey(values['data-dir'] ? resolve(host.cwd, values['data-dir']) : defaultDataDir(host));
  return { baseUrl: `http://127.0.0.1:${port}`, apiKey };
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
export async function callService(call: ServiceCall): Promise<{ status: number; text: string }> {
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
