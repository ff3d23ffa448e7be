import {
  configSchema,
  DEFAULT_PORT,
  operatorSettingsSchema,
  originProblem,
  type ConfigInput,
} from '../service/config.ts';
import type { InstallPolicy } from './install-window.ts';

/** What the operator sets in the window; stored by main/ (the key encrypted). */
export interface Settings {
  apiKey: string;
  allowedOrigins: string[];
  port: number;
  /** Absent: standalone mode (the embedded ledger). */
  cloudUrl: string | null;
  reader: string | null;
  cardKey: string;
  cardKeyType: 'A' | 'B';
  /**
   * 32 hex digits: the master of per-card keys (docs/card-security.md). A secret, stored like
   * the API key and never sent to the window (it sees WindowSettings). Null: none, one key for
   * every card.
   */
  cardMasterKey: string | null;
  /** Personalize a card still on the transport key on its first recharge (with a master key). */
  autoPersonalize: boolean;
  /** Refuse recharging a card that holds more than its account at the ledger (else flagged). */
  refuseCardsAboveAccount: boolean;
  walletSector: number;
  startAtLogin: boolean;
  /** The built-in card simulator instead of PC/SC: virtual cards, no real reader. Off by default. */
  simulator: boolean;
  /**
   * Where updates are published (an electron-builder generic feed: latest.yml and the
   * installers); null: the app never looks for updates.
   */
  updateFeedUrl: string | null;
  /**
   * When a downloaded update installs by itself: 'operator' (only on "Restart to install"),
   * 'idle' (once the till has been idle for `updateIdleMinutes`) or 'hour' (during the hour
   * `updateInstallHour`, local time, once idle). Never while a card operation runs.
   */
  updateInstall: 'operator' | 'idle' | 'hour';
  /** For 'idle': minutes without a request or card operation, 5 to 1440. */
  updateIdleMinutes: number;
  /** For 'hour': the hour of the day, 0 to 23 (the till's local time). */
  updateInstallHour: number;
  /**
   * This till's identity at the ledger (a UUID; docs/integrators.md, "Several tills"): set by
   * the operator or an installer, or learned from the service, which creates one in its data
   * folder on its first start. Kept here too, so that a lost data folder does not lose it.
   * Null only until the service first started. Never cleared by a save (see SettingsEdit).
   */
  tillId: string | null;
}

/** The settings as the window is shown them: of the card master key, only whether it is set. */
export type WindowSettings = Omit<Settings, 'cardMasterKey'> & { cardMasterKeySet: boolean };

/**
 * The settings as the window saves them: `cardMasterKey` absent keeps the stored one, null
 * clears it, a string replaces it (the window never holds the stored key to send it back).
 * `tillId` absent or null keeps this till's id (an id is replaced, never cleared).
 */
export type SettingsEdit = Omit<Settings, 'cardMasterKey' | 'tillId'> & {
  cardMasterKey?: string | null;
  tillId?: string | null;
};

export const SETTINGS_VERSION = 1;

export const DEFAULT_SETTINGS: Omit<Settings, 'apiKey'> = {
  allowedOrigins: [],
  port: DEFAULT_PORT,
  cloudUrl: null,
  reader: null,
  cardKey: 'FFFFFFFFFFFF',
  cardKeyType: 'A',
  cardMasterKey: null,
  // docs/card-security.md: on by default with a master key (it does nothing without one).
  autoPersonalize: true,
  // Off by default: a shop turns it on once its cards' balances are imported at the ledger.
  refuseCardsAboveAccount: false,
  walletSector: 1,
  startAtLogin: false,
  // Never on by accident: settings stored before it existed load with it off.
  simulator: false,
  // Off until a feed is set (docs/operators.md, "Updates").
  updateFeedUrl: null,
  updateInstall: 'operator',
  updateIdleMinutes: 30,
  updateInstallHour: 3,
  // The service's, learned at its first start (or the one an installer wrote).
  tillId: null,
};

