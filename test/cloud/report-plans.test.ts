import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { addCustomer } from '../../cloud/admin.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import { postgresLedgerForSuite } from '../support/postgres.ts';

// A float report's statements are planned once per connection and the plans kept. Planned
// while the tables were small (a new ledger, or a ledger process started early in a bench),
// the test of whether a reported id is already recorded was a hashed NOT EXISTS: one scan of
// every movement per report, kept as the table grew, so that a report cost 4 times as much
// after a few minutes (bench/float-reports.ts, docs/benchmarks.md). No plan of a report may
// scan a table that grows with the ledger's history: what each statement ran is read from
// auto_explain's log (nested statements, foreign-key checks and triggers included).

const postgres = postgresLedgerForSuite({ poolSize: 2 });

/** The plans of every statement `work` runs on a connection of its own, as auto_explain logs them. */
async function plansOf(work: (client: pg.Client) => Promise<unknown>): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgres.url });
  const plans: string[] = [];
  client.on('notice', (notice) => {
    const message = notice.message ?? '';
    if (message.includes('plan:')) plans.push(message);
  });
  await client.connect();
  try {
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 0`);
    await client.query(`SET auto_explain.log_nested_statements = on`);
    await client.query(`SET client_min_messages = log`);
    await work(client);
    return plans;
  } finally {
    await client.end();
  }
}

test('when a till reports float movements to a new ledger, then no statement of the report scans every movement, float entry or card account', async () => {
  const shop = (
    await addCustomer(postgres.db, { name: 'New ledger', credits: 5000, creditCost: 5000n })
  ).customerId;
  await setFloatSettings(postgres.db, shop, { size: 1000, lowWater: 100 });
  const till = randomUUID();
  const float = (
    await new Floats(postgres.db).open(shop, { tillId: till, requestId: randomUUID(), ids: 20 })
  ).float;
  const movements = Array.from({ length: 10 }, (_, i) => ({
    id: floatMovementId(float.idPrefix, i + 1),
    cardId: `06AB${String(i).padStart(4, '0')}`,
    credits: 5,
    card: 'written',
    creditCost: '0.50',
    occurredAt: new Date().toISOString(),
    cardBefore: 'classic:v1:blank',
  }));

  let answer: unknown;
  const plans = await plansOf(async (client) => {
    const result = await client.query<{ answer: unknown }>(
      'SELECT ledger_report_float_movements($1, $2, $3::jsonb) AS answer',
      [shop, till, JSON.stringify(movements)],
    );
    answer = result.rows[0]?.answer;
  });

  const results = (answer as { results: { outcome: string }[] }).results;
  assert.deepEqual(
    results.map((r) => r.outcome),
    movements.map(() => 'recorded'),
    JSON.stringify(answer),
  );
  assert.ok(plans.length > 3, `auto_explain logged ${plans.length} plans`);
  const scans = plans.filter((plan) =>
    /Seq Scan on (movements|float_entries|card_accounts)\b/.test(plan),
  );
  assert.deepEqual(scans, [], 'a statement of the report scans a whole table');
});
