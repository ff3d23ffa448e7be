/**
 * Exact decimal money arithmetic without binary floating point. Every decimal of the ledger
 * (credit costs with up to 4 decimals, amounts with up to 2) is held as a bigint count of
 * ten-thousandths, so 0.5 is 5000n and 12.34 is 123400n. The database stores the same values as
 * NUMERIC; only their text form crosses the boundary.
 */
export const DECIMAL_SCALE = 4;
const FACTOR = 10n ** BigInt(DECIMAL_SCALE);

/**
 * Parses a non-negative decimal string ("12", "12.5", "0.1250") with at most `maxDecimals`
 * decimals and `maxIntegerDigits` integer digits. Returns undefined when the text is not one.
 */
export function parseDecimal(
  text: string,
  { maxDecimals = DECIMAL_SCALE, maxIntegerDigits = 12 } = {},
): bigint | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const integer = match[1] ?? '';
  const fraction = match[2] ?? '';
  if (fraction.length > maxDecimals) return undefined;
  if (integer.replace(/^0+(?=\d)/, '').length > maxIntegerDigits) return undefined;
  return BigInt(integer) * FACTOR + BigInt(fraction.padEnd(DECIMAL_SCALE, '0'));
}

/**
 * Parses a decimal the database returned (NUMERIC as text, any number of trailing zeros; a sum
 * may be negative: a day's compensations that undo refunds).
 */
export function parseStoredDecimal(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (!match) throw new Error(`not a stored decimal: ${text}`);
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  if (fraction.length > DECIMAL_SCALE) throw new Error(`more than 4 decimals: ${text}`);
  const magnitude = BigInt(match[2] ?? '0') * FACTOR + BigInt(fraction.padEnd(DECIMAL_SCALE, '0'));
  return match[1] === '-' ? -magnitude : magnitude;
}

/** The canonical text: at least 2 decimals, no trailing zeros beyond them ("0.50", "0.125"). */
export function formatDecimal(tenThousandths: bigint): string {
  const sign = tenThousandths < 0n ? '-' : '';
  const magnitude = tenThousandths < 0n ? -tenThousandths : tenThousandths;
  const integer = magnitude / FACTOR;
  const fraction = (magnitude % FACTOR).toString().padStart(DECIMAL_SCALE, '0');
  return `${sign}${integer}.${trimFraction(fraction)}`;
}

function trimFraction(fraction: string): string {
  let end = fraction.length;
  while (end > 2 && fraction[end - 1] === '0') end -= 1;
  return fraction.slice(0, end);
}

/** Whole credits an amount buys at a credit cost: floor(amount / creditCost), exactly. */
export function creditsForAmount(amount: bigint, creditCost: bigint): bigint {
  if (creditCost <= 0n) throw new RangeError('creditCost must be positive');
  if (amount < 0n) throw new RangeError('amount must not be negative');
  return amount / creditCost; // both non-negative: bigint division truncates = floors
}

/** The euro value of whole credits: credits x creditCost, exactly (in ten-thousandths). */
export function amountForCredits(credits: number | bigint, creditCost: bigint): bigint {
  return BigInt(credits) * creditCost;
}