/** A problem with one field, said so the operator can fix it. */
export interface SettingsProblem {
  field: keyof Settings;
  message: string;
}

/** What each field must be, said so a shop operator can fix it. */
const MESSAGES: Partial<Record<keyof Settings, string>> = {
  port: 'The port must be a whole number from 1 to 65535.',
  cloudUrl:
    'The ledger URL must be a full http:// or https:// address, e.g. https://ledger.example.com (no spaces, a port up to 65535).',
  cardKey: 'The card key must be 12 hex digits (6 bytes).',
  cardKeyType: 'The key type must be A or B.',
  // Never the value: the master key is a secret.
  cardMasterKey:
    'The card master key must be 32 hex digits (16 bytes), e.g. from "openssl rand -hex 16"; leave it empty to keep the one set.',
  autoPersonalize: 'Personalizing cards on their first recharge must be on or off.',
  refuseCardsAboveAccount: 'Refusing cards above their account must be on or off.',
  walletSector: 'The wallet sector must be from 1 to 39 (1 to 15 on 1K cards).',
  reader: 'The reader name must not be empty (leave it unset for the first contactless reader).',
  simulator: 'The card simulator setting must be on or off.',
  updateFeedUrl:
    'The update feed must be a full https:// (or http://) address, e.g. https://updates.example.com/card-wallet-worker/; leave it empty for no updates.',
  updateInstall: 'When updates install must be on request, when idle, or at a set hour.',
  updateIdleMinutes: 'The idle time before an update installs must be from 5 to 1440 minutes.',
  updateInstallHour: 'The hour updates install at must be a whole hour from 0 to 23.',
  tillId:
    'The till id must be a UUID (8-4-4-4-12 hex digits), as support or your provider gave it; leave it as it is otherwise.',
};

/**
 * Checks every field against the service's own schema; an empty list means the settings can be
 * saved and the service will start with them. Nothing partial is saved.
 */
export function settingsProblems(settings: Settings): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  const shape = operatorSettingsSchema.shape;
  const key = shape.apiKey.safeParse(settings.apiKey);
  if (!key.success)
    problems.push({ field: 'apiKey', message: `The API key ${key.error.issues[0]?.message}.` });
  const origins = Array.isArray(settings.allowedOrigins) ? settings.allowedOrigins : [null];
  for (const origin of origins) {
    const problem = typeof origin === 'string' ? originProblem(origin) : 'not text';
    if (problem) problems.push({ field: 'allowedOrigins', message: `${origin}: ${problem}.` });
  }
  const fields = [
    'port',
    'cloudUrl',
    'reader',
    'cardKey',
    'cardKeyType',
    'cardMasterKey',
    'autoPersonalize',
    'refuseCardsAboveAccount',
    'walletSector',
    'simulator',
  ] as const;
  for (const field of fields) {
    const value = settings[field] === null ? undefined : settings[field];
    if (!shape[field].safeParse(value).success)
      problems.push({ field, message: MESSAGES[field] ?? `${field} is not valid.` });
  }
  if (settings.updateFeedUrl !== null && !isFeedUrl(settings.updateFeedUrl))
    problems.push({ field: 'updateFeedUrl', message: MESSAGES.updateFeedUrl as string });
  if (!['operator', 'idle', 'hour'].includes(settings.updateInstall))
    problems.push({ field: 'updateInstall', message: MESSAGES.updateInstall as string });
  if (!wholeIn(settings.updateIdleMinutes, 5, 1440))
    problems.push({ field: 'updateIdleMinutes', message: MESSAGES.updateIdleMinutes as string });
  if (!wholeIn(settings.updateInstallHour, 0, 23))
    problems.push({ field: 'updateInstallHour', message: MESSAGES.updateInstallHour as string });
  if (settings.tillId !== null && !isTillId(settings.tillId))
    problems.push({ field: 'tillId', message: MESSAGES.tillId as string });
  return problems;
}

