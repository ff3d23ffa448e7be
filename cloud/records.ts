import type { Queryable } from './db/database.ts';
import { sqlState, violatedConstraint } from './db/database.ts';
import { formatDecimal, parseStoredDecimal } from '../common/decimal.ts';
import { ledgerErrors } from './errors.ts';

import type {
  BonusSpend,
  BonusTier,
  CardRules,
  CardType,
  Customer,
  FloatSettings,
  Movement,
  MovementKind,
  MovementState,
} from '../common/ledger-contract.ts';

export type { Customer, Movement, MovementKind, MovementState };

/** Rows as the database returns them. */
export type EntryOperation = 'open' | 'topup' | 'reserve' | 'release' | 'return';

export interface CustomerRow {
  id: string;
  name: string;
  credits: number | string; // bigint: a string from pg, a number from PGlite
  credit_cost: string;
  float_size: number | string;
  float_low_water: number | string;
  float_offline_cap: number | string | null;
  float_offline_limit_s: number;
  float_card_types: string[];
  undo_window_s: number;
  bonus_spend: BonusSpend;
  /** The bonus tiers, lowest first (a subquery of CUSTOMER_COLUMNS). */
  bonus_tiers: { minAmount: string; bonusCredits: number | null; bonusPercent: string | null }[];
  /** What the open floats hold (only where it is asked for). */
  float_credits?: number | string;
}

export interface MovementRow {
  id: string;
  customer_id: string;
  kind: MovementKind;
  card_id: string;
  state: MovementState;
  credits: number | string;
  credit_cost: string;
  amount: string;
  requested_amount: string | null;
  created_at: Date | string;
  resolved_at: Date | string | null;
  till_id: string | null;
  card_before: string | null;
  compensates: string | null;
  resolved_by_till: string | null;
  evidence: string | null;
  awaits_card: boolean;
  card_evidence: string | null;
  occurred_at: Date | string | null;
  float_id: string | null;
  reported_as: 'till' | 'found' | 'operator' | null;
  report_flags: string[];
  reference: string | null;
  bonus_credits: number | string;
  paid_amount: string;
  refunds: string | null;
  applies: string | null;
  till_time: Date | string | null;
}

export const CUSTOMER_COLUMNS =
  'id, name, credits, credit_cost, float_size, float_low_water, float_offline_cap, ' +
  'float_offline_limit_s, float_card_types, undo_window_s, bonus_spend, ' +
  "(SELECT COALESCE(jsonb_agg(jsonb_build_object('minAmount', t.min_amount::text, " +
  "'bonusCredits', t.bonus_credits, 'bonusPercent', t.bonus_percent::text) " +
  "ORDER BY t.min_amount), '[]') FROM bonus_tiers t WHERE t.customer_id = customers.id) " +
  'AS bonus_tiers';
export const MOVEMENT_COLUMNS =
  'id, customer_id, kind, card_id, state, credits, credit_cost, amount, requested_amount, created_at, resolved_at, ' +
  'till_id, card_before, compensates, resolved_by_till, evidence, awaits_card, card_evidence, occurred_at, ' +
  'float_id, reported_as, report_flags, reference, bonus_credits, paid_amount, refunds, applies, till_time';

/** MOVEMENT_COLUMNS qualified by a table alias, for joins. */
export function movementColumnsOf(alias: string): string {
  return MOVEMENT_COLUMNS.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

export function toCustomer(row: CustomerRow): Customer {
  return {
    customerId: row.id,
    name: row.name,
    credits: Number(row.credits),
    creditCost: canonicalDecimal(row.credit_cost),
    ...(row.float_credits === undefined ? {} : { floatCredits: Number(row.float_credits) }),
    float: toFloatSettings(row),
    cards: toCardRules(row),
  };
}

export function toCardRules(row: CustomerRow): CardRules {
  return {
    undoWindowSeconds: Number(row.undo_window_s),
    bonusTiers: row.bonus_tiers.map((tier): BonusTier => ({
      minAmount: canonicalDecimal(String(tier.minAmount)),
      ...(tier.bonusCredits === null
        ? { bonusPercent: canonicalDecimal(String(tier.bonusPercent)) }
        : { bonusCredits: Number(tier.bonusCredits) }),
    })),
    bonusSpend: row.bonus_spend,
  };
}

export function toFloatSettings(row: CustomerRow): FloatSettings {
  return {
    size: Number(row.float_size),
    lowWater: Number(row.float_low_water),
    offlineCap: row.float_offline_cap === null ? null : Number(row.float_offline_cap),
    offlineLimitSeconds: Number(row.float_offline_limit_s),
    cardTypes: [...row.float_card_types].sort() as CardType[],
  };
}

export function toMovement(row: MovementRow, customerCredits: number | string): Movement {
  return {
    id: row.id,
    kind: row.kind,
    cardId: row.card_id,
    state: row.state,
    credits: Number(row.credits),
    amount: canonicalDecimal(row.amount),
    creditCost: canonicalDecimal(row.credit_cost),
    customerCredits: Number(customerCredits),
    createdAt: toIso(row.created_at),
    resolvedAt: row.resolved_at === null ? null : toIso(row.resolved_at),
    tillId: row.till_id,
    cardBefore: row.card_before,
    compensates: row.compensates,
    resolvedByTill: row.resolved_by_till,
    evidence: row.evidence,
    awaitsCard: row.awaits_card,
    cardEvidence: row.card_evidence,
    occurredAt: row.occurred_at === null ? null : toIso(row.occurred_at),
    floatId: row.float_id,
    reportedAs: row.reported_as,
    reportFlags: row.report_flags,
    reference: row.reference,
    bonusCredits: Number(row.bonus_credits),
    refunds: row.refunds,
    applies: row.applies,
  };
}

export function canonicalDecimal(stored: string): string {
  return formatDecimal(parseStoredDecimal(stored));
}

export function toIso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export async function findCustomer(
  tx: Queryable,
  customerId: string,
  { lock = false } = {},
): Promise<CustomerRow | undefined> {
  const { rows } = await tx.query<CustomerRow>(
    `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`,
    [customerId],
  );
  return rows[0];
}

/**
 * Adds `delta` to a customer's pool and appends the matching ledger entry, in one statement
 * (so always in the caller's transaction). The CHECK constraint refuses a negative pool,
 * answered as NoCredits. Returns the pool after the change and the entry's id.
 */
export async function changeBalance(
  tx: Queryable,
  customerId: string,
  delta: bigint,
  operation: EntryOperation,
  movementId: string | null,
): Promise<{ balance: number; entryId: string }> {
  try {
    const { rows } = await tx.query<{ balance_after: number | string; id: number | string }>(
      `WITH changed AS (
         UPDATE customers SET credits = credits + $2::bigint WHERE id = $1 RETURNING id, credits
       )
       INSERT INTO ledger_entries (customer_id, movement_id, operation, delta, balance_after)
       SELECT id, $3::uuid, $4, $2::bigint, credits FROM changed
       RETURNING balance_after, id`,
      [customerId, delta.toString(), movementId, operation],
    );
    const row = rows[0];
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    return { balance: Number(row.balance_after), entryId: String(row.id) };
  } catch (error) {
    if (
      sqlState(error) === '23514' &&
      violatedConstraint(error) === 'customers_credits_non_negative'
    ) {
      throw ledgerErrors.noCredits();
    }
    throw error;
  }
}
