import type { Queryable } from '../db/database.ts';
import {
  movementColumnsOf,
  toMovement,
  type Movement,
  type MovementKind,
  type MovementRow,
  type MovementState,
} from '../records.ts';

/** What the console's movement list filters by; every field optional. */
export interface MovementFilter {
  tillId?: string;
  cardId?: string;
  kind?: MovementKind;
  state?: MovementState;
  /** A local date of the shop (YYYY-MM-DD): movements created that day. */
  date?: string;
  limit?: number;
}

export const SEARCH_LIMIT = 200;

/** A shop's movements, newest first, filtered; at most `limit` (200). */
export async function searchMovements(
  db: Queryable,
  shop: { id: string; timeZone: string },
  filter: MovementFilter,
): Promise<Movement[]> {
  const params: unknown[] = [shop.id];
  const conditions = ['m.customer_id = $1'];
  if (filter.tillId) conditions.push(`m.till_id = $${params.push(filter.tillId)}`);
  if (filter.cardId) conditions.push(`m.card_id = $${params.push(filter.cardId)}`);
  if (filter.kind) conditions.push(`m.kind = $${params.push(filter.kind)}`);
  if (filter.state) conditions.push(`m.state = $${params.push(filter.state)}`);
  if (filter.date) {
    const zone = `$${params.push(shop.timeZone)}`;
    const day = `$${params.push(filter.date)}::date`;
    conditions.push(
      `m.created_at >= ledger_local_day_start(${zone}, ${day}) AND m.created_at < ledger_local_day_start(${zone}, ${day} + 1)`,
    );
  }
  const limit = Math.min(Math.max(filter.limit ?? SEARCH_LIMIT, 1), SEARCH_LIMIT);
  const { rows } = await db.query<MovementRow & { customer_credits: number | string }>(
    `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
     FROM movements m JOIN customers c ON c.id = m.customer_id
     WHERE ${conditions.join(' AND ')}
     ORDER BY m.created_at DESC, m.id DESC
     LIMIT ${limit}`,
    params,
  );
  return rows.map((row) => toMovement(row, row.customer_credits));
}

/** The movements that set this one right, and the one it sets right. */
export async function relatedMovements(
  db: Queryable,
  shopId: string,
  movement: Movement,
): Promise<{ compensatedBy: Movement[]; compensates: Movement | null }> {
  const { rows } = await db.query<MovementRow & { customer_credits: number | string }>(
    `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
     FROM movements m JOIN customers c ON c.id = m.customer_id
     WHERE m.customer_id = $1 AND (m.compensates = $2 OR m.id = $3)
     ORDER BY m.created_at`,
    [shopId, movement.id, movement.compensates],
  );
  const all = rows.map((row) => toMovement(row, row.customer_credits));
  return {
    compensatedBy: all.filter((m) => m.compensates === movement.id),
    compensates: all.find((m) => m.id === movement.compensates) ?? null,
  };
}
