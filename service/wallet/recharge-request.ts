import { formatDecimal, parseDecimal } from '../../common/decimal.ts';
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

const MAX_AMOUNT = parseDecimal(RECHARGE_BOUNDS.maxAmount) as bigint;

/**
 * The body of POST /writecard: exactly one of `credits` (a positive whole number) or `amount`
 * (a positive number of euros with at most two decimals), within the bounds. A field that is
 * null counts as absent. Anything else is 400 "Invalid credits or amount value".
 */
export function parseRechargeRequest(body: unknown): RechargeRequest {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  const { credits, amount } = fields as { credits?: unknown; amount?: unknown };
  const hasCredits = credits !== undefined && credits !== null;
  const hasAmount = amount !== undefined && amount !== null;
  if (hasCredits === hasAmount) {
    throw errors.invalidCreditsOrAmount(hasCredits ? 'both credits and amount' : 'neither');
  }
  if (hasCredits) {
    if (
      typeof credits !== 'number' ||
      !Number.isSafeInteger(credits) ||
      credits < 1 ||
      credits > RECHARGE_BOUNDS.maxCredits
    ) {
      throw errors.invalidCreditsOrAmount('credits');
    }
    return { credits };
  }
  // JSON numbers arrive as doubles; their shortest text form is what the caller wrote for any
  // amount with two decimals, so the decimal is read from that text, never computed in binary.
  const text = typeof amount === 'number' && Number.isFinite(amount) ? String(amount) : '';
  const value = /^\d+(\.\d{1,2})?$/.test(text) ? parseDecimal(text, { maxDecimals: 2 }) : undefined;
  if (value === undefined || value <= 0n || value > MAX_AMOUNT) {
    throw errors.invalidCreditsOrAmount('amount');
  }
  return { amount: formatDecimal(value) };
}

/** Whether an amount buys at least one credit at `creditCost` (both decimal strings). */
export function buysAtLeastOneCredit(amount: string, creditCost: string): boolean {
  const cost = parseDecimal(creditCost);
  const value = parseDecimal(amount);
  return cost !== undefined && value !== undefined && cost > 0n && value >= cost;
}
