import { bonusFor } from '../../common/bonus-tiers.ts';
import {
  creditsForAmount,
  formatDecimal,
  parseDecimal,
  parseStoredDecimal,
} from '../../common/decimal.ts';
import type { BonusQuote, CardRules } from '../../common/ledger-contract.ts';
import { appendAudit, type AuditedBy } from '../audit/audit-log.ts';
import type { Database } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import { findCustomer, toCardRules, type CustomerRow } from '../records.ts';

/** The undo window's bounds in seconds (0: no cashier's undo; migration 13's CHECK). */
export const UNDO_WINDOW_BOUNDS = { min: 0, max: 86_400 } as const;

/**
 * Sets some of a shop's card rules (docs/cloud-api.md, "Lost cards, refunds and bonuses"):
 * the cashier's undo window, the bonus tiers (all of them, replaced; none: no bonus) and how a
 * payout spends bonus credits. The others stay. Answers them all. Tiers are validated by the
 * caller (checkedTiers, common/bonus-tiers.ts). With `by`, a change is in the audit log (the
 * rules before and after).
 */
export async function setCardRules(
  db: Database,
  customerId: string,
  change: Partial<CardRules>,
  by?: AuditedBy,
): Promise<CardRules> {
  return db.transaction(async (tx) => {
    const shop = await findCustomer(tx, customerId, { lock: true });
    if (!shop) throw ledgerErrors.customerNotFound(customerId);
    const before = toCardRules(shop);
    if (change.undoWindowSeconds !== undefined) {
      await tx.query('UPDATE customers SET undo_window_s = $2 WHERE id = $1', [
        customerId,
        change.undoWindowSeconds,
      ]);
    }
    if (change.bonusSpend !== undefined) {
      await tx.query('UPDATE customers SET bonus_spend = $2 WHERE id = $1', [
        customerId,
        change.bonusSpend,
      ]);
    }
    if (change.bonusTiers !== undefined) {
      await tx.query('DELETE FROM bonus_tiers WHERE customer_id = $1', [customerId]);
      for (const tier of change.bonusTiers) {
        await tx.query(
          `INSERT INTO bonus_tiers (customer_id, min_amount, bonus_credits, bonus_percent)
           VALUES ($1, $2, $3, $4)`,
          [customerId, tier.minAmount, tier.bonusCredits ?? null, tier.bonusPercent ?? null],
        );
      }
      await tx.query('UPDATE customers SET bonus_changed_at = now() WHERE id = $1', [customerId]);
    }
    const after = toCardRules((await findCustomer(tx, customerId)) as CustomerRow);
    if (by && JSON.stringify(after) !== JSON.stringify(before)) {
      await appendAudit(tx, {
        ...by,
        customerId,
        action: 'card.rules',
        subject: customerId,
        detail: { from: before, to: after },
      });
    }
    return after;
  });
}

/**
 * What a recharge by `amount` would buy now at the shop (`GET /v1/bonus-quote`): the credits
 * paid for, the bonus, and what it charges. The recharge itself may differ if the price or
 * the tiers change before it.
 */
export async function quoteRecharge(
  db: Database,
  customerId: string,
  amount: string,
): Promise<BonusQuote> {
  const shop = await findCustomer(db, customerId);
  if (!shop) throw ledgerErrors.customerNotFound(customerId);
  const cost = parseStoredDecimal(shop.credit_cost);
  const paidCredits = Number(creditsForAmount(parseDecimal(amount) ?? 0n, cost));
  if (paidCredits < 1) throw ledgerErrors.amountBelowOneCredit();
  return {
    amount: formatDecimal(parseDecimal(amount) ?? 0n),
    paidCredits,
    bonusCredits: bonusFor(toCardRules(shop).bonusTiers, paidCredits, cost),
    rechargeAmount: formatDecimal(BigInt(paidCredits) * cost),
    creditCost: formatDecimal(cost),
  };
}
