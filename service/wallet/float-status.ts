import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { FloatFolds, TillFloat } from './float-entries.ts';

/**
 * What the tray and the POS are told of the till float (docs/operators.md, "When the internet
 * drops"; the `till` event of GET /events).
 */
export interface FloatStatus {
  /**
   * off: the shop gives its tills no float (or not learnt yet); opening: asking for one;
   * online: selling from it, reporting as it goes; offline: the ledger does not answer, sales
   * go on from the float within its bounds; stopped: offline past the offline limit, or the
   * float used up; held: the ledger holds a float of this till its journal lost, closed only
   * by an operator.
   */
  state: 'off' | 'opening' | 'online' | 'offline' | 'stopped' | 'held';
  /** Whether the ledger answers (offline tills without a float sell nothing). */
  online: boolean;
  floatId: string | null;
  /** The shop's float size. */
  size: number;
  /** What the float can still pay, by this till's count. */
  left: number;
  /** Recharges (and ones found on cards) the ledger has not been told of yet. */
  toReport: number;
  /** When the ledger last answered, while it does not (ISO 8601); null online. */
  offlineSince: string | null;
  /** When offline sales stop (the last answer plus the offline limit); null online. */
  offlineSalesStopAt: string | null;
  /** The tray's line, e.g. "offline since 10:42: 7 recharges to report, float 340 of 500 ...". */
  line: string;
}

export function floatStatus(input: {
  now: number;
  online: boolean;
  lastAnsweredAt: number | undefined;
  settings: FloatSettings | undefined;
  folds: Readonly<FloatFolds>;
  float: TillFloat | undefined;
  available: (float: TillFloat) => number;
  toReport: number;
}): FloatStatus {
  const { now, settings, float, toReport } = input;
  const size = settings?.size ?? 0;
  const left = float ? input.available(float) : 0;
  const base = { online: input.online, floatId: float?.floatId ?? null, size, left, toReport };
  const offline = !input.online;
  const since = input.lastAnsweredAt;
  const stopsAt =
    since === undefined || !settings ? undefined : since + settings.offlineLimitSeconds * 1000;
  const offlineFields = {
    offlineSince: offline && since !== undefined ? new Date(since).toISOString() : null,
    offlineSalesStopAt: offline && stopsAt !== undefined ? new Date(stopsAt).toISOString() : null,
  };
  const reports = `${toReport} recharge${toReport === 1 ? '' : 's'} to report`;
  const held = input.folds.lost;
  if (held) {
    return {
      state: 'held',
      ...base,
      ...offlineFields,
      line: `float ${held.floatId} awaits an operator's close (this till's journal does not know it): no float sales`,
    };
  }
  if (size === 0 && !float) {
    return {
      state: 'off',
      ...base,
      ...offlineFields,
      line: offline ? `offline${sinceText(since, now)}: no float, no sales` : 'no float',
    };
  }
  if (!float) {
    return {
      state: 'opening',
      ...base,
      ...offlineFields,
      line: offline
        ? `offline${sinceText(since, now)}: no float yet, no sales`
        : 'opening the float',
    };
  }
  const floatText = `float ${left} of ${size} credits left`;
  if (!offline)
    return { state: 'online', ...base, ...offlineFields, line: `online: ${reports}, ${floatText}` };
  const stopped = left === 0 || (stopsAt !== undefined && now >= stopsAt);
  const stopText =
    stopsAt === undefined
      ? ''
      : `, offline sales ${stopped ? 'stopped' : 'stop'} at ${clockText(stopsAt, now)}`;
  return {
    state: stopped ? 'stopped' : 'offline',
    ...base,
    ...offlineFields,
    line: `offline${sinceText(since, now)}: ${reports}, ${floatText}${stopText}`,
  };
}

function sinceText(since: number | undefined, now: number): string {
  return since === undefined ? '' : ` since ${clockText(since, now)}`;
}

/** A time of the till's local day: "10:42", "10:42 tomorrow", "10:42 yesterday" or a date. */
function clockText(at: number, now: number): string {
  const when = new Date(at);
  const time = `${String(when.getHours()).padStart(2, '0')}:${String(when.getMinutes()).padStart(2, '0')}`;
  const days = Math.round((dayStart(at) - dayStart(now)) / 86_400_000);
  if (days === 0) return time;
  if (days === 1) return `${time} tomorrow`;
  if (days === -1) return `${time} yesterday`;
  return `${time} on ${when.getFullYear()}-${String(when.getMonth() + 1).padStart(2, '0')}-${String(when.getDate()).padStart(2, '0')}`;
}

function dayStart(at: number): number {
  const day = new Date(at);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}
