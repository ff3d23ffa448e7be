import { z } from 'zod';
import { checkedTiers } from '../../../common/bonus-tiers.ts';
import type { BonusTier } from '../../../common/ledger-contract.ts';
import { csrf, reason, uuid } from './form.ts';

/** A card id as typed: spaces and colons dropped, upper case; 8 or 14 hexadecimal digits. */
export const cardId = z.preprocess(
  (value) => (typeof value === 'string' ? value.replace(/[\s:]/g, '').toUpperCase() : value),
  z.string().regex(/^([0-9A-F]{8}|[0-9A-F]{14})$/, 'a card id is 8 or 14 hexadecimal digits'),
);

export const cardLookup = z.object({ card: cardId });

export const reasonForm = z.object({ reason, ...csrf });

/** Set the holder label (checked by checkedHolderLabel) or delete it. */
export const holderForm = z.object({
  action: z.enum(['set', 'delete']),
  label: z.string().optional(),
  ...csrf,
});

export const replaceForm = z.object({ id: uuid, newCardId: cardId, reason, ...csrf });

export const correctForm = z.object({
  id: uuid,
  recharge: uuid,
  credits: z
    .string()
    .trim()
    .regex(/^[1-9]\d{0,9}$/, 'a whole number of credits, 1 or more')
    .transform(Number)
    .refine((credits) => credits <= 2_147_483_647, 'at most 2147483647 credits'),
  reason,
  ...csrf,
});

/**
 * The card rules form: the undo window in minutes, how a payout spends bonus credits, and up
 * to 10 tier rows (`tierAmount0`, `tierBonus0`, ...; blank rows are none). The tiers are read
 * row by row by `tiersOfForm` (card-rules route), so a problem names its row.
 */
export const cardRulesForm = z.object({
  undoMinutes: z
    .string()
    .trim()
    .regex(/^\d{1,4}$/, 'a whole number of minutes from 0 to 1440')
    .transform(Number)
    .refine((minutes) => minutes <= 1440, 'a whole number of minutes from 0 to 1440'),
  bonusSpend: z.enum(['bonus-first', 'bonus-last']),
  ...csrf,
});

/** One row of the tiers form, as typed. */
export interface TierRow {
  amount: string;
  bonus: string;
}

/** The tier rows of a posted form, in row order (blank rows kept, for showing them again). */
export function tierRowsOf(body: unknown): TierRow[] {
  const fields = (body ?? {}) as Record<string, unknown>;
  const rows: TierRow[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const match = /^tier(Amount|Bonus)(\d{1,3})$/.exec(name);
    if (!match || typeof value !== 'string') continue;
    const row = (rows[Number(match[2])] ??= { amount: '', bonus: '' });
    row[match[1] === 'Amount' ? 'amount' : 'bonus'] = value.trim().slice(0, 40);
  }
  return Array.from(rows, (row) => row ?? { amount: '', bonus: '' });
}

/**
 * The tiers of the rows (blank rows skipped), lowest first, or what is wrong, naming the row:
 * an amount in euros (20 or 20.00) and a bonus of credits (2, +2) or a percentage (10%).
 */
export function tiersOf(rows: readonly TierRow[]): BonusTier[] | string {
  const tiers: BonusTier[] = [];
  for (const [index, row] of rows.entries()) {
    if (row.amount === '' && row.bonus === '') continue;
    const which = `Tier ${index + 1}`;
    const amount = row.amount.replace(/^€\s*/, '').replace(',', '.');
    if (!/^\d{1,12}(\.\d{1,2})?$/.test(amount) || !/[1-9]/.test(amount)) {
      return `${which}: the amount paid must be euros above 0, like 20 or 20.00 (got "${row.amount}")`;
    }
    const credits = /^\+?(\d{1,10})$/.exec(row.bonus);
    const percent = /^(\d{1,3}(?:[.,]\d{1,2})?)\s*%$/.exec(row.bonus);
    if (!credits && !percent) {
      return `${which}: the bonus must be credits, like 2, or a percentage of the credits paid for, like 10% (got "${row.bonus}")`;
    }
    tiers.push(
      credits
        ? { minAmount: amount, bonusCredits: Number(credits[1]) }
        : { minAmount: amount, bonusPercent: (percent?.[1] ?? '').replace(',', '.') },
    );
  }
  const checked = checkedTiers(tiers);
  return typeof checked === 'string' ? `${checked[0]?.toUpperCase()}${checked.slice(1)}` : checked;
}
