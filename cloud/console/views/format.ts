import type { MovementKind } from '../../../common/ledger-contract.ts';

/** How the console writes money, counts and times for a person. */

/** Euros with two decimals at least and a thousands separator: "1,234.50", "0.125". */
export function euros(decimal: string): string {
  const negative = decimal.startsWith('-');
  const [integer = '0', fraction = '00'] = (negative ? decimal.slice(1) : decimal).split('.');
  const grouped = integer.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '−' : ''}€${grouped}.${fraction.padEnd(2, '0')}`;
}

export function count(value: number): string {
  return value.toLocaleString('en-GB');
}

/** A time in the shop's zone: "29 Mar 2026, 14:05". */
export function localTime(iso: string | null, timeZone: string): string {
  if (iso === null) return '—';
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(iso));
}

/** "Sunday 29 March 2026". */
export function longDate(date: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: 'UTC',
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
  }).format(new Date(`${date}T00:00:00Z`));
}

/** "5 min ago", "3 h ago", "2 days ago". */
export function ago(iso: string | null, now: Date): string {
  if (iso === null) return 'never';
  const minutes = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 60_000));
  if (minutes < 1) return 'just now';
  if (minutes < 90) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** A UUID's first block, for a till or movement without a name. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** A till as every page names it: its owner-given name, else "Till" and its id's first block. */
export function tillName(name: string | null, tillId: string): string {
  return name ?? `Till ${shortId(tillId)}`;
}

/** A movement's kind as an owner says it. */
export const KIND_TEXT: Record<MovementKind, string> = {
  recharge: 'recharge',
  discharge: 'payout',
  refund: 'refund',
  correction: 'correction',
  replacement: 'replacement',
  'block-clear': 'blocked card emptied',
};
