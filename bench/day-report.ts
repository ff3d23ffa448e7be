/**
 * The back office's day report and takings chart on a provider-sized ledger (docs/benchmarks.md,
 * "Day reports"). A PostgreSQL server started here holds 10 million movements over 10 000
 * shops, skewed as a real provider's are: the largest shop (a chain of laundromats) holds 1
 * million over three years, the rest share the other 9 million unevenly. The data is made by
 * SQL (generate_series), the indexes but the primary key built after it (as the migrations
 * define them), then VACUUM ANALYZE, as a ledger that has run a while would be.
 *
 * The posts' counting triggers are off during the load, as for any bulk load, and the daily
 * takings are counted from the movements after it (`ledger_rebuild_daily_takings(NULL)`, what
 * migration 10 does for an existing ledger), then proven equal to them (the check's query).
 *
 * In one run, alternating rounds so a drift of the machine's load weighs on every side:
 *
 * - the day report of the largest shop's busiest day, as the console, the CLI and the API make
 *   it (`dayReport`: its snapshot, the day's totals by till, kind and compensation from
 *   daily_takings, pending and voided ones, names), and its 365-day chart (`takingsByDay`);
 * - the same figures computed from the movements by a sequential scan (a connection whose
 *   planner may use no index), what a ledger without daily_takings would have to do;
 * - and, for scale, the same from the movements with the planner free to choose (no index of
 *   the ledger covers occurred_at: on this data it scans the table too).
 *
 * Targets: the day report's p95 under 50 ms and at least 20 x faster than the scan (median of
 * the scans over the report's p95); the 365-day chart's p95 under 200 ms. Every side's figures
 * are compared: they must be equal.
 *
 *   node --import tsx bench/day-report.ts [--movements 10000000] [--shops 10000]
 *     [--largest 1000000] [--rounds 5] [--reports 20]
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Database, Queryable } from '../cloud/db/database.ts';
import { openDatabase } from '../cloud/db/open-database.ts';
import {
  dayFigures,
  dayReport,
  type StateCountRow,
  type SumRow,
} from '../cloud/reports/day-report.ts';
import {
  addDays,
  takingsByDay,
  takingsSeries,
  type TakingsDay,
  type TakingsRow,
} from '../cloud/reports/takings-chart.ts';
import { tillNames } from '../cloud/tills/tills.ts';
import { checkDailyTakings } from '../cloud/reports/daily-takings-check.ts';
import { readShop, type Shop } from '../cloud/shops/shops.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { median, msSince, percentile, table, verdict } from './measure.ts';

const REPORT_P95_MS = 50;
const REPORT_OVER_SCAN = 20;
const CHART_P95_MS = 200;
const LARGEST = '00000000-0000-4000-8000-000000000001';

const { values } = parseArgs({
  options: {
    movements: { type: 'string', default: '10000000' },
    shops: { type: 'string', default: '10000' },
    largest: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
    reports: { type: 'string', default: '20' },
  },
});
const MOVEMENTS = Number(values.movements);
const SHOPS = Number(values.shops);
const LARGEST_MOVEMENTS = Number(values.largest);
const ROUNDS = Number(values.rounds);
const REPORTS = Number(values.reports);

function timed<T>(what: string, started: bigint, result: T): T {
  console.log(`  ${what}: ${(msSince(started) / 1000).toFixed(1)} s`);
  return result;
}

/**
 * The ledger's schema (every migration), then its data by SQL: shops, and movements made as
 * tills make them (posted with the time their card was written; some pending or voided;
 * recharges and payouts; twenty tills for the largest shop). Indexes are dropped for the load
 * and made again after it, exactly as the migrations define them.
 */
