import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { closeRealLedgers } from './real-ledger.ts';
import { firstDifference, rangeCommand, runSeeds } from './run-seeds.ts';
import { runSeed } from './world.ts';

// The shop simulation against the real ledger (real-ledger.ts: cloud/ledger.ts behind its HTTP
// app, on PGlite in this process with the migrations and cloud/db/routines/): a fixed range,
// each seed also run on the model and its trace compared line by line (the two ledgers answered
// every call alike, or the first line where they did not is printed); and a fresh range, new
// every run, within a time budget. The fixed range is 200 seeds: each defect of the ledger's
// SQL put back fails one of them (docs/testing.md, "Defects put back"; the last to be caught,
// a second compensation of one movement, first at seed 187). SIMULATION_SQL_FROM,
// SIMULATION_SQL_SEEDS, SIMULATION_SQL_FRESH_FROM, SIMULATION_SQL_FRESH_SEEDS and
// SIMULATION_SQL_FRESH_SECONDS move them.
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const fixed = { from: env('SIMULATION_SQL_FROM', 1), count: env('SIMULATION_SQL_SEEDS', 200) };
// Float seeds (float-scenarios.ts: outages, dying tills, carried cards, operators' closes) on
// the real ledger, each also run on the model and its trace compared line by line: each ends
// with card-wallet-cloud check, which must find nothing. About 3.6 s of one core a seed (2.7 on
// the real ledger, 0.9 on the model); SIMULATION_SQL_FLOAT_FROM and SIMULATION_SQL_FLOAT_SEEDS
// move them.
const floatSeeds = {
  from: env('SIMULATION_SQL_FLOAT_FROM', 1),
  count: env('SIMULATION_SQL_FLOAT_SEEDS', 30),
};
// Card-rule seeds (card-scenarios.ts, block-scenarios.ts: bonus tiers, cashiers' undos, blocked
// cards emptied, replacements picked up at two tills) on the real ledger, each also run on the
// model and its trace compared: about 3 s of one core a seed. SIMULATION_SQL_CARDS_FROM and
// SIMULATION_SQL_CARDS_SEEDS move them.
const cardSeeds = {
  from: env('SIMULATION_SQL_CARDS_FROM', 1),
  count: env('SIMULATION_SQL_CARDS_SEEDS', 20),
};
const fresh = {
  from: env('SIMULATION_SQL_FRESH_FROM', 1_000_000 + Math.floor(Math.random() * 1_000_000_000)),
  count: env('SIMULATION_SQL_FRESH_SEEDS', 200),
  seconds: env('SIMULATION_SQL_FRESH_SECONDS', 60),
};

after(closeRealLedgers);

test(`when seeds ${fixed.from}..${fixed.from + fixed.count - 1} run against the real ledger, then every invariant holds and every trace is the model's`, async () => {
  const lines: string[] = [];
  const failures = await runSeeds(fixed.from, fixed.count, {
    ledger: 'sql',
    twin: true,
    print: (line) => lines.push(line),
  });
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});

test(`when float seeds ${floatSeeds.from}..${floatSeeds.from + floatSeeds.count - 1} run against the real ledger, then every invariant holds, check finds the books add up and every trace is the model's`, async () => {
  const lines: string[] = [];
  const failures = await runSeeds(floatSeeds.from, floatSeeds.count, {
    ledger: 'sql',
    twin: true,
    floats: true,
    print: (line) => lines.push(line),
  });
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});

test(`when card-rule seeds ${cardSeeds.from}..${cardSeeds.from + cardSeeds.count - 1} run against the real ledger, then every invariant holds, check finds the books add up and every trace is the model's`, async () => {
  const lines: string[] = [];
  const failures = await runSeeds(cardSeeds.from, cardSeeds.count, {
    ledger: 'sql',
    twin: true,
    cards: true,
    print: (line) => lines.push(line),
  });
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});

test('when a seed runs twice against the real ledger, then both runs are the same, step for step', async () => {
  const seed = fixed.from + Math.floor(fixed.count / 2);
  const [first, second] = [
    await runSeed(seed, { ledger: 'sql' }),
    await runSeed(seed, { ledger: 'sql' }),
  ];
  assert.equal(firstDifference(second.trace, first.trace, ['second', 'first']), undefined);
});

test(`when ${fresh.count} fresh seeds from ${fresh.from} run against the real ledger, then every invariant holds`, async (t) => {
  const lines: string[] = [];
  const deadline = Date.now() + fresh.seconds * 1000;
  let ran = 0;
  const failures = [];
  while (ran < fresh.count && Date.now() < deadline) {
    const slice = Math.min(10, fresh.count - ran);
    failures.push(
      ...(await runSeeds(fresh.from + ran, slice, {
        ledger: 'sql',
        print: (line) => lines.push(line),
      })),
    );
    ran += slice;
  }
  t.diagnostic(
    `fresh seeds ${fresh.from}..${fresh.from + ran - 1} on the real ledger: ${rangeCommand(fresh.from, ran, 'sql')}`,
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});
