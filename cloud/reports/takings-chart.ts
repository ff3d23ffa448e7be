import type { Queryable } from '../db/database.ts';
import { formatDecimal, parseStoredDecimal } from '../../common/decimal.ts';
import type { Shop } from '../shops/shops.ts';

/** One local day of a shop's takings. */
export interface TakingsDay {
  date: string;
  /** Euros taken (recharges and recharge compensations), decimal strings. */
  taken: string;
  /** Euros paid out (payouts and payout compensations). */
  paidOut: string;
  /** Euros refunded (cashiers' undos and operators' corrections). */
  refunded: string;
  /** Net cash: taken − paid out − refunded, as the day report counts it. */
  net: string;
  /** Posted movements that day. */
  movements: number;
}

export const CHART_DAYS = [30, 365] as const;
export type ChartDays = (typeof CHART_DAYS)[number];

/** Adds whole days to a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  return day.toISOString().slice(0, 10);
}

/**
 * The daily takings of the `days` local days that end with `lastDate`, oldest first, days
 * without a movement included: read from daily_takings, the posted movements already counted
 * per local day of the shop.
 */
export async function takingsByDay(
  db: Queryable,
  shop: Shop,
  lastDate: string,
  days: number,
): Promise<TakingsDay[]> {
  const firstDate = addDays(lastDate, 1 - days);
  const { rows } = await db.query<TakingsRow>(
    `SELECT day::text AS day,
            sum(euros) FILTER (WHERE kind = 'recharge') AS taken,
            sum(euros) FILTER (WHERE kind = 'discharge') AS paid_out,
            sum(euros) FILTER (WHERE kind IN ('refund', 'correction')) AS refunded,
            sum(movements) AS movements
     FROM daily_takings
     WHERE customer_id = $1 AND day BETWEEN $2::date AND $3::date
     GROUP BY day`,
    [shop.id, firstDate, lastDate],
  );
  return takingsSeries(firstDate, days, rows);
}

/** A local day's sums, as SQL gives them. */
export interface TakingsRow {
  day: string;
  taken: string | null;
  paid_out: string | null;
  /** Absent: a query that sums no refunds (counted as none). */
  refunded?: string | null;
  movements: number | string;
}

/** The `days` days from `firstDate` on, with the rows' sums, and zero on days without one. */
export function takingsSeries(
  firstDate: string,
  days: number,
  rows: readonly TakingsRow[],
): TakingsDay[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const series: TakingsDay[] = [];
  for (let i = 0; i < days; i += 1) {
    const date = addDays(firstDate, i);
    const row = byDay.get(date);
    const taken = euros(row?.taken);
    const paidOut = euros(row?.paid_out);
    const refunded = euros(row?.refunded);
    series.push({
      date,
      taken: formatDecimal(taken),
      paidOut: formatDecimal(paidOut),
      refunded: formatDecimal(refunded),
      net: formatDecimal(taken - paidOut - refunded),
      movements: Number(row?.movements ?? 0),
    });
  }
  return series;
}

/** A sum as SQL gives it (null: no row of that kind) in the decimal's units. */
function euros(sum: string | null | undefined): bigint {
  return sum ? parseStoredDecimal(sum) : 0n;
}

/** Takings summed over a run of days: `date` is its first day, `days` how many it holds. */
export interface TakingsPeriod extends TakingsDay {
  days: number;
}

/** The sum of a run of days, in decimal, as the day report counts it. */
export function takingsOver(days: readonly TakingsDay[]): TakingsPeriod {
  let taken = 0n;
  let paidOut = 0n;
  let refunded = 0n;
  let movements = 0;
  for (const day of days) {
    taken += parseStoredDecimal(day.taken);
    paidOut += parseStoredDecimal(day.paidOut);
    refunded += parseStoredDecimal(day.refunded);
    movements += day.movements;
  }
  return {
    date: days[0]?.date ?? '',
    days: days.length,
    taken: formatDecimal(taken),
    paidOut: formatDecimal(paidOut),
    refunded: formatDecimal(refunded),
    net: formatDecimal(taken - paidOut - refunded),
    movements,
  };
}

/**
 * The days summed per calendar week (Monday to Sunday), oldest first: a year of daily bars is
 * too dense to read, a year of weeks is not. The first and last weeks hold only the days of the
 * series they cover.
 */
export function takingsByWeek(series: readonly TakingsDay[]): TakingsPeriod[] {
  const weeks: TakingsDay[][] = [];
  for (const day of series) {
    const week = weeks[weeks.length - 1];
    if (week && new Date(`${day.date}T00:00:00Z`).getUTCDay() !== 1) week.push(day);
    else weeks.push([day]);
  }
  return weeks.map(takingsOver);
}