function wholeIn(value: unknown, min: number, max: number): boolean {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** When a ready update installs by itself, from the settings (main/install-window.ts). */
export function installPolicy(settings: Settings): InstallPolicy {
  if (settings.updateInstall === 'idle')
    return { when: 'idle', idleMinutes: settings.updateIdleMinutes };
  if (settings.updateInstall === 'hour') return { when: 'hour', hour: settings.updateInstallHour };
  return { when: 'operator' };
}

/** A till id as the service takes it (its own schema). */
export function isTillId(value: unknown): value is string {
  return typeof value === 'string' && configSchema.shape.tillId.safeParse(value).success;
}

/** An http(s) URL without credentials (they would be logged and shown). */
function isFeedUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.username === '' &&
      url.password === '' &&
      !/\s/.test(value)
    );
  } catch {
    return false;
  }
}

/** The service core's configuration from the window's settings (validated by parseConfig). */
export function serviceConfig(settings: Settings, dataDir: string): ConfigInput {
  return {
    port: settings.port,
    apiKey: settings.apiKey,
    allowedOrigins: settings.allowedOrigins,
    reader: settings.reader ?? undefined,
    cardKey: settings.cardKey,
    cardKeyType: settings.cardKeyType,
    cardMasterKey: settings.cardMasterKey ?? undefined,
    autoPersonalize: settings.autoPersonalize,
    refuseCardsAboveAccount: settings.refuseCardsAboveAccount,
    walletSector: settings.walletSector,
    cloudUrl: settings.cloudUrl ?? undefined,
    simulator: settings.simulator,
    tillId: settings.tillId ?? undefined,
    dataDir,
  };
}

/** What the window is shown: the settings without the card master key. */
export function windowSettings(settings: Settings): WindowSettings {
  const { cardMasterKey, ...shown } = settings;
  return { ...shown, cardMasterKeySet: cardMasterKey !== null };
}

/** The settings a save from the window asks for: its edit over the current master key. */
export function editedSettings(current: Settings, edit: SettingsEdit): Settings {
  const { cardMasterKey, tillId, ...rest } = edit;
  return {
    ...rest,
    cardMasterKey: cardMasterKey === undefined ? current.cardMasterKey : cardMasterKey,
    tillId: normalTillId(tillId ?? current.tillId),
  };
}

/** Till ids in one case (the service writes them lower-case), so that a comparison holds. */
export function normalTillId(tillId: string | null): string | null {
  // Anything may come over IPC: what is not text is left for settingsProblems to refuse.
  return typeof tillId === 'string' ? tillId.trim().toLowerCase() : tillId;
}

/**
 * Settings the running service takes at once, or that are not the service's (the login item,
 * the update feed); any other change restarts the service core.
 */
const LIVE: readonly (keyof Settings)[] = [
  'apiKey',
  'allowedOrigins',
  'port',
  'startAtLogin',
  'updateFeedUrl',
  'updateInstall',
  'updateIdleMinutes',
  'updateInstallHour',
];

export function needsRestart(before: Settings, after: Settings): boolean {
  return (Object.keys(after) as (keyof Settings)[]).some(
    (field) =>
      !LIVE.includes(field) && JSON.stringify(before[field]) !== JSON.stringify(after[field]),
  );
}

/**
 * Brings stored settings to the current version. Unversioned data (written before settings had
 * a version) is version 0: it had `ledgerUrl` where version 1 has `cloudUrl`. Settings written
 * by a newer version of the app are refused rather than guessed at.
 */
export function migrateSettings(stored: Record<string, unknown>): Record<string, unknown> {
  const version = typeof stored.version === 'number' ? stored.version : 0;
  if (version > SETTINGS_VERSION) {
    throw new Error(`settings were written by a newer version (${version}); update the app`);
  }
  let current = { ...stored };
  if (version < 1) {
    const { ledgerUrl, ...rest } = current;
    current = {
      ...rest,
      cloudUrl: typeof ledgerUrl === 'string' && ledgerUrl !== '' ? ledgerUrl : null,
    };
  }
  return { ...DEFAULT_SETTINGS, ...current, version: SETTINGS_VERSION };
}
