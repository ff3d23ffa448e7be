import type { Database, Queryable } from '../db/database.ts';
import { formatDecimal, parseStoredDecimal } from '../../common/decimal.ts';
import { ledgerErrors } from '../errors.ts';
import type { MovementKind, MovementState } from '../records.ts';
import { shopToday, type Shop } from '../shops/shops.ts';
import { tillNames } from '../tills/tills.ts';
import { floatNotReported, type FloatNotReported } from './float-not-reported.ts';

/**
 * The day report (a Z report): what a shop's tills took and paid out on one local day of the
 * shop, by when each movement happened at its till (`occurredAt`), in the shop's time zone, so
 * a day that changes to or from summer time has 23 or 25 hours. The totals are read from
 * `daily_takings`, which each post adds to (migration 10); check proves it equal to the
 * movements.
 *
 * Posted movements count. Compensations (a till setting the books right where a card and the
 * ledger disagreed) are shown apart and netted into what they compensate the way their kind
 * moves money: a recharge compensation is euros taken, a payout compensation euros paid out.
 * Refunds (a cashier's undo) and corrections (an operator's) are euros given back, each its
 * own line; replacements and block-clears move no cash and are counted apart. A compensation of
 * one of those four counts in its kind's line: one that redoes a movement the ledger voided
 * adds, one that undoes a movement the ledger posted takes it away (a refund undone is none);
 * the Compensations figures count them apart, by what they did. Bonus credits given by
 * recharges and forfeited by payouts have their own two figures.
 * Movements created that day and still pending, or voided, are listed apart and count nowhere.
 */
export interface Tally {
  count: number;
  credits: number;
  /** Euros, a decimal string ("12.50"). */
  euros: string;
  /** Of `credits`, bonus credits (given by a recharge, taken back or forfeited by the others). */
  bonusCredits: number;
}

/** How many compensations of a card rule's movements, per kind. */
export interface CardRuleCounts {
  refunds: number;
  corrections: number;
  replacements: number;
  blockClears: number;
}

export interface DayTotals {
  recharges: Tally;
  payouts: Tally;
  compensations: {
    recharges: Tally;
    payouts: Tally;
    /** Of a movement the ledger had voided and its card held: done after all (in its line). */
    redone: CardRuleCounts;
    /** Of a movement the ledger had posted and its card lacked: taken away (from its line). */
    undone: CardRuleCounts;
  };
  /** Cashiers' undos of recharges: credits taken back, euros given back. */
  refunds: Tally;
  /** Operators' corrections of recharges, applied at a till: as refunds. */
  corrections: Tally;
  /** Blocked cards' accounts picked up by their new cards (no cash moves). */
  replacements: Tally;
  /** Blocked cards found and emptied at a till (no credits nor cash move). */
  blockClears: number;
  /** recharges + recharge compensations. */
  eurosTaken: string;
  /** payouts + payout compensations. */
  eurosPaidOut: string;
  /** refunds + corrections. */
  eurosRefunded: string;
  /** eurosTaken - eurosPaidOut - eurosRefunded: what the day leaves in the cash drawer. */
  netCashExpected: string;
  /** Bonus credits recharges gave (recharge compensations' included). */
  bonusGiven: number;
  /** Bonus credits payouts took off cards without paying them out (compensations' included). */
  bonusForfeited: number;
  /** Movements created that day that are still pending, or were voided. */
  pending: number;
  voided: number;
}

export interface TillDay {
  /** null: movements made before tills were named. */
  tillId: string | null;
  tillName: string | null;
  totals: DayTotals;
}

export interface ListedMovement {
  id: string;
  tillId: string | null;
  tillName: string | null;
  kind: MovementKind;
  /** The movement this one sets right (a compensation), or null; absent from older ledgers. */
  compensates?: string | null;
  cardId: string;
  credits: number;
  amount: string;
  state: MovementState;
  createdAt: string;
  resolvedAt: string | null;
  evidence: string | null;
}

