import { appendAudit, type AuditedBy } from '../audit/audit-log.ts';
import type { Database, Queryable } from '../db/database.ts';
import { sqlState } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import { canonicalDecimal } from '../records.ts';

/**
 * A shop (a customer of the ledger) as the back office sees it: its pool and price, the time
 * zone its day is counted in, and how long a till may stay quiet before it is marked.
 */
export interface Shop {
  id: string;
  name: string;
  credits: number;
  creditCost: string;
  timeZone: string;
  tillQuietMinutes: number;
}

interface ShopRow {
  id: string;
  name: string;
  credits: number | string;
  credit_cost: string;
  time_zone: string;
  till_quiet_minutes: number;
}

const SHOP_COLUMNS = 'id, name, credits, credit_cost, time_zone, till_quiet_minutes';

function toShop(row: ShopRow): Shop {
  return {
    id: row.id,
    name: row.name,
    credits: Number(row.credits),
    creditCost: canonicalDecimal(row.credit_cost),
    timeZone: row.time_zone,
    tillQuietMinutes: row.till_quiet_minutes,
  };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findShop(db: Queryable, id: string): Promise<Shop | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await db.query<ShopRow>(`SELECT ${SHOP_COLUMNS} FROM customers WHERE id = $1`, [
    id,
  ]);
  return rows[0] && toShop(rows[0]);
}

export async function readShop(db: Queryable, id: string): Promise<Shop> {
  const shop = await findShop(db, id);
  if (!shop) throw ledgerErrors.customerNotFound(id);
  return shop;
}

/** Shops by name; `ids` null: every shop (a provider admin). */
export async function listShops(db: Queryable, ids: readonly string[] | null): Promise<Shop[]> {
  const { rows } = await db.query<ShopRow>(
    `SELECT ${SHOP_COLUMNS} FROM customers
     WHERE $1::uuid[] IS NULL OR id = ANY($1::uuid[]) ORDER BY lower(name), id`,
    [ids],
  );
  return rows.map(toShop);
}

/** The shop's current local date (YYYY-MM-DD), by the database's clock. */
export async function shopToday(db: Queryable, shop: Shop): Promise<string> {
  const { rows } = await db.query<{ today: string }>(
    `SELECT to_char(now() AT TIME ZONE $1, 'YYYY-MM-DD') AS today`,
    [shop.timeZone],
  );
  return rows[0]?.today as string;
}

/**
 * An IANA time zone name the database and Node both know (`Europe/Brussels`, `UTC`), or
 * undefined. Abbreviations and POSIX offsets (`CET`, `UTC+3`) are refused: their summer time
 * is not a place's.
 */
export async function checkTimeZone(db: Queryable, name: string): Promise<string | undefined> {
  const zone = name.trim();
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone) || zone.length > 64) {
    return undefined;
  }
  if (zone !== 'UTC' && !zone.includes('/')) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    return undefined;
  }
  try {
    await db.query('SELECT now() AT TIME ZONE $1', [zone]);
  } catch (error) {
    if (sqlState(error) === '22023') return undefined;
    throw error;
  }
  return zone;
}

/**
 * Sets the zone a shop's day is counted in, and counts its posted movements' days anew in it
 * (daily_takings, in the same transaction): the next report counts the new local days.
 */
export async function setTimeZone(
  db: Database,
  shopId: string,
  rawZone: string,
  by: AuditedBy,
): Promise<Shop> {
  const zone = await checkTimeZone(db, rawZone);
  if (zone === undefined) {
    throw ledgerErrors.invalidInput(
      `time zone: ${JSON.stringify(rawZone)} is not a time zone name like Europe/Brussels`,
    );
  }
  return updateShop(db, shopId, 'time_zone', zone, 'shop.time-zone', by);
}

export const QUIET_MINUTES = { min: 2, max: 10_080 } as const;

/** How long a till may go without a heartbeat before the console marks it quiet. */
export async function setTillQuietMinutes(
  db: Database,
  shopId: string,
  minutes: number,
  by: AuditedBy,
): Promise<Shop> {
  if (!Number.isInteger(minutes) || minutes < QUIET_MINUTES.min || minutes > QUIET_MINUTES.max) {
    throw ledgerErrors.invalidInput(
      `quiet after: a whole number of minutes from ${QUIET_MINUTES.min} to ${QUIET_MINUTES.max}`,
    );
  }
  return updateShop(db, shopId, 'till_quiet_minutes', minutes, 'shop.till-quiet-bound', by);
}

async function updateShop(
  db: Database,
  shopId: string,
  column: 'time_zone' | 'till_quiet_minutes',
  value: string | number,
  action: 'shop.time-zone' | 'shop.till-quiet-bound',
  by: AuditedBy,
): Promise<Shop> {
  return db.transaction(async (tx) => {
    // A change of zone counts the shop's days anew: it waits first for the posts in flight,
    // before the shop's row, in the order a post takes them (ledger_count_posted). A
    // transaction that holds the shop's row before it posts (a float's close) can meet it in
    // a deadlock: PostgreSQL ends one, and db.transaction makes it again.
    if (column === 'time_zone') {
      await tx.query('SELECT pg_advisory_xact_lock(11, hashtext($1::text))', [shopId]);
    }
    const before = await tx.query<ShopRow>(
      `SELECT ${SHOP_COLUMNS} FROM customers WHERE id = $1 FOR NO KEY UPDATE`,
      [shopId],
    );
    const old = before.rows[0];
    if (!old) throw ledgerErrors.customerNotFound(shopId);
    if (old[column] === value) return toShop(old);
    const { rows } = await tx.query<ShopRow>(
      `UPDATE customers SET ${column} = $2 WHERE id = $1 RETURNING ${SHOP_COLUMNS}`,
      [shopId, value],
    );
    if (column === 'time_zone') {
      await tx.query('SELECT ledger_rebuild_daily_takings($1)', [shopId]);
    }
    await appendAudit(tx, {
      ...by,
      customerId: shopId,
      action,
      subject: shopId,
      detail: { from: old[column], to: value },
    });
    return toShop(rows[0] as ShopRow);
  });
}