async function load(db: Database): Promise<void> {
  let started = process.hrtime.bigint();
  const { rows: indexes } = await db.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE tablename = 'movements' AND indexname <> 'movements_pkey'`,
  );
  for (const index of indexes) await db.exec(`DROP INDEX ${index.name}`);
  await db.exec('ALTER TABLE movements DISABLE TRIGGER movements_count_posted_insert');
  await db.query('SELECT setseed(0.27)');
  await db.query(
    `INSERT INTO customers (id, name, credits, credit_cost, time_zone)
     SELECT CASE WHEN n = 1 THEN $1::uuid ELSE gen_random_uuid() END,
            CASE WHEN n = 1 THEN 'Laverie Express (chain)' ELSE 'Shop ' || n END,
            1000000, 0.5, 'Europe/Brussels'
     FROM generate_series(1, $2) AS n`,
    [LARGEST, SHOPS],
  );
  timed('shops', started, null);

  // The largest shop: three years of days (1096), more on weekends and before holidays, and a
  // busiest day (2025-12-23) with five times a usual day's sales.
  started = process.hrtime.bigint();
  await db.query(
    `INSERT INTO movements (customer_id, id, kind, card_id, state, credits, credit_cost,
                            created_at, resolved_at, occurred_at, till_id)
     SELECT $1, gen_random_uuid(), kind, card, state, credits, 0.5, at,
            CASE WHEN state = 'pending' THEN NULL ELSE at + interval '2 seconds' END,
            CASE WHEN state = 'posted' THEN at + interval '1 second' END,
            ('00000000-0000-4000-8000-' || lpad(to_hex(1 + (n % 20)), 12, '0'))::uuid
     FROM (
       SELECT n,
              CASE WHEN random() < 0.15 THEN 'discharge' ELSE 'recharge' END AS kind,
              upper(lpad(to_hex((random() * 2147483647)::int), 8, '0')) AS card,
              CASE WHEN random() < 0.01 THEN 'pending' WHEN random() < 0.02 THEN 'voided'
                   ELSE 'posted' END AS state,
              5 + (random() * 95)::int AS credits,
              CASE WHEN n <= $2 / 200
                   THEN timestamptz '2025-12-23 07:00:00+01' + (n * interval '13 hours') / ($2 / 200)
                   ELSE timestamptz '2023-12-01 00:00:00+01'
                        + ((n - $2 / 200) * interval '1096 days') / ($2 - $2 / 200)
                        + interval '8 hours' * random()
              END AS at
       FROM generate_series(1, $2) AS n) m`,
    [LARGEST, LARGEST_MOVEMENTS],
  );
  timed(`the largest shop's ${LARGEST_MOVEMENTS} movements`, started, null);

  // Everyone else: skewed (a few shops hold much, most little), over the same three years.
  started = process.hrtime.bigint();
  const rest = MOVEMENTS - LARGEST_MOVEMENTS;
  const batch = 1_000_000;
  for (let from = 0; from < rest; from += batch) {
    await db.query(
      `WITH shops AS (SELECT array_agg(id ORDER BY name) AS ids FROM customers WHERE id <> $1)
       INSERT INTO movements (customer_id, id, kind, card_id, state, credits, credit_cost,
                              created_at, resolved_at, occurred_at)
       SELECT ids[1 + floor(power(random(), 2.5) * (array_length(ids, 1)))::int],
              gen_random_uuid(), kind, card, state, credits, 0.5, at,
              CASE WHEN state = 'pending' THEN NULL ELSE at + interval '2 seconds' END,
              CASE WHEN state = 'posted' THEN at + interval '1 second' END
       FROM shops, (
         SELECT CASE WHEN random() < 0.15 THEN 'discharge' ELSE 'recharge' END AS kind,
                upper(lpad(to_hex((random() * 2147483647)::int), 8, '0')) AS card,
                CASE WHEN random() < 0.01 THEN 'pending' WHEN random() < 0.02 THEN 'voided'
                     ELSE 'posted' END AS state,
                5 + (random() * 95)::int AS credits,
                timestamptz '2023-12-01 00:00:00+01' + random() * interval '1096 days' AS at
         FROM generate_series(1, $2) AS n) m`,
      [LARGEST, Math.min(batch, rest - from)],
    );
    process.stdout.write(`  ${Math.min(from + batch, rest)} of ${rest}\r`);
  }
  timed(`\n  the other shops' ${rest} movements`, started, null);

  started = process.hrtime.bigint();
  for (const index of indexes) await db.exec(index.definition);
  timed(`the ${indexes.length} other indexes`, started, null);
  started = process.hrtime.bigint();
  await db.query('SELECT ledger_rebuild_daily_takings(NULL)');
  await db.exec('ALTER TABLE movements ENABLE TRIGGER movements_count_posted_insert');
  timed('the daily takings counted from the movements', started, null);
  started = process.hrtime.bigint();
  await db.exec('VACUUM ANALYZE movements');
  await db.exec('VACUUM ANALYZE customers');
  await db.exec('VACUUM ANALYZE daily_takings');
  timed('vacuum analyze', started, null);
  started = process.hrtime.bigint();
  const { problems } = await checkDailyTakings(db);
  if (problems.length > 0) throw new Error(`daily takings differ:\n${problems.join('\n')}`);
  timed("check: the daily takings are the movements'", started, null);
}