export interface DayReport {
  shop: { id: string; name: string; timeZone: string };
  /** The local date, YYYY-MM-DD. */
  date: string;
  /** The day's first instant and the next day's, ISO 8601 UTC. */
  from: string;
  to: string;
  /** 24, or 23 and 25 on the days summer time begins and ends. */
  hours: number;
  totals: DayTotals;
  /** Per till, named tills first; a till with nothing that day is not listed. */
  tills: TillDay[];
  pending: ListedMovement[];
  voided: ListedMovement[];
  /**
   * Float recharges sold at the tills and not reported to the ledger yet, as each till's last
   * heartbeat said (a snapshot as of its time): they count in no figure above until reported.
   * Only on the report of the shop's current local day; null on any other day.
   */
  floatRechargesNotReported: FloatNotReported | null;
}

/** A local date as the report takes it: YYYY-MM-DD, a real date, years 2000 to 2199. */
export function parseReportDate(text: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 2000 || year > 2199) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? text : undefined;
}

export const LISTED_LIMIT = 500;
/** daily_takings' till of movements made before tills were named. */
const NO_TILL = '00000000-0000-0000-0000-000000000000';

/** Posted compensations of a card rule's movements that day, counted by till, kind and undoes. */
export interface CardRuleCompensationRow {
  till_id: string | null;
  kind: MovementKind;
  undoes: boolean;
  count: number | string;
}

/** Posted movements of a day summed by till, kind and compensation. */
export interface SumRow {
  till_id: string | null;
  kind: MovementKind;
  compensation: boolean;
  count: number | string;
  credits: number | string;
  euros: string;
  bonus_credits: number | string;
}

interface ListedRow {
  id: string;
  till_id: string | null;
  kind: MovementKind;
  compensates: string | null;
  card_id: string;
  credits: number | string;
  amount: string;
  state: MovementState;
  created_at: Date | string;
  resolved_at: Date | string | null;
  evidence: string | null;
}

const iso = (value: Date | string): string =>
  (value instanceof Date ? value : new Date(value)).toISOString();

type Bucket = { count: number; credits: number; euros: bigint; bonusCredits: number };

function emptyTally(): Bucket {
  return { count: 0, credits: 0, euros: 0n, bonusCredits: 0 };
}

const BUCKETS = [
  'recharges',
  'payouts',
  'compRecharges',
  'compPayouts',
  'refunds',
  'corrections',
  'replacements',
  'blockClears',
] as const;

type Sums = Record<(typeof BUCKETS)[number], Bucket> & {
  pending: number;
  voided: number;
  redone: CardRuleCounts;
  undone: CardRuleCounts;
};

/** All kinds' compensations of a CardRuleCounts. */
export const cardRuleTotal = (counts: CardRuleCounts): number =>
  counts.refunds + counts.corrections + counts.replacements + counts.blockClears;

const noCardRuleCounts = (): CardRuleCounts => ({
  refunds: 0,
  corrections: 0,
  replacements: 0,
  blockClears: 0,
});

function emptySums(): Sums {
  const buckets = Object.fromEntries(BUCKETS.map((bucket) => [bucket, emptyTally()]));
  return {
    ...(buckets as Record<(typeof BUCKETS)[number], Bucket>),
    pending: 0,
    voided: 0,
    redone: noCardRuleCounts(),
    undone: noCardRuleCounts(),
  };
}

function tally(t: Bucket): Tally {
  return {
    count: t.count,
    credits: t.credits,
    euros: formatDecimal(t.euros),
    bonusCredits: t.bonusCredits,
  };
}

function totalsOf(sums: Sums): DayTotals {
  const taken = sums.recharges.euros + sums.compRecharges.euros;
  const paidOut = sums.payouts.euros + sums.compPayouts.euros;
  const refunded = sums.refunds.euros + sums.corrections.euros;
  return {
    recharges: tally(sums.recharges),
    payouts: tally(sums.payouts),
    compensations: {
      recharges: tally(sums.compRecharges),
      payouts: tally(sums.compPayouts),
      redone: { ...sums.redone },
      undone: { ...sums.undone },
    },
    refunds: tally(sums.refunds),
    corrections: tally(sums.corrections),
    replacements: tally(sums.replacements),
    blockClears: sums.blockClears.count,
    eurosTaken: formatDecimal(taken),
    eurosPaidOut: formatDecimal(paidOut),
    eurosRefunded: formatDecimal(refunded),
    netCashExpected: formatDecimal(taken - paidOut - refunded),
    bonusGiven: sums.recharges.bonusCredits + sums.compRecharges.bonusCredits,
    bonusForfeited: sums.payouts.bonusCredits + sums.compPayouts.bonusCredits,
    pending: sums.pending,
    voided: sums.voided,
  };
}

