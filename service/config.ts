import { z } from 'zod';
import { blockedPortProblem } from './blocked-ports.ts';

/** Default port of the local service: fixed so a POS can be configured once. */
export const DEFAULT_PORT = 4178;
/**
 * Default port of the embedded ledger in standalone mode, which serves the back office at
 * /console: fixed so its address can be bookmarked (the tray links to it).
 */
export const DEFAULT_CONSOLE_PORT = 4179;

const hex12 = /^[0-9A-Fa-f]{12}$/;

/** A port browsers and fetch will call (not one of the Fetch standard's bad ports). */
const callablePort = (schema: z.ZodNumber) =>
  schema.superRefine((port, ctx) => {
    const problem = blockedPortProblem(port);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * An exact web origin such as `https://pos.example.com` or `http://127.0.0.1:8080`: scheme,
 * host, optional port; no path, no trailing slash, no wildcard. Browsers send exactly this in
 * `Origin`, and the allowlist compares strings, so only the canonical form is accepted.
 */
export function originProblem(value: string): string | undefined {
  if (value.includes('*')) return 'wildcards are not allowed; list each origin exactly';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a URL; write it as scheme://host[:port], e.g. https://pos.example.com';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'the scheme must be http or https';
  if (url.origin !== value) {
    return `not an exact origin (no path, query or trailing slash; lowercase host): did you mean ${url.origin}?`;
  }
  return undefined;
}

const origin = z.string().superRefine((value, ctx) => {
  const problem = originProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)}: ${problem}` });
});

/**
 * The API key integrators send in `X-Api-Key`. Printable ASCII without spaces, 16 to 256
 * characters: long enough that guessing is hopeless, short enough to paste.
 */
export const apiKeySchema = z
  .string()
  .min(16, 'must be at least 16 characters')
  .max(256, 'must be at most 256 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** Every setting of the service core, with its documented default. */
export const configSchema = z
  .object({
    /** TCP port on 127.0.0.1; 0 picks any free port. */
    port: callablePort(z.number().int().min(0).max(65535)).default(DEFAULT_PORT),
    /** The one key this till accepts; the ledger resolves it to the shop. */
    apiKey: apiKeySchema,
    /** Exact browser origins allowed to call the service. Callers without Origin always may. */
    allowedOrigins: z.array(origin).default([]),
    /** Substring of the PC/SC reader name; default: the first contactless reader. */
    reader: z.string().min(1).optional(),
    /** 6-byte MIFARE key of the wallet sector, hex. Default: the transport key. */
    cardKey: z
      .string()
      .regex(hex12, 'must be 12 hex digits (6 bytes)')
      .transform((key) => key.toUpperCase())
      .default('FFFFFFFFFFFF'),
    cardKeyType: z.enum(['A', 'B']).default('A'),
    /**
     * 16-byte master key of per-card keys (docs/card-security.md), hex. A secret: never
     * logged, never in an answer, and a bad value is reported without echoing it.
     */
    cardMasterKey: z
      .string()
      .regex(/^[0-9A-Fa-f]{32}$/, 'must be 32 hex digits (16 bytes)')
      .transform((key) => key.toUpperCase())
      .optional(),
    /**
     * Whether a card still on the transport key (the configured key) is personalized on its
     * first recharge, before anything is reserved. Default: on when a master key is set.
     */
    autoPersonalize: z.boolean().optional(),
    /**
     * Every recharge tells the ledger what the card held; a card holding more than its account
     * at the ledger (written by someone else) is flagged suspect there. On: such a recharge is
     * also refused (500 CardAccountExceeded, nothing reserved or written). Default off: a shop
     * that imported its cards' balances can turn it on.
     */
    refuseCardsAboveAccount: z.boolean().default(false),
    /** Sector holding the wallet; 16-39 exist only on 4K cards. Sector 0 is the maker's. */
    walletSector: z.number().int().min(1).max(39).default(1),
    /**
     * The AID of the DESFire wallet application, 6 hex digits, most significant first
     * (docs/card-format.md section 9.2). 000000 is the card itself.
     */
    desfireAid: z
      .string()
      .regex(/^[0-9A-Fa-f]{6}$/, 'must be 6 hex digits (3 bytes)')
      .refine((aid) => !/^0{6}$/.test(aid), 'must not be 000000 (the card itself)')
      .transform((aid) => aid.toUpperCase())
      .default('435701'),
    /** Base URL of the cloud ledger; absent: the embedded ledger (standalone mode). */
    cloudUrl: z
      .string()
      .url()
      .refine((value) => /^https?:/.test(value), 'must be an http or https URL')
      .optional(),
    /** Each ledger call attempt gives up after this long (a few attempts for safe calls). */
    ledgerTimeoutMs: z.number().int().min(100).max(60_000).default(5_000),
    /** Folder for the movement journal, the outbox and the embedded ledger. */
    dataDir: z.string().min(1),
    /**
     * A card that answers nothing this long (to an APDU, or while an operation waits behind
     * another) fails it with CardNotResponding; judged after what arrived was read.
     */
    cardTimeoutMs: z.number().int().min(100).max(60_000).default(3_000),
    /** Card operations allowed to wait behind the running one before CardBusy. */
    cardQueueLimit: z.number().int().min(0).max(100).default(8),
    /** How often the ledger's pending movements are compared with the journal (reconciliation). */
    reconcileEveryMs: z.number().int().min(1_000).max(3_600_000).default(60_000),
    /** How often this till tells the ledger its state (its heartbeat), besides on each change. */
    heartbeatEveryMs: z.number().int().min(1_000).max(3_600_000).default(60_000),
    /** How often this till polls the shop's card list (blocked cards, changes waiting). */
    cardListEveryMs: z.number().int().min(1_000).max(60_000).default(30_000),
    /**
     * Standalone mode: the loopback port of the embedded ledger and its back office
     * (http://127.0.0.1:PORT/console). 0 picks any free port; a port in use falls back to a
     * free one, said in the log.
     */
    consolePort: z.number().int().min(0).max(65535).default(DEFAULT_CONSOLE_PORT),
    /**
     * This till's identity at the ledger (a UUID, kept for good). Absent: the one in the data
     * folder (`till-id`), created on first start. The tray app keeps it in its settings too.
     */
    tillId: z
      .string()
      .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
      .optional(),
    /** A movement waiting for its card this long is shown as overdue, for an operator. */
    uncertainMovementBoundMs: z.number().int().min(60_000).max(31_536_000_000).default(86_400_000),
    /**
     * No longer used: a pending movement the journal does not know is never voided on a timer
     * (docs/integrators.md, "Reconciliation"). Still accepted, so that a configuration written
     * for an earlier version starts; the host warns about it.
     */
    unknownPendingGraceMs: z.number().int().min(1_000).max(86_400_000).optional(),
    /**
     * The built-in card simulator instead of PC/SC: for trying the service and building a POS
     * without a reader. Off unless asked for: with it on, no real reader is used.
     */
    simulator: z.boolean().default(false),
    /** How much the headless host logs: `debug` adds stack traces of unexpected errors. */
    logLevel: z.enum(['info', 'debug']).default('info'),
  })
  .strict();

/**
 * The settings an operator edits in the tray app's window: the service's own rules for each
 * field, so every value the window accepts also starts the service. The port is 1-65535 there:
 * a till's POS needs a fixed port, so "any free port" (0) is for tests and the CLI only. The
 * simulator, autoPersonalize and refuseCardsAboveAccount have no default there: the window always says on or off, and
 * anything else (a missing or hand-edited value) is refused rather than read as either.
 */
export const operatorSettingsSchema = configSchema
  .pick({
    apiKey: true,
    allowedOrigins: true,
    reader: true,
    cardKey: true,
    cardKeyType: true,
    cardMasterKey: true,
    walletSector: true,
    cloudUrl: true,
  })
  .extend({
    port: callablePort(z.number().int().min(1).max(65535)),
    simulator: z.boolean(),
    autoPersonalize: z.boolean(),
    refuseCardsAboveAccount: z.boolean(),
  });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Validates settings; the message names each bad setting. */
export function parseConfig(input: unknown): Config {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const setting = issue.path.length > 0 ? issue.path.join('.') : 'config';
    return `${setting}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
}
