import { cardRuleTotal, noTotals, type DayReport, type DayTotals } from './day-report.ts';

/**
 * The day report's figures as CSV (RFC 4180, CRLF line ends): one row per till that moved
 * anything that day, then the shop's total (`till` = `all tills`). Every column a spreadsheet
 * needs to redo the sums; euros as plain decimals with a dot. Columns added later (refunds,
 * corrections, bonuses, replacements, the float's, then the card rules' compensations) come
 * last, so a sheet that reads by position still works. On today's report the float recharges
 * not reported yet fill the three float columns (a till holding some that moved nothing else
 * gets a row of zeros); on other days they are empty. The compensations of refunds,
 * corrections, pickups and block-clears are counted by what they did (redone or undone); their
 * credits and euros are in their kinds' columns already.
 */
export const DAY_CSV_COLUMNS = [
  'date',
  'time_zone',
  'till',
  'till_id',
  'recharges',
  'recharge_credits',
  'recharge_euros',
  'payouts',
  'payout_credits',
  'payout_euros',
  'compensation_recharges',
  'compensation_recharge_credits',
  'compensation_recharge_euros',
  'compensation_payouts',
  'compensation_payout_credits',
  'compensation_payout_euros',
  'euros_taken',
  'euros_paid_out',
  'euros_refunded',
  'net_cash_expected',
  'pending',
  'voided',
  'refunds',
  'refund_credits',
  'refund_euros',
  'corrections',
  'correction_credits',
  'correction_euros',
  'bonus_given',
  'bonus_forfeited',
  'replacements',
  'replacement_credits',
  'block_clears',
  'float_not_reported',
  'float_not_reported_credits',
  'float_as_of',
  'card_rule_compensations_redone',
  'card_rule_compensations_undone',
] as const;

/**
 * A field as CSV: quoted when it holds a comma, quote or line break, and a text that a
 * spreadsheet would run as a formula (=, +, -, @, tab, CR first) is led by an apostrophe
 * (OWASP, "CSV injection"). Numbers are written by us and never start so unless negative.
 */
export function csvField(value: string | number | null, { text = true } = {}): string {
  let field = value === null ? '' : String(value);
  if (text && /^[=+\-@\t\r]/.test(field)) field = `'${field}`;
  return /[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

function figures(totals: DayTotals): (string | number)[] {
  const { recharges, payouts, compensations } = totals;
  return [
    recharges.count,
    recharges.credits,
    recharges.euros,
    payouts.count,
    payouts.credits,
    payouts.euros,
    compensations.recharges.count,
    compensations.recharges.credits,
    compensations.recharges.euros,
    compensations.payouts.count,
    compensations.payouts.credits,
    compensations.payouts.euros,
    totals.eurosTaken,
    totals.eurosPaidOut,
    totals.eurosRefunded,
    totals.netCashExpected,
    totals.pending,
    totals.voided,
    totals.refunds.count,
    totals.refunds.credits,
    totals.refunds.euros,
    totals.corrections.count,
    totals.corrections.credits,
    totals.corrections.euros,
    totals.bonusGiven,
    totals.bonusForfeited,
    totals.replacements.count,
    totals.replacements.credits,
    totals.blockClears,
  ];
}

export function dayReportCsv(report: DayReport): string {
  const float = report.floatRechargesNotReported;
  const floatOf = new Map(float?.tills.map((till) => [till.tillId, till]));
  const floatCells = (tillId: string | null, total: boolean): (string | number)[] => {
    if (float === null) return ['', '', ''];
    if (total) return [float.movements, float.credits, ''];
    const till = tillId === null ? undefined : floatOf.get(tillId);
    return till ? [till.movements, till.credits, till.asOf] : [0, 0, ''];
  };
  const row = (till: string, tillId: string | null, totals: DayTotals, total = false): string =>
    [
      csvField(report.date),
      csvField(report.shop.timeZone),
      csvField(till),
      csvField(tillId),
      ...[
        ...figures(totals),
        ...floatCells(tillId, total),
        cardRuleTotal(totals.compensations.redone),
        cardRuleTotal(totals.compensations.undone),
      ].map((value) => csvField(value, { text: false })),
    ].join(',');
  const listed = new Set(report.tills.map((till) => till.tillId));
  const tills = [
    ...report.tills,
    ...(float?.tills ?? [])
      .filter((till) => !listed.has(till.tillId))
      .map((till) => ({ tillId: till.tillId, tillName: till.tillName, totals: noTotals() })),
  ];
  const lines = [
    DAY_CSV_COLUMNS.join(','),
    ...tills.map((till) =>
      row(
        till.tillName ?? (till.tillId === null ? 'no till' : 'unnamed till'),
        till.tillId,
        till.totals,
      ),
    ),
    row('all tills', null, report.totals, true),
  ];
  return `${lines.join('\r\n')}\r\n`;
}

/** The file name a download gets: `day-report-SHOP-2026-03-29.csv`, letters and digits only. */
export function dayReportFileName(report: DayReport): string {
  const shop = report.shop.name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase()
    .slice(0, 40);
  return `day-report-${shop || 'shop'}-${report.date}.csv`;
}
