import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { addCustomer, resolveByOperator, topUp } from '../../cloud/admin.ts';
import {
  appendAudit,
  auditHash,
  AuditReasonMissing,
  listAudit,
} from '../../cloud/audit/audit-log.ts';
import { checkLedger } from '../../cloud/check.ts';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { changeBalance } from '../../cloud/records.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { postgresLedgerForSuite } from '../support/postgres.ts';

// The audit log: one hash chain per shop (and the provider's), appended in the transaction of
// the action it records; check proves every chain intact and every operator decision and top-up
// recorded, and names what is not.

const CLI = { actor: { kind: 'cli' as const, user: 'test' } };

/** Runs `sql` with the append-only triggers off, as someone with the database's keys could. */
async function behindTheLedger(db: Database, sql: string, params: unknown[] = []): Promise<void> {
  await db.exec('ALTER TABLE audit_log DISABLE TRIGGER USER');
  try {
    await db.query(sql, params);
  } finally {
    await db.exec('ALTER TABLE audit_log ENABLE TRIGGER USER');
  }
}

async function newShop(db: Database): Promise<string> {
  return (await addCustomer(db, { name: `Shop ${randomUUID()}`, credits: 100, creditCost: 5000n }))
    .customerId;
}

describe('the audit log (PGlite)', () => {
  let folder: string;
  let db: Database;

  before(async () => {
    folder = await freshPgliteFolder();
    db = await openDatabase(folder);
  });
  after(async () => {
    await db?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test('when operators top up and decide without the card, then each action has its row with who, why and what, chained per shop, and check passes', async () => {
    const shop = await newShop(db);
    await topUp(db, shop, 50, { ...CLI, reason: 'invoice 12 paid' });
    const id = randomUUID();
    const ledger = new Ledger(db);
    await ledger.createMovement(shop, { id, kind: 'recharge', cardId: '04A1B2C3', credits: 5 });
    await resolveByOperator(
      db,
      { customerId: shop, id, target: 'voided', evidence: 'card reported lost' },
      CLI,
    );
    // A replay of the same decision is no new action.
    await resolveByOperator(
      db,
      { customerId: shop, id, target: 'voided', evidence: 'card reported lost' },
      CLI,
    );
    const rows = await listAudit(db, { customerIds: [shop] });
    assert.deepEqual(
      rows.map((row) => [row.seq, row.actor, row.action, row.reason]),
      [
        [2, 'cli:test', 'movement.void', 'card reported lost'],
        [1, 'cli:test', 'pool.top-up', 'invoice 12 paid'],
      ],
    );
    assert.equal(rows[0]?.prevHash, rows[1]?.hash);
    assert.equal(rows[0]?.subject, id);
    const report = await checkLedger(db);
    assert.deepEqual(report.problems, []);
    assert.ok(report.operatorActions >= 2);
  });

  test('when an action that moves money or changes a key has no reason, then it is refused and nothing of it is written', async () => {
    const shop = await newShop(db);
    await assert.rejects(
      db.transaction((tx) =>
        appendAudit(tx, { ...CLI, customerId: shop, action: 'key.revoke', reason: '  ' }),
      ),
      AuditReasonMissing,
    );
    await assert.rejects(topUp(db, shop, 5, { ...CLI, reason: null }), AuditReasonMissing);
    const { rows } = await db.query<{ credits: string | number }>(
      'SELECT credits FROM customers WHERE id = $1',
      [shop],
    );
    assert.equal(Number(rows[0]?.credits), 100, 'the top-up without a reason did not happen');
  });

  test('when a row is changed or a row is taken out, then check names the shop and the row', async () => {
    const shop = await newShop(db);
    for (const credits of [1, 2, 3, 4]) {
      await topUp(db, shop, credits, { ...CLI, reason: `top-up ${credits}` });
    }
    assert.deepEqual((await checkLedger(db)).problems, []);

    await behindTheLedger(
      db,
      `UPDATE audit_log SET reason = 'nothing to see' WHERE customer_id = $1 AND seq = 2`,
      [shop],
    );
    assert.deepEqual(
      (await checkLedger(db)).problems.filter((problem) => problem.includes(shop)),
      [`audit log, shop ${shop}: row 2 was changed after it was written`],
    );

    await behindTheLedger(db, 'DELETE FROM audit_log WHERE customer_id = $1 AND seq = 3', [shop]);
    const afterDelete = (await checkLedger(db)).problems.filter((p) => p.includes(shop));
    assert.ok(
      afterDelete.includes(`audit log, shop ${shop}: row 3 is missing (the next row is 4)`),
    );
    assert.ok(
      afterDelete.includes(`audit log, shop ${shop}: row 4 does not chain to the row before it`),
    );
    // The top-up whose row went is also named as unrecorded.
    assert.ok(
      afterDelete.some((p) => /top-up entry \d+ of customer .* has no audit log row/.test(p)),
    );
  });

  test('when a row is rewritten with a hash made anew, then the next row no longer chains to it', async () => {
    const shop = await newShop(db);
    for (const credits of [1, 2, 3]) {
      await topUp(db, shop, credits, { ...CLI, reason: `top-up ${credits}` });
    }
    const second = (await listAudit(db, { customerIds: [shop] })).find((row) => row.seq === 2);
    assert.ok(second);
    const { hash: _old, ...fields } = { ...second, reason: 'a reason nobody gave' };
    await behindTheLedger(
      db,
      'UPDATE audit_log SET reason = $3, hash = $4 WHERE customer_id = $1 AND seq = $2',
      [shop, 2, fields.reason, auditHash(fields)],
    );
    assert.deepEqual(
      (await checkLedger(db)).problems.filter((problem) => problem.includes(`shop ${shop}`)),
      [`audit log, shop ${shop}: row 3 does not chain to the row before it`],
    );
  });

  test('when a decision without a till or a top-up reaches the database without its row, then check names it', async () => {
    const shop = await newShop(db);
    const id = randomUUID();
    const ledger = new Ledger(db);
    await ledger.createMovement(shop, { id, kind: 'recharge', cardId: '04A1B2C4', credits: 5 });
    // The contract's function called directly: the operator's word with no audit row.
    await db.query(`SELECT * FROM ledger_resolve_movement($1, $2, 'voided', NULL, 'lost', NULL)`, [
      shop,
      id,
    ]);
    await db.transaction((tx) => changeBalance(tx, shop, 7n, 'topup', null));
    const problems = (await checkLedger(db)).problems.filter((problem) => problem.includes(shop));
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(
      problems[0] ?? '',
      new RegExp(
        `movement ${id} of customer ${shop} was decided by an operator without an audit log row`,
      ),
    );
    assert.match(problems[1] ?? '', /top-up entry \d+ of customer .* has no audit log row/);
  });

  test('when an operator close of a float reaches the database without its row, then check names the float; through the ledger it has its row', async () => {
    const shop = await newShop(db);
    await db.query('UPDATE customers SET float_size = 50 WHERE id = $1', [shop]);
    const floats = new Ledger(db).floats;
    const open = async () =>
      (await floats.open(shop, { tillId: randomUUID(), requestId: randomUUID(), ids: 1 })).float;
    const bare = await open();
    // The contract's function called directly: the operator's close with no audit row.
    await db.query(`SELECT ledger_close_float($1, $2, NULL, '[]'::jsonb, 10, 'stolen')`, [
      shop,
      bare.id,
    ]);
    const audited = await open();
    await floats.closeByOperator(
      shop,
      audited.id,
      { movements: [], writeOff: 0, reason: null },
      CLI.actor,
    );
    const problems = (await checkLedger(db)).problems.filter((problem) => problem.includes(shop));
    assert.deepEqual(problems, [
      `float ${bare.id} of customer ${shop} was closed by an operator without an audit log row`,
    ]);
    const rows = await listAudit(db, { customerIds: [shop] });
    assert.deepEqual(
      rows.map((row) => [row.actor, row.action, row.subject]),
      [['cli:test', 'float.close', `float:${audited.id}`]],
    );
    await assert.rejects(
      floats.closeByOperator(shop, (await open()).id, { movements: [], writeOff: 5, reason: ' ' }),
      AuditReasonMissing,
    );
    const { rows: open1 } = await db.query(
      `SELECT 1 FROM floats WHERE customer_id = $1 AND state = 'open'`,
      [shop],
    );
    assert.equal(open1.length, 1, 'the write-off without a reason closed nothing');
  });

  test('when the audit log is updated, deleted or truncated through the ledger role, then the database refuses it', async () => {
    for (const sql of [
      'UPDATE audit_log SET reason = NULL',
      'DELETE FROM audit_log',
      'TRUNCATE audit_log',
    ]) {
      await assert.rejects(db.query(sql), /audit_log is append-only/, sql);
    }
  });
});

describe('the audit log (PostgreSQL, concurrent appends)', () => {
  const postgres = postgresLedgerForSuite({ poolSize: 8 });

  test('when 24 actions of one shop and 24 of another append at once over 8 connections, then each chain has 24 rows in order, none forked, and check passes', async () => {
    const shops = [await newShop(postgres.db), await newShop(postgres.db)];
    // Actions that lock nothing else (a till renamed, a key revoked): only the chain's lock
    // keeps two of them from taking the same place in it.
    await Promise.all(
      Array.from({ length: 48 }, (_, i) =>
        postgres.db.transaction((tx) =>
          appendAudit(tx, {
            ...CLI,
            customerId: shops[i % 2] as string,
            action: 'till.rename',
            subject: `till ${i}`,
          }),
        ),
      ),
    );
    for (const shop of shops) {
      const rows = await listAudit(postgres.db, { customerIds: [shop], limit: 100 });
      assert.deepEqual(
        rows.map((row) => row.seq),
        Array.from({ length: 24 }, (_, i) => 24 - i),
      );
    }
    assert.deepEqual((await checkLedger(postgres.db)).problems, []);
  });
});
