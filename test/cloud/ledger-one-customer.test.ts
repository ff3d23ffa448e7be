/**
 * Past one machine, the ledger's tables are sharded by customer (docs/cloud-api.md, "Past one
 * machine"): that works only while no transaction touches two customers. This runs the whole
 * contract suite with the ledger server's database wrapped, so that every statement it sends
 * is seen with its parameters, one unit per transaction (a statement outside one is its own),
 * and then asserts that each unit that reads or writes a customer's data names exactly one
 * customer. Units about API keys alone name none: api_keys is the table every node holds.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { UNKNOWN_SHOP } from './ledger-card-rules-suite.ts';
import { defineLedgerSuite } from './ledger-suite.ts';
import { watchedDatabase, type Unit } from './watched-database.ts';

const units: Unit[] = [];
/**
 * Every customer the ledger acted for: what its key look-ups answered, and the shop no ledger
 * holds that the suite asks the blocklist feed for (a public path names its shop, no key).
 */
const customers = new Set<string>([UNKNOWN_SHOP]);

const recording = (db: Database) =>
  watchedDatabase(db, {
    unit: (unit) => units.push(unit),
    answered: (sql, rows) => {
      if (!sql.includes('FROM api_keys')) return;
      for (const row of rows as { customer_id?: unknown }[]) {
        if (typeof row.customer_id === 'string') customers.add(row.customer_id);
      }
    },
  });

let folder = '';
defineLedgerSuite('the contract suite, its statements recorded (PGlite)', async () => {
  folder = await freshPgliteFolder();
  return {
    database: folder,
    observe: recording,
    cleanup: async () => rmSync(folder, { recursive: true, force: true }),
  };
});

/** Tables (and the functions over them) that hold a customer's data: sharded by customer. */
const CUSTOMER_DATA =
  /\b(customers|movements|ledger_entries|card_accounts|card_imports|card_flags|void_tombstones|tills|floats|float_topups|float_entries|bonus_tiers|card_blocks|card_changes|card_holders|blocklist_keys|ledger_create_movement|ledger_create_card_movement|ledger_resolve_movement|ledger_open_float|ledger_top_up_float|ledger_report_float_movements|ledger_close_float|ledger_float_view|ledger_block_card|ledger_replace_card|ledger_correct_card|ledger_cancel_card_change|ledger_card_change_view|ledger_card_block_view)\b/;

test('when the contract suite has run, then every transaction of the ledger that touches customer data names exactly one customer', () => {
  assert.ok(customers.size > 3, "the ledger acted for the suite's customers");
  const known = customers;
  const calls = units.flatMap((unit) => unit.statements.map((statement) => statement.sql));
  assert.ok(
    calls.some((sql) => sql.includes('ledger_create_movement')) &&
      calls.some((sql) => sql.includes('ledger_resolve_movement')),
    'the contract calls went through the recorded database',
  );
  const customersOf = (params: readonly unknown[]) =>
    params.filter((param): param is string => typeof param === 'string' && known.has(param));
  // A transaction names at most one customer, and each of its statements that reads or writes
  // customer data names exactly that one (a statement naming none would read every customer's).
  const offending = units.filter((unit) => {
    const named = new Set(unit.statements.flatMap((statement) => customersOf(statement.params)));
    return (
      named.size > 1 ||
      unit.statements.some(
        (statement) =>
          CUSTOMER_DATA.test(statement.sql) && new Set(customersOf(statement.params)).size !== 1,
      )
    );
  });
  assert.deepEqual(
    offending.map((unit) =>
      unit.statements.map(
        (statement) =>
          `${statement.sql.replace(/\s+/g, ' ')} [customers: ${customersOf(statement.params).join(', ')}]`,
      ),
    ),
    [],
    `of ${units.length} transactions`,
  );
});

test("when the schema is migrated, then every table is keyed by its customer, but the provider's own (api_keys, the console's accounts, sessions and secret, replicated to every node) and the schema's own (schema_migrations, schema_routines)", async () => {
  const folder = await freshPgliteFolder();
  const db = await openDatabase(folder);
  try {
    const { rows } = await db.query<{ table: string; first: string | null }>(
      `SELECT c.relname AS table,
              (SELECT a.attname FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
               WHERE i.indrelid = c.oid AND i.indisprimary) AS first
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r'
       ORDER BY c.relname`,
    );
    const keyedBy = Object.fromEntries(rows.map((row) => [row.table, row.first]));
    assert.deepEqual(keyedBy, {
      api_keys: 'key_hash',
      audit_log: 'customer_id',
      audit_log_start: 'only_row',
      console_secret: 'only_row',
      console_sessions: 'id_hash',
      console_setup_links: 'customer_id',
      operator_shops: 'customer_id',
      operators: 'id',
      blocklist_keys: 'customer_id',
      bonus_tiers: 'customer_id',
      card_accounts: 'customer_id',
      card_blocks: 'customer_id',
      card_changes: 'customer_id',
      card_holders: 'customer_id',
      card_flags: 'customer_id',
      card_imports: 'customer_id',
      customers: 'id',
      daily_takings: 'customer_id',
      float_entries: 'customer_id',
      float_topups: 'customer_id',
      floats: 'customer_id',
      ledger_entries: 'customer_id',
      movements: 'customer_id',
      schema_migrations: 'version',
      schema_routines: 'only_row',
      tills: 'customer_id',
      void_tombstones: 'customer_id',
    });
  } finally {
    await db.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
