/**
 * Migration 3 on a database that already has movements: each card gets the account its
 * movements imply, and a card that was paid out more than it was loaded (possible before card
 * accounts existed) starts at 0, its overdraw written off and flagged.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readCardAccount } from '../../cloud/card-accounts.ts';
import { checkLedger } from '../../cloud/check.ts';
import { migrate } from '../../cloud/db/migrate.ts';
import { migration001 } from '../../cloud/db/migrations/001-initial.ts';
import { openPgliteDatabase } from '../../cloud/db/pglite-database.ts';

test('when migration 3 meets cards moved before it, then each gets the account its movements imply and an overdrawn one starts at 0, flagged', async () => {
  // A new database, not the test template (which is migrated to the newest version already).
  const folder = mkdtempSync(join(tmpdir(), 'cww-migration-'));
  const db = await openPgliteDatabase(join(folder, 'db'), { template: false });
  try {
    await migrate(db, [migration001]);
    const shop = randomUUID();
    await db.query(
      "INSERT INTO customers (id, name, credits, credit_cost) VALUES ($1, 'Old shop', 70, 1)",
      [shop],
    );
    // A consistent history: open 100; X loaded 10 then paid out 30 (the old hole); Y loaded 50,
    // a discharge of 20 pending; Z: a pending recharge only.
    const history: [string, 'recharge' | 'discharge', string, number, string | null, number][] = [
      ['04000001', 'recharge', 'posted', 10, 'reserve', -10],
      ['04000001', 'discharge', 'posted', 30, 'return', 30],
      ['04000002', 'recharge', 'posted', 50, 'reserve', -50],
      ['04000002', 'discharge', 'pending', 20, null, 0],
      ['04000003', 'recharge', 'pending', 40, 'reserve', -40],
    ];
    let balance = 100;
    await db.query(
      "INSERT INTO ledger_entries (customer_id, operation, delta, balance_after) VALUES ($1, 'open', 100, 100)",
      [shop],
    );
    for (const [cardId, kind, state, credits, operation, delta] of history) {
      const id = randomUUID();
      await db.query(
        `INSERT INTO movements (id, customer_id, kind, card_id, state, credits, credit_cost, resolved_at)
         VALUES ($1, $2, $3, $4, $5, $6, 1, CASE WHEN $5 = 'pending' THEN NULL ELSE now() END)`,
        [id, shop, kind, cardId, state, credits],
      );
      if (operation) {
        balance += delta;
        await db.query(
          `INSERT INTO ledger_entries (customer_id, movement_id, operation, delta, balance_after)
           VALUES ($1, $2, $3, $4, $5)`,
          [shop, id, operation, delta, balance],
        );
      }
    }
    await db.query('UPDATE customers SET credits = $2 WHERE id = $1', [shop, balance]);

    assert.ok((await migrate(db)).includes(3), 'migration 3 ran');

    const overdrawn = await readCardAccount(db, shop, '04000001');
    assert.equal(overdrawn.credits, 0);
    assert.equal(overdrawn.suspect, true);
    assert.deepEqual(
      overdrawn.flags.map(({ kind, accountCredits }) => ({ kind, accountCredits })),
      [{ kind: 'overdrawn-before-accounts', accountCredits: -20 }],
    );
    const pending = await readCardAccount(db, shop, '04000002');
    assert.equal(pending.credits, 30, 'posted 50 minus the pending discharge of 20');
    assert.equal(pending.suspect, false);
    assert.equal((await readCardAccount(db, shop, '04000003')).credits, 0);

    const report = await checkLedger(db);
    assert.deepEqual(report.problems, []);
    assert.equal(report.cards, 3);
  } finally {
    await db.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
