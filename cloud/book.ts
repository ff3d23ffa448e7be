import type { Queryable } from './db/database.ts';

/**
 * The one book of a shop (docs/cloud-api.md, "The shop's book"): every credit of the shop sits
 * in exactly one of these accounts, each read from where the ledger keeps it, and every
 * movement moves credits between two of them, so they always sum to zero. Sources (what
 * credits came from) count negative, everything holding or having received credits positive.
 */
export interface ShopBook {
  customerId: string;
  accounts: {
    /** Credits the shop bought from the provider (customer add and top-ups): a source. */
    provider: bigint;
    /** The pool. */
    pool: bigint;
    /** Reserved by pending recharges (of the pool, or a float's undecided card writes). */
    reserved: bigint;
    /**
     * Taken from cards' accounts by pending payouts, refunds and corrections, on their way back
     * to the pool.
     */
    payingOut: bigint;
    /** What the tills' floats hold. */
    floats: bigint;
    /** What the shop has put on its cards (their accounts, bonus credits included). */
    cards: bigint;
    /** Blocked cards' accounts moved to replacements still waiting for their new card. */
    waiting: bigint;
    /** Balances of cards sold before the ledger (card import): a source. */
    imported: bigint;
    /** Paid out before card accounts existed, written off by migration 3: a source. */
    legacyOverdraw: bigint;
    /** Written off at float closes: credits sold from floats without a report. */
    floatWrittenOff: bigint;
    /** Taken by float recharges beyond their float: a source. */
    floatOverdrawn: bigint;
  };
  /** Zero when the book holds. */
  sum: bigint;
}

type Row = { customer_id: string } & Record<keyof ShopBook['accounts'], string | number>;

/** Every shop's book, from one snapshot (the caller's transaction). */
export async function readShopBooks(tx: Queryable): Promise<ShopBook[]> {
  const { rows } = await tx.query<Row>(
    `SELECT c.id AS customer_id,
       -(SELECT COALESCE(sum(delta), 0) FROM ledger_entries e
         WHERE e.customer_id = c.id AND e.operation IN ('open', 'topup')) AS provider,
       c.credits AS pool,
       (SELECT COALESCE(sum(credits), 0) FROM movements m
        WHERE m.customer_id = c.id AND m.state = 'pending' AND m.kind = 'recharge') AS reserved,
       (SELECT COALESCE(sum(credits), 0) FROM movements m
        WHERE m.customer_id = c.id AND m.state = 'pending'
          AND m.kind IN ('discharge', 'refund', 'correction')) AS "payingOut",
       (SELECT COALESCE(sum(credits), 0) FROM floats f WHERE f.customer_id = c.id) AS floats,
       (SELECT COALESCE(sum(credits), 0) FROM card_accounts a WHERE a.customer_id = c.id) AS cards,
       (SELECT COALESCE(sum(credits), 0) FROM card_changes w
        WHERE w.customer_id = c.id AND w.kind = 'replacement' AND w.state = 'waiting') AS waiting,
       -(SELECT COALESCE(sum(credits), 0) FROM card_imports i WHERE i.customer_id = c.id)
         AS imported,
       -(SELECT COALESCE(sum(legacy_overdraw), 0) FROM card_accounts a WHERE a.customer_id = c.id)
         AS "legacyOverdraw",
       (SELECT COALESCE(sum(written_off), 0) FROM floats f WHERE f.customer_id = c.id)
         AS "floatWrittenOff",
       -(SELECT COALESCE(sum(overdrawn), 0) FROM floats f WHERE f.customer_id = c.id)
         AS "floatOverdrawn"
     FROM customers c ORDER BY c.id`,
  );
  return rows.map((row) => {
    const accounts = {
      provider: BigInt(row.provider),
      pool: BigInt(row.pool),
      reserved: BigInt(row.reserved),
      payingOut: BigInt(row.payingOut),
      floats: BigInt(row.floats),
      cards: BigInt(row.cards),
      waiting: BigInt(row.waiting),
      imported: BigInt(row.imported),
      legacyOverdraw: BigInt(row.legacyOverdraw),
      floatWrittenOff: BigInt(row.floatWrittenOff),
      floatOverdrawn: BigInt(row.floatOverdrawn),
    };
    const sum = Object.values(accounts).reduce((total, value) => total + value, 0n);
    return { customerId: row.customer_id, accounts, sum };
  });
}
