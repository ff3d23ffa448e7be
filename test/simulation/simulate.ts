/**
 * Runs the shop simulation over many seeds (test/simulation/world.ts).
 *
 *   npm run simulate -- --seeds 10000           seeds 1..10000
 *   npm run simulate -- --seeds 1000 --from 5000
 *   npm run simulate -- --seed 1234 --trace     one seed, with what happened
 *                                               (SIM_VERBOSE=1: with the tills' logs too)
 *   npm run simulate -- --seeds 5000 --first    stops at the first failing seed (which seed
 *                                               catches a defect put back: docs/testing.md)
 *   npm run simulate -- --seeds 200 --sql       against the real ledger (its SQL on PGlite)
 *   npm run simulate -- --seeds 200 --sql --twin    and on the model too: a trace that differs
 *                                               fails (the model answered otherwise)
 *   npm run simulate -- --seeds 200 --floats    the shops give their tills floats
 *                                               (float-scenarios.ts)
 *   npm run simulate -- --seeds 300 --cards     bonus tiers and cashiers' undos, blocked
 *                                               cards and replacements (card-scenarios.ts,
 *                                               block-scenarios.ts); --floats and --cards
 *                                               run with --sql (--twin) too
 *
 * A failing seed prints the one command that replays it exactly. At the end, how often the
 * runs reached each path worth reaching.
 */
import { closeRealLedgers } from './real-ledger.ts';
import { runSeeds } from './run-seeds.ts';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const one = option('--seed');
const from = Number(one ?? option('--from') ?? 1);
const count = one === undefined ? Number(option('--seeds') ?? 10_000) : 1;
if (!Number.isSafeInteger(from) || !Number.isSafeInteger(count) || count < 1) {
  console.error(
    'usage: npm run simulate -- [--seeds N] [--from S] [--first] | --seed S [--trace]; [--sql] [--floats] [--cards]',
  );
  process.exit(2);
}
const first = args.includes('--first');
const started = Date.now();
const paths = new Map<string, number>();
const failures = await runSeeds(from, count, {
  ledger: args.includes('--sql') ? 'sql' : 'model',
  twin: args.includes('--twin'),
  floats: args.includes('--floats'),
  cards: args.includes('--cards'),
  trace: args.includes('--trace') || one !== undefined,
  print: console.log,
  paths,
  first,
});
await closeRealLedgers();
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(
  `paths: ${[...paths]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, n]) => `${path} ${n}`)
    .join(', ')}`,
);
// With --first, the run ends at its failing seed.
const ran = first && failures[0] ? failures[0].seed - from + 1 : count;
console.log(`${ran} seed(s) from ${from}: ${failures.length} failed (${seconds} s)`);
process.exit(failures.length === 0 ? 0 : 1);