/** A till's figures on a day it moved nothing. */
export function noTotals(): DayTotals {
  return totalsOf(emptySums());
}

/** Which line of the report a kind of posted movement counts in. */
const BUCKET_OF: Record<MovementKind, { plain: keyof Sums; compensation: keyof Sums }> = {
  recharge: { plain: 'recharges', compensation: 'compRecharges' },
  discharge: { plain: 'payouts', compensation: 'compPayouts' },
  refund: { plain: 'refunds', compensation: 'refunds' },
  correction: { plain: 'corrections', compensation: 'corrections' },
  replacement: { plain: 'replacements', compensation: 'replacements' },
  'block-clear': { plain: 'blockClears', compensation: 'blockClears' },
};

/** The CardRuleCounts field of a card rule's kind. */
const COUNT_OF: Partial<Record<MovementKind, keyof CardRuleCounts>> = {
  refund: 'refunds',
  correction: 'corrections',
  replacement: 'replacements',
  'block-clear': 'blockClears',
};

function addCompensation(sums: Sums, row: CardRuleCompensationRow): void {
  const field = COUNT_OF[row.kind];
  if (field) sums[row.undoes ? 'undone' : 'redone'][field] += Number(row.count);
}

function add(sums: Sums, row: SumRow): void {
  const line = BUCKET_OF[row.kind];
  const bucket = sums[row.compensation ? line.compensation : line.plain] as Bucket;
  bucket.count += Number(row.count);
  bucket.credits += Number(row.credits);
  bucket.euros += parseStoredDecimal(row.euros);
  bucket.bonusCredits += Number(row.bonus_credits);
}

/** Movements created that day still pending, or voided, per till. */
export interface StateCountRow {
  till_id: string | null;
  state: 'pending' | 'voided';
  count: number | string;
}

/**
 * The day's figures, for the shop and per till, from its posted movements summed by till,
 * kind and compensation, its pending and voided ones counted by till, and its compensations of
 * card rules' movements counted by till, kind and what they did.
 */
export function dayFigures(
  sumRows: readonly SumRow[],
  countRows: readonly StateCountRow[],
  names: ReadonlyMap<string, string>,
  compensationRows: readonly CardRuleCompensationRow[] = [],
): Pick<DayReport, 'totals' | 'tills'> {
  const all = emptySums();
  const perTill = new Map<string | null, Sums>();
  const sumsOf = (tillId: string | null): Sums => {
    let sums = perTill.get(tillId);
    if (!sums) perTill.set(tillId, (sums = emptySums()));
    return sums;
  };
  for (const row of sumRows) {
    add(all, row);
    add(sumsOf(row.till_id), row);
  }
  for (const row of countRows) {
    all[row.state] += Number(row.count);
    sumsOf(row.till_id)[row.state] += Number(row.count);
  }
  for (const row of compensationRows) {
    addCompensation(all, row);
    addCompensation(sumsOf(row.till_id), row);
  }
  const tills = [...perTill.entries()]
    .map(([tillId, tillSums]) => ({
      tillId,
      tillName: tillId === null ? null : (names.get(tillId) ?? null),
      totals: totalsOf(tillSums),
    }))
    .sort(
      (a, b) =>
        Number(a.tillName === null) - Number(b.tillName === null) ||
        (a.tillName ?? '').localeCompare(b.tillName ?? '') ||
        Number(a.tillId === null) - Number(b.tillId === null) ||
        (a.tillId ?? '').localeCompare(b.tillId ?? ''),
    );
  return { totals: totalsOf(all), tills };
}

