import { ledgerErrors } from '../errors.ts';
import { parseReportDate } from '../reports/day-report.ts';

/**
 * `GET /v1/reports/day?date=YYYY-MM-DD&format=json|csv`: the date is the shop's local date
 * (default: today there); CSV when `format=csv`, or when Accept prefers text/csv.
 */
export function parseDayReportQuery(
  query: Record<string, unknown>,
  accept: string | undefined,
): { date?: string; csv: boolean } {
  for (const key of Object.keys(query)) {
    if (key !== 'date' && key !== 'format')
      throw ledgerErrors.invalidQuery(`${key}: unknown parameter`);
  }
  const { date, format } = query;
  if (date !== undefined && (typeof date !== 'string' || parseReportDate(date) === undefined)) {
    throw ledgerErrors.invalidQuery('date: must be a date like 2026-03-29 (years 2000 to 2199)');
  }
  if (format !== undefined && format !== 'json' && format !== 'csv') {
    throw ledgerErrors.invalidQuery('format: must be json or csv');
  }
  const csv = format === 'csv' || (format === undefined && prefersCsv(accept));
  return { date: date as string | undefined, csv };
}

function prefersCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  return types[0] === 'text/csv';
}
