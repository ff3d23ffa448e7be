import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { hashApiKey, API_KEY_PATTERN } from './api-keys.ts';
import type { Database, Queryable } from './db/database.ts';
import { formatDecimal, parseDecimal } from '../common/decimal.ts';
import { ledgerErrors } from './errors.ts';
import { changeBalance, CUSTOMER_COLUMNS, type CustomerRow } from './records.ts';
import { checkTimeZone } from './shops/shops.ts';

/**
 * A seed file makes a test or a demo start in one step:
 *
 *   {
 *     "customers": [
 *       { "id": "<uuid, optional>", "name": "Shop", "credits": 1500, "creditCost": "0.50",
 *         "keys": ["<api key>"], "float": { "size": 500, "lowWater": 200 },
 *         "timeZone": "Europe/Brussels" }
 *     ],
 *     "unassignedKeys": ["<api key>"],
 *     "revokedKeys": ["<api key>"]
 *   }
 *
 * Applying it is idempotent: a customer that exists already (by id, or by name when the seed
 * gives no id) and a key that is registered already are left exactly as they are. A new
 * customer's `timeZone` (default UTC) is the one its day reports count local days in.
 */
const apiKey = z.string().regex(API_KEY_PATTERN, 'must be 16 to 256 visible ASCII characters');
const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');
const creditCost = z
  .string()
  .refine((text) => (parseDecimal(text, { maxIntegerDigits: 8 }) ?? 0n) > 0n, {
    message: 'must be a decimal string > 0 with at most 4 decimals, like "0.50"',
  });

/** A shop's float settings (docs/cloud-api.md, "Till floats"): only `size` is needed. */
const floatSettings = z
  .object({
    size: z.number().int().min(0).max(2_147_483_647),
    lowWater: z.number().int().min(0).max(2_147_483_647).default(0),
    offlineCap: z.number().int().min(1).max(2_147_483_647).nullable().default(null),
    offlineLimitSeconds: z.number().int().min(60).max(2_592_000).default(86_400),
    cardTypes: z
      .array(z.enum(['classic', 'desfire']))
      .min(1)
      .default(['classic', 'desfire']),
  })
  .strict()
  .refine((float) => float.lowWater <= float.size, {
    message: 'lowWater must not be above size',
    path: ['lowWater'],
  });

export const seedSchema = z
  .object({
    customers: z
      .array(
        z
          .object({
            id: uuid.optional(),
            name: z.string().min(1).max(200),
            credits: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
            creditCost,
            keys: z.array(apiKey).default([]),
            float: floatSettings.optional(),
            timeZone: z.string().max(64).optional(),
          })
          .strict(),
      )
      .default([]),
    unassignedKeys: z.array(apiKey).default([]),
    revokedKeys: z.array(apiKey).default([]),
  })
  .strict();

export type Seed = z.input<typeof seedSchema>;
type ParsedSeed = z.output<typeof seedSchema>;

export interface SeedResult {
  customers: { customerId: string; name: string; created: boolean }[];
  keysAdded: number;
}

/** Validates a seed object; the error message names the offending field. */
export function parseSeed(value: unknown): ParsedSeed {
  const parsed = seedSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') || '(root)';
    throw ledgerErrors.invalidSeed(`${path}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

export async function readSeedFile(path: string): Promise<ParsedSeed> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw ledgerErrors.invalidSeed(`${path}: ${(error as Error).message}`);
  }
  return parseSeed(value);
}

/** Key of the advisory lock that keeps processes seeding together from racing. */
const SEED_LOCK = '7203641192';

export async function applySeed(db: Database, seed: Seed): Promise<SeedResult> {
  const parsed = parseSeed(seed);
  // Checked before the transaction: a zone the database refuses would abort it.
  for (const [i, customer] of parsed.customers.entries()) {
    if (customer.timeZone !== undefined && !(await checkTimeZone(db, customer.timeZone))) {
      throw ledgerErrors.invalidSeed(
        `customers.${i}.timeZone: ${JSON.stringify(customer.timeZone)} is not a time zone name like Europe/Brussels`,
      );
    }
  }
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [SEED_LOCK]);
    const result: SeedResult = { customers: [], keysAdded: 0 };
    for (const customer of parsed.customers) {
      const existing = customer.id
        ? await tx.query<CustomerRow>(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = $1`, [
            customer.id,
          ])
        : await tx.query<CustomerRow>(
            `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE name = $1 ORDER BY created_at, id LIMIT 1`,
            [customer.name],
          );
      let customerId = existing.rows[0]?.id;
      result.customers.push({
        customerId: customerId ?? '',
        name: customer.name,
        created: customerId === undefined,
      });
      if (customerId === undefined) {
        customerId = customer.id?.toLowerCase() ?? randomUUID();
        await tx.query(
          `INSERT INTO customers (id, name, credits, credit_cost, time_zone)
           VALUES ($1, $2, 0, $3, $4)`,
          [
            customerId,
            customer.name,
            formatDecimal(parseDecimal(customer.creditCost) ?? 0n),
            customer.timeZone?.trim() ?? 'UTC',
          ],
        );
        if (customer.credits > 0) {
          await changeBalance(tx, customerId, BigInt(customer.credits), 'open', null);
        }
        if (customer.float) {
          const float = customer.float;
          await tx.query(
            `UPDATE customers SET float_size = $2, float_low_water = $3, float_offline_cap = $4,
               float_offline_limit_s = $5, float_card_types = $6 WHERE id = $1`,
            [
              customerId,
              float.size,
              float.lowWater,
              float.offlineCap,
              float.offlineLimitSeconds,
              [...new Set(float.cardTypes)].sort(),
            ],
          );
        }
        const last = result.customers[result.customers.length - 1];
        if (last) last.customerId = customerId;
      }
      for (const key of customer.keys) {
        result.keysAdded += await addSeedKey(tx, key, customerId, false);
      }
    }
    for (const key of parsed.unassignedKeys) {
      result.keysAdded += await addSeedKey(tx, key, null, false);
    }
    for (const key of parsed.revokedKeys) {
      result.keysAdded += await addSeedKey(tx, key, null, true);
    }
    return result;
  });
}

/** Registers a key unless it is registered already; a key bound elsewhere is a conflict. */
async function addSeedKey(
  tx: Queryable,
  key: string,
  customerId: string | null,
  revoked: boolean,
): Promise<number> {
  const hash = hashApiKey(key);
  const { rows } = await tx.query<{ customer_id: string | null }>(
    'SELECT customer_id FROM api_keys WHERE key_hash = $1',
    [hash],
  );
  const existing = rows[0];
  if (existing) {
    if (customerId !== null && existing.customer_id !== customerId) {
      throw ledgerErrors.keyConflict(
        `a seed key of customer ${customerId} is registered for ${existing.customer_id ?? 'no customer'}`,
      );
    }
    return 0;
  }
  await tx.query(
    `INSERT INTO api_keys (key_hash, customer_id, assigned_at, revoked_at)
     VALUES ($1, $2::uuid, CASE WHEN $2::uuid IS NULL THEN NULL ELSE now() END,
             CASE WHEN $3::boolean THEN now() ELSE NULL END)`,
    [hash, customerId, revoked],
  );
  return 1;
}