/** The busiest local day of the shop, by its posted movements. */
async function busiestDay(db: Queryable, shop: Shop): Promise<string> {
  const { rows } = await db.query<{ day: string }>(
    `SELECT to_char(occurred_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day FROM movements
     WHERE customer_id = $1 AND state = 'posted' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    [shop.id, shop.timeZone],
  );
  return rows[0]?.day as string;
}

/**
 * A second connection to the same database whose planner may use no index: the figures read
 * from the movements by a sequential scan. (Set for the connection, not per transaction: the
 * statements are prepared once per connection, with the plan of the settings then.)
 */
function withoutIndexes(url: string): string {
  const options = ['enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan']
    .map((setting) => `-c ${setting}=off`)
    .join(' ');
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(options)}`;
}

const DAY_SUMS_SQL = `SELECT till_id, kind, compensates IS NOT NULL AS compensation, count(*) AS count,
         sum(credits) AS credits, sum(amount) AS euros, sum(bonus_credits) AS bonus_credits
  FROM movements
  WHERE customer_id = $1 AND state = 'posted'
    AND occurred_at >= ledger_local_day_start($2, $3::date)
    AND occurred_at < ledger_local_day_start($2, $3::date + 1)
  GROUP BY 1, 2, 3`;

/** The day's figures (totals and per till) read from the movements, without daily_takings. */
async function dayFromMovements(db: Database, shop: Shop, date: string): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const sums = await tx.query<SumRow>(DAY_SUMS_SQL, [shop.id, shop.timeZone, date]);
    const counts = await tx.query<StateCountRow>(
      `SELECT till_id, state, count(*) AS count FROM movements
       WHERE customer_id = $1 AND state IN ('pending', 'voided')
         AND created_at >= ledger_local_day_start($2, $3::date)
         AND created_at < ledger_local_day_start($2, $3::date + 1)
       GROUP BY 1, 2`,
      [shop.id, shop.timeZone, date],
    );
    return JSON.stringify(dayFigures(sums.rows, counts.rows, await tillNames(tx, shop.id)));
  });
}

/** The 365-day chart read from the movements, without daily_takings. */
async function chartFromMovements(
  db: Queryable,
  shop: Shop,
  lastDate: string,
  days: number,
): Promise<TakingsDay[]> {
  const firstDate = addDays(lastDate, 1 - days);
  const { rows } = await db.query<TakingsRow>(
    `SELECT (occurred_at AT TIME ZONE $2)::date::text AS day,
            sum(amount) FILTER (WHERE kind = 'recharge') AS taken,
            sum(amount) FILTER (WHERE kind = 'discharge') AS paid_out,
            count(*) AS movements
     FROM movements
     WHERE customer_id = $1 AND state = 'posted'
       AND occurred_at >= ledger_local_day_start($2, $3::date)
       AND occurred_at < ledger_local_day_start($2, $4::date + 1)
     GROUP BY 1`,
    [shop.id, shop.timeZone, firstDate, lastDate],
  );
  return takingsSeries(firstDate, days, rows);
}

interface Side {
  name: string;
  report: () => Promise<unknown>;
  chart: () => Promise<unknown>;
  reports: number[];
  charts: number[];
}

async function timedRun(run: () => Promise<unknown>, into: number[]): Promise<void> {
  const started = process.hrtime.bigint();
  await run();
  into.push(msSince(started));
}

function row(what: string, runs: number[], digits: number): (string | number)[] {
  return [
    what,
    runs.length,
    median(runs).toFixed(digits),
    percentile(runs, 95).toFixed(digits),
    Math.max(...runs).toFixed(digits),
  ];
}