/** The day report of `shop` for its local `date` (YYYY-MM-DD), from one snapshot. */
export async function dayReport(db: Database, shop: Shop, date: string): Promise<DayReport> {
  if (parseReportDate(date) === undefined) {
    throw ledgerErrors.invalidInput(`date: ${JSON.stringify(date)} is not a date like 2026-03-29`);
  }
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return readDayReport(tx, shop, date);
  });
}

/** The day report read with `db` as it is (a transaction of the caller's). */
export async function readDayReport(db: Queryable, shop: Shop, date: string): Promise<DayReport> {
  const bounds = await db.query<{ day_start: Date | string; day_end: Date | string }>(
    `SELECT ledger_local_day_start($1, $2::date) AS day_start,
            ledger_local_day_start($1, $2::date + 1) AS day_end`,
    [shop.timeZone, date],
  );
  const { day_start: start, day_end: end } = bounds.rows[0] as {
    day_start: Date | string;
    day_end: Date | string;
  };
  // The day's posted movements, counted as they were posted (daily_takings): a handful of
  // rows, whatever the shop's size.
  const sums = await db.query<SumRow>(
    `SELECT nullif(till_id, '${NO_TILL}') AS till_id, kind, compensation, movements AS count,
            credits, euros, bonus_credits
     FROM daily_takings WHERE customer_id = $1 AND day = $2::date`,
    [shop.id, date],
  );
  const listed = await db.query<ListedRow>(
    `SELECT id, till_id, kind, compensates, card_id, credits, amount, state, created_at,
            resolved_at, evidence
     FROM movements
     WHERE customer_id = $1 AND state IN ('pending', 'voided') AND created_at >= $2 AND created_at < $3
     ORDER BY created_at, id
     LIMIT ${LISTED_LIMIT * 2}`,
    [shop.id, start, end],
  );
  const counts = await db.query<StateCountRow>(
    `SELECT till_id, state, count(*) AS count FROM movements
     WHERE customer_id = $1 AND state IN ('pending', 'voided') AND created_at >= $2 AND created_at < $3
     GROUP BY 1, 2`,
    [shop.id, start, end],
  );
  // daily_takings nets them into their kinds' lines: these few are counted apart, by what
  // they did (movements_customer_compensations keeps the read to the day's compensations).
  const compensations = await db.query<CardRuleCompensationRow>(
    `SELECT till_id, kind, undoes, count(*) AS count FROM movements
     WHERE customer_id = $1 AND compensates IS NOT NULL AND state = 'posted'
       AND kind IN ('refund', 'correction', 'replacement', 'block-clear')
       AND occurred_at >= $2 AND occurred_at < $3
     GROUP BY 1, 2, 3`,
    [shop.id, start, end],
  );
  const names = await tillNames(db, shop.id);
  const today = (await shopToday(db, shop)) === date;
  const figures = dayFigures(sums.rows, counts.rows, names, compensations.rows);
  const toListed = (row: ListedRow): ListedMovement => ({
    id: row.id,
    tillId: row.till_id,
    tillName: row.till_id === null ? null : (names.get(row.till_id) ?? null),
    kind: row.kind,
    compensates: row.compensates,
    cardId: row.card_id,
    credits: Number(row.credits),
    amount: formatDecimal(parseStoredDecimal(row.amount)),
    state: row.state,
    createdAt: iso(row.created_at),
    resolvedAt: row.resolved_at === null ? null : iso(row.resolved_at),
    evidence: row.evidence,
  });
  const pending = listed.rows.filter((row) => row.state === 'pending');
  const voided = listed.rows.filter((row) => row.state === 'voided');
  const from = iso(start);
  const to = iso(end);
  return {
    shop: { id: shop.id, name: shop.name, timeZone: shop.timeZone },
    date,
    from,
    to,
    hours: (Date.parse(to) - Date.parse(from)) / 3_600_000,
    ...figures,
    pending: pending.slice(0, LISTED_LIMIT).map(toListed),
    voided: voided.slice(0, LISTED_LIMIT).map(toListed),
    floatRechargesNotReported: today ? await floatNotReported(db, shop.id) : null,
  };
}
