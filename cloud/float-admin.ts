import type { CardType, FloatSettings, Float, Till } from '../common/ledger-contract.ts';
import { appendAudit, type AuditedBy } from './audit/audit-log.ts';
import type { Database, Queryable } from './db/database.ts';
import { sqlState, violatedConstraint } from './db/database.ts';
import { ledgerErrors } from './errors.ts';
import { Floats } from './floats.ts';
import { CUSTOMER_COLUMNS, findCustomer, toFloatSettings, type CustomerRow } from './records.ts';

/**
 * The operator's side of the till floats (the admin CLI, `card-wallet-cloud float ...`): a
 * shop's float settings, what the ledger knows of its tills and floats, and closing the float
 * of a till that cannot close it (docs/operators.md, "When the internet drops").
 */

export const CARD_TYPES: readonly CardType[] = ['classic', 'desfire'];
/** The offline limit's bounds, in seconds (1 minute to 30 days; migration 9's CHECK). */
export const OFFLINE_LIMIT_BOUNDS = { min: 60, max: 30 * 24 * 3600 } as const;

/**
 * Sets some of a shop's float settings; the others stay. Answers them all. An operator's change
 * (`by`) and its audit log row (`float.settings`, the settings before and after) commit
 * together.
 */
export async function setFloatSettings(
  db: Database,
  customerId: string,
  change: Partial<FloatSettings>,
  by?: AuditedBy,
): Promise<FloatSettings> {
  return db.transaction(async (tx) => {
    const row = await findCustomer(tx, customerId, { lock: true });
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    const next = { ...toFloatSettings(row), ...change };
    if (next.lowWater > next.size) {
      throw ledgerErrors.invalidFloatSettings(
        `the low-water mark (${next.lowWater}) must not be above the float size (${next.size})`,
      );
    }
    try {
      const { rows } = await tx.query<CustomerRow>(
        `UPDATE customers SET float_size = $2, float_low_water = $3, float_offline_cap = $4,
           float_offline_limit_s = $5, float_card_types = $6
         WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`,
        [
          customerId,
          next.size,
          next.lowWater,
          next.offlineCap,
          next.offlineLimitSeconds,
          [...new Set(next.cardTypes)].sort(),
        ],
      );
      const settings = toFloatSettings(rows[0] as CustomerRow);
      if (by) {
        await appendAudit(tx, {
          ...by,
          customerId,
          action: 'float.settings',
          subject: customerId,
          detail: { from: toFloatSettings(row), to: settings },
        });
      }
      return settings;
    } catch (error) {
      if (sqlState(error) === '23514') {
        throw ledgerErrors.invalidFloatSettings(
          `refused by ${violatedConstraint(error) ?? 'a CHECK'}`,
        );
      }
      throw error;
    }
  });
}

export interface ShopFloats {
  customerId: string;
  settings: FloatSettings;
  tills: Till[];
  /** Closed floats too, newest first (at most 100). */
  floats: Float[];
}

/** What the ledger knows of a shop's tills and floats, for an operator. */
export async function showFloats(db: Database, customerId: string): Promise<ShopFloats> {
  const row = await findCustomer(db, customerId);
  if (!row) throw ledgerErrors.customerNotFound(customerId);
  const floats = new Floats(db);
  const ids = await floatIds(db, customerId);
  return {
    customerId,
    settings: toFloatSettings(row),
    tills: await floats.tills(customerId),
    floats: await Promise.all(ids.map((id) => floats.get(customerId, id))),
  };
}

async function floatIds(tx: Queryable, customerId: string): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM floats WHERE customer_id = $1 ORDER BY opened_at DESC, id DESC LIMIT 100',
    [customerId],
  );
  return rows.map((row) => row.id);
}
