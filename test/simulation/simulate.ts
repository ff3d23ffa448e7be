/**
 * Runs the deterministic simulation over many seeds (test/simulation/world.ts).
 *
 *   npm run simulate -- --seeds 100000          seeds 1..100000
 *   npm run simulate -- --seeds 1000 --from 5000
 *   npm run simulate -- --seed 1234 --trace     one seed, with what happened
 *
 * A failing seed prints the one command that replays it exactly.
 */
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
  console.error('usage: npm run simulate -- [--seeds N] [--from S] | --seed S [--trace]');
  process.exit(2);
}
const started = Date.now();
const failures = await runSeeds(from, count, {
  trace: args.includes('--trace') || one !== undefined,
  print: console.log,
});
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`${count} seed(s) from ${from}: ${failures.length} failed (${seconds} s)`);
process.exit(failures.length === 0 ? 0 : 1);
