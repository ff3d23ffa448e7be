import { amountForCredits, formatDecimal, parseDecimal } from './decimal.ts';
import type { BonusTier } from './ledger-contract.ts';

/**
 * A shop's bonus tiers (docs/cloud-api.md, "Bonus tiers"): the rule the ledger applies to a
 * recharge by amount (cloud/db/routines/ledger-bonus-for.ts is the same rule in SQL), and what
 * a till quotes before paying and gives offline from its float with the tiers it last learnt.
 */

/** The most tiers a shop keeps. */
export const MAX_BONUS_TIERS = 10;

/**
 * The bonus credits a recharge paying for `paidCredits` at `creditCost` (ten-thousandths of a
 * euro) gets: the tier with the highest minimum amount that the amount paid reaches gives its
 * credits, or its percentage of the credits paid for, rounded down. No tier reached: 0.
 */
export function bonusFor(
  tiers: readonly BonusTier[],
  paidCredits: number,
  creditCost: bigint,
): number {
  const paid = amountForCredits(paidCredits, creditCost);
  let best: { min: bigint; tier: BonusTier } | undefined;
  for (const tier of tiers) {
    const min = parseDecimal(tier.minAmount) ?? 0n;
    if (min <= paid && (best === undefined || min > best.min)) best = { min, tier };
  }
  if (!best) return 0;
  if (best.tier.bonusCredits !== undefined) return best.tier.bonusCredits;
  const percent = parseDecimal(best.tier.bonusPercent ?? '0') ?? 0n; // ten-thousandths
  return Number((BigInt(paidCredits) * percent) / 1_000_000n);
}

/**
 * Reads tiers written as `20.00=2,50.00=8,100.00=10%` (the admin CLI's form): each a minimum
 * amount (euros, at most 2 decimals) and a bonus of credits or a percentage (more than 0, at
 * most 100, at most 2 decimals). Answers the tiers lowest first, or the problem.
 */
export function parseBonusTiers(text: string): BonusTier[] | string {
  const tiers: BonusTier[] = [];
  for (const part of text.split(',').map((item) => item.trim())) {
    const match = /^(\d{1,12}(?:\.\d{1,2})?)=(?:\+?(\d{1,10})|(\d{1,3}(?:\.\d{1,2})?)%)$/.exec(
      part,
    );
    if (!match) {
      return `"${part}" is no tier: write AMOUNT=CREDITS or AMOUNT=PERCENT%, like 20.00=2 or 100.00=10%`;
    }
    const tier = checkedTier({
      minAmount: match[1] as string,
      ...(match[2] === undefined
        ? { bonusPercent: match[3] as string }
        : { bonusCredits: Number(match[2]) }),
    });
    if (typeof tier === 'string') return tier;
    tiers.push(tier);
  }
  return checkedTiers(tiers);
}

/** Validates tiers given as JSON (a seed, the console): the same rules as parseBonusTiers. */
export function checkedTiers(tiers: readonly BonusTier[]): BonusTier[] | string {
  if (tiers.length > MAX_BONUS_TIERS) return `at most ${MAX_BONUS_TIERS} tiers`;
  const checked: BonusTier[] = [];
  for (const tier of tiers) {
    const one = checkedTier(tier);
    if (typeof one === 'string') return one;
    checked.push(one);
  }
  checked.sort((a, b) => compare(parseDecimal(a.minAmount), parseDecimal(b.minAmount)));
  for (let i = 1; i < checked.length; i += 1) {
    if (checked[i]?.minAmount === checked[i - 1]?.minAmount) {
      return `two tiers start at ${checked[i]?.minAmount}`;
    }
  }
  return checked;
}

function checkedTier(tier: BonusTier): BonusTier | string {
  const min =
    typeof tier.minAmount === 'string'
      ? parseDecimal(tier.minAmount, { maxDecimals: 2 })
      : undefined;
  if (min === undefined || min <= 0n) {
    return `a tier's minimum amount must be euros > 0 with at most 2 decimals (got "${String(tier.minAmount)}")`;
  }
  const minAmount = formatDecimal(min);
  if ((tier.bonusCredits === undefined) === (tier.bonusPercent === undefined)) {
    return `the tier from ${minAmount} must give either credits or a percentage`;
  }
  if (tier.bonusCredits !== undefined) {
    const credits = tier.bonusCredits;
    if (!Number.isInteger(credits) || credits < 1 || credits > 2_147_483_647) {
      return `the tier from ${minAmount} must give 1 to 2147483647 credits (got ${String(credits)})`;
    }
    return { minAmount, bonusCredits: credits };
  }
  const percent =
    typeof tier.bonusPercent === 'string'
      ? parseDecimal(tier.bonusPercent, { maxDecimals: 2, maxIntegerDigits: 3 })
      : undefined;
  if (percent === undefined || percent <= 0n || percent > 1_000_000n) {
    return `the tier from ${minAmount} must give more than 0 and at most 100 percent (got "${String(tier.bonusPercent)}")`;
  }
  return { minAmount, bonusPercent: formatDecimal(percent) };
}

function compare(a: bigint | undefined, b: bigint | undefined): number {
  return a === b ? 0 : (a ?? 0n) < (b ?? 0n) ? -1 : 1;
}
