/**
 * When a downloaded update installs by itself: never ('operator': only on "Restart to install"),
 * once the till has been idle for `idleMinutes`, or during the hour `hour` (local time, 0-23)
 * once no request came for a few minutes. Never while a card operation runs.
 */
export type InstallPolicy =
  { when: 'operator' } | { when: 'idle'; idleMinutes: number } | { when: 'hour'; hour: number };

/** What the till is doing, as the updater sees it. */
export interface TillActivity {
  /** A card operation (read, recharge, payout, personalization) holds the reader now. */
  busy(): boolean;
  /** Epoch ms of the last request the service answered, or of the service's start. */
  lastActivityAt(): number;
}

/**
 * What the service in use is doing: a card operation holding the reader, and when the POS last
 * asked something (requests reset it; so does a new service). For an update at the shop's
 * chosen time and for holding a shutdown while a card is written.
 */
export function tillActivity(now: () => number = Date.now) {
  let lastAt = now();
  let readers: { busy: boolean } | undefined;
  return {
    busy: (): boolean => readers?.busy ?? false,
    lastActivityAt: (): number => lastAt,
    /** Follows a service that started (its reader and its requests). */
    follow(service: {
      readers: { busy: boolean };
      activity: { on(event: 'request', listener: () => void): unknown };
    }): void {
      readers = service.readers;
      lastAt = now();
      service.activity.on('request', () => (lastAt = now()));
    },
  } satisfies TillActivity & { follow: unknown };
}

/** At the chosen hour, the quiet needed first: a POS's read and recharge of one sale. */
export const QUIET_BEFORE_HOUR_INSTALL_MS = 2 * 60_000;

/**
 * Whether an update that is ready may install now. `now` is the till's clock; its local hour
 * is the shop's hour (a shop's day is its local day).
 */
export function installDue(policy: InstallPolicy, activity: TillActivity, now: Date): boolean {
  if (policy.when === 'operator' || activity.busy()) return false;
  const quietFor = now.getTime() - activity.lastActivityAt();
  if (policy.when === 'idle') return quietFor >= policy.idleMinutes * 60_000;
  return now.getHours() === policy.hour && quietFor >= QUIET_BEFORE_HOUR_INSTALL_MS;
}

/** The policy in words, for the tray and the window ("installs …"). */
export function installWhenText(policy: InstallPolicy): string | null {
  if (policy.when === 'operator') return null;
  if (policy.when === 'idle')
    return `when the till has been idle for ${policy.idleMinutes} minute${policy.idleMinutes === 1 ? '' : 's'}`;
  return `at ${String(policy.hour).padStart(2, '0')}:00 when the till is idle`;
}
