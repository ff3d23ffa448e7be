import { apiKeySchema, DEFAULT_PORT, originProblem } from '../service/config.ts';

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
  walletSector: number;
  startAtLogin: boolean;
}

export const SETTINGS_VERSION = 1;

export const DEFAULT_SETTINGS: Omit<Settings, 'apiKey'> = {
  allowedOrigins: [],
  port: DEFAULT_PORT,
  cloudUrl: null,
  reader: null,
  cardKey: 'FFFFFFFFFFFF',
  cardKeyType: 'A',
  walletSector: 1,
  startAtLogin: false,
};

/** A problem with one field, said so the operator can fix it. */
export interface SettingsProblem {
  field: keyof Settings;
  message: string;
}

/** Checks every field; an empty list means the settings can be saved. Nothing partial is saved. */
export function settingsProblems(settings: Settings): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  const key = apiKeySchema.safeParse(settings.apiKey);
  if (!key.success)
    problems.push({ field: 'apiKey', message: `The API key ${key.error.issues[0]?.message}.` });
  for (const origin of settings.allowedOrigins) {
    const problem = originProblem(origin);
    if (problem) problems.push({ field: 'allowedOrigins', message: `${origin}: ${problem}.` });
  }
  if (!Number.isInteger(settings.port) || settings.port < 1 || settings.port > 65535) {
    problems.push({ field: 'port', message: 'The port must be a whole number from 1 to 65535.' });
  }
  if (settings.cloudUrl !== null && !/^https?:\/\/[^\s/]+/.test(settings.cloudUrl)) {
    problems.push({
      field: 'cloudUrl',
      message: 'The ledger URL must start with https:// (or http://).',
    });
  }
  if (!/^[0-9A-Fa-f]{12}$/.test(settings.cardKey)) {
    problems.push({ field: 'cardKey', message: 'The card key must be 12 hex digits (6 bytes).' });
  }
  if (settings.cardKeyType !== 'A' && settings.cardKeyType !== 'B') {
    problems.push({ field: 'cardKeyType', message: 'The key type must be A or B.' });
  }
  if (
    !Number.isInteger(settings.walletSector) ||
    settings.walletSector < 1 ||
    settings.walletSector > 39
  ) {
    problems.push({
      field: 'walletSector',
      message: 'The wallet sector must be from 1 to 39 (1 to 15 on 1K cards).',
    });
  }
  return problems;
}

/** Settings the running service takes at once; any other change restarts the service core. */
const LIVE: readonly (keyof Settings)[] = ['apiKey', 'allowedOrigins', 'port', 'startAtLogin'];

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
