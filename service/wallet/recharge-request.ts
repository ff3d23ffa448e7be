import { formatDecimal, parseDecimal } from '../../common/decimal.ts';
import { didYouMean } from '../did-you-mean.ts';
import { errors } from '../errors.ts';

/** Documented bounds of one recharge (docs/integrators.md). */
export const RECHARGE_BOUNDS = {
  maxCredits: 100_000,
  /** Euros, at most two decimals. */
  maxAmount: '10000.00',
} as const;

export type RechargeRequest =
  | { credits: number; amount?: undefined }
  /** Euros as a canonical decimal string (exact), e.g. "12.50". */
  | { amount: string; credits?: undefined };

/** The bound as a number: comparing the double the caller sent with it is exact enough. */
const MAX_AMOUNT_EUROS = Number(RECHARGE_BOUNDS.maxAmount);
const FIELDS = ['credits', 'amount'];

/**
 * The body of POST /writecard: a JSON object with exactly one of `credits` (a positive whole
 * number) or `amount` (a positive number of euros with at most two decimals), within the
 * bounds, and no other field. A field that is null counts as absent. Anything else is 400
 * "Invalid credits or amount value" (the spec's code for every bad body here), with a detail
 * naming the field and the rule it breaks.
 */
export function parseRechargeRequest(body: unknown): RechargeRequest {
  const invalid = errors.invalidCreditsOrAmount;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid(
      body === undefined
        ? 'the body needs credits or amount, e.g. {"credits": 10}'
        : `the body must be a JSON object with credits or amount (got ${kindOf(body)})`,
    );
  }
  const unknown = Object.keys(body).find((field) => !FIELDS.includes(field));
  if (unknown !== undefined) {
    throw invalid(
      `${JSON.stringify(unknown)}: not a field of /writecard, which takes credits or amount` +
        didYouMean(unknown, FIELDS),
    );
  }
  const { credits, amount } = body as { credits?: unknown; amount?: unknown };
  const hasCredits = credits !== undefined && credits !== null;
  const hasAmount = amount !== undefined && amount !== null;
  if (hasCredits === hasAmount) {
    throw invalid(
      hasCredits
        ? 'send credits or amount, not both'
        : 'the body needs credits or amount, e.g. {"credits": 10}',
    );
  }
  if (hasCredits) {
    if (typeof credits !== 'number' || !Number.isInteger(credits)) {
      throw invalid(`credits: must be a whole number (got ${shown(credits)})`);
    }
    if (credits < 1 || credits > RECHARGE_BOUNDS.maxCredits) {
      throw invalid(`credits: must be 1 to ${RECHARGE_BOUNDS.maxCredits} (got ${credits})`);
    }
    return { credits };
  }
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    throw invalid(`amount: must be a number of euros (got ${shown(amount)})`);
  }
  if (amount <= 0 || amount > MAX_AMOUNT_EUROS) {
    throw invalid(`amount: must be 0.01 to ${RECHARGE_BOUNDS.maxAmount} euros (got ${amount})`);
  }
  // JSON numbers arrive as doubles; their shortest text form is what the caller wrote for any
  // amount with two decimals, so the decimal is read from that text, never computed in binary.
  const text = String(amount);
  const value = /^\d+(\.\d{1,2})?$/.test(text) ? parseDecimal(text, { maxDecimals: 2 }) : undefined;
  if (value === undefined) throw invalid(`amount: at most 2 decimals (got ${text})`);
  return { amount: formatDecimal(value) };
}

/** Whether an amount buys at least one credit at `creditCost` (both decimal strings). */
export function buysAtLeastOneCredit(amount: string, creditCost: string): boolean {
  const cost = parseDecimal(creditCost);
  const value = parseDecimal(amount);
  return cost !== undefined && value !== undefined && cost > 0n && value >= cost;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** A value as the caller sent it, shortened: for the detail of an error. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  const json = JSON.stringify(value) ?? String(value);
  return `${kindOf(value)} ${json.length > 40 ? `${json.slice(0, 40)}...` : json}`;
}