async function main(): Promise<void> {
  console.log(
    `${cpus().length} CPUs, load ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}; ${MOVEMENTS} movements over ${SHOPS} shops, the largest ${LARGEST_MOVEMENTS}`,
  );
  const postgres = await startPostgres({
    settings: { shared_buffers: '512MB', max_wal_size: '4GB', maintenance_work_mem: '512MB' },
  });
  const db = await openDatabase(postgres.url, { poolSize: 2 });
  let scanDb: Database | undefined;
  try {
    await load(db);
    scanDb = await openDatabase(withoutIndexes(postgres.url), { poolSize: 1 });
    const shop = await readShop(db, LARGEST);
    const day = await busiestDay(db, shop);
    const { rows: sizes } = await db.query<{ table_size: string; days_size: string; days: string }>(
      `SELECT pg_size_pretty(pg_table_size('movements')) AS table_size,
              pg_size_pretty(pg_total_relation_size('daily_takings')) AS days_size,
              (SELECT count(*) FROM daily_takings) AS days`,
    );
    console.log(
      `busiest day of the largest shop: ${day}; movements ${sizes[0]?.table_size}, ` +
        `daily_takings ${sizes[0]?.days} rows, ${sizes[0]?.days_size} with its key`,
    );

    const scan = scanDb;
    const sides: Side[] = [
      {
        name: 'daily_takings (the ledger)',
        report: () => dayReport(db, shop, day),
        chart: () => takingsByDay(db, shop, day, 365),
        reports: [],
        charts: [],
      },
      {
        name: 'movements, sequential scan',
        report: () => dayFromMovements(scan, shop, day),
        chart: () => chartFromMovements(scan, shop, day, 365),
        reports: [],
        charts: [],
      },
      {
        name: "movements, the planner's choice",
        report: () => dayFromMovements(db, shop, day),
        chart: () => chartFromMovements(db, shop, day, 365),
        reports: [],
        charts: [],
      },
    ];
    const [ledger, seqScan, plannerSide] = sides as [Side, Side, Side];

    // Warm-up, and every side's figures compared: the day's totals per till, and the chart.
    const report = await dayReport(db, shop, day);
    const figures = JSON.stringify({ totals: report.totals, tills: report.tills });
    const chart = JSON.stringify(await takingsByDay(db, shop, day, 365));
    for (const side of [seqScan, plannerSide]) {
      const sideFigures = (await side.report()) as string;
      const sideChart = JSON.stringify(await side.chart());
      if (sideFigures !== figures || sideChart !== chart) {
        throw new Error(`${side.name} disagrees with the ledger's report or chart`);
      }
    }
    for (const [name, q, sql, params] of [
      [
        'the report, daily_takings',
        db,
        'SELECT * FROM daily_takings WHERE customer_id = $1 AND day = $2::date',
        [shop.id, day],
      ],
      ['movements, sequential scan', scan, DAY_SUMS_SQL, [shop.id, shop.timeZone, day]],
      ["movements, the planner's choice", db, DAY_SUMS_SQL, [shop.id, shop.timeZone, day]],
    ] as const) {
      const plan = await q.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, [
        ...params,
      ]);
      console.log(`plan (${name}):\n    ${plan.rows.map((r) => r['QUERY PLAN']).join('\n    ')}`);
    }

    for (let round = 0; round < ROUNDS; round += 1) {
      for (let i = 0; i < REPORTS; i += 1) await timedRun(ledger.report, ledger.reports);
      for (let i = 0; i < REPORTS; i += 1) await timedRun(ledger.chart, ledger.charts);
      for (const side of [seqScan, plannerSide]) {
        await timedRun(side.report, side.reports);
        await timedRun(side.chart, side.charts);
      }
      console.log(
        `  round ${round + 1}: report p50 ${median(ledger.reports).toFixed(1)} ms, ` +
          `scan ${seqScan.reports.at(-1)?.toFixed(0)} ms, planner's choice ${plannerSide.reports.at(-1)?.toFixed(0)} ms`,
      );
    }

    const reportP95 = percentile(ledger.reports, 95);
    const chartP95 = percentile(ledger.charts, 95);
    console.log(
      `\n${table(
        ['what', 'runs', 'p50 ms', 'p95 ms', 'max ms'],
        sides.flatMap((side) => [
          row(`day report, ${side.name}`, side.reports, 1),
          row(`365-day chart, ${side.name}`, side.charts, 1),
        ]),
      )}\n`,
    );
    console.log(
      `day ${day}: ${report.totals.recharges.count} recharges, net cash ${report.totals.netCashExpected} ` +
        `over ${report.tills.length} tills; every side's figures equal`,
    );
    const scanRatio = median(seqScan.reports) / reportP95;
    const plannerRatio = median(plannerSide.reports) / reportP95;
    console.log(
      verdict('day report p95, ms', reportP95, `< ${REPORT_P95_MS}`, reportP95 < REPORT_P95_MS),
    );
    console.log(
      verdict(
        'sequential scan / day report p95',
        scanRatio,
        `>= ${REPORT_OVER_SCAN}`,
        scanRatio >= REPORT_OVER_SCAN,
      ),
    );
    console.log(`planner's choice / day report p95: ${plannerRatio.toFixed(2)} (no target)`);
    console.log(
      verdict('365-day chart p95, ms', chartP95, `< ${CHART_P95_MS}`, chartP95 < CHART_P95_MS),
    );
  } finally {
    await scanDb?.close();
    await db.close();
    await postgres.stop();
  }
}

await main();
