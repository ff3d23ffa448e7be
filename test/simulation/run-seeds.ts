import type { LedgerKind } from './shop-ledger.ts';
import { runSeed, type SimResult } from './world.ts';

const sqlFlag = (ledger: LedgerKind, twin = false, floats = false, cards = false) =>
  (ledger === 'sql' ? ` --sql${twin ? ' --twin' : ''}` : '') +
  (floats ? ' --floats' : '') +
  (cards ? ' --cards' : '');

/** The command that replays one seed exactly. */
export function replayCommand(
  seed: number,
  ledger: LedgerKind = 'model',
  twin = false,
  floats = false,
  cards = false,
): string {
  return `npm run simulate -- --seed ${seed}${sqlFlag(ledger, twin, floats, cards)} --trace`;
}

/** The command that runs a range of seeds again. */
export function rangeCommand(
  from: number,
  count: number,
  ledger: LedgerKind = 'model',
  twin = false,
  floats = false,
): string {
  return `npm run simulate -- --from ${from} --seeds ${count}${sqlFlag(ledger, twin, floats)}`;
}

export interface RunOptions {
  /** The ledger the tills call: the in-memory model (default) or the real one's SQL. */
  ledger?: LedgerKind;
  /**
   * With the real ledger: each seed runs on the model too, and a trace that differs is a
   * failure (the model answered a call otherwise than the SQL did).
   */
  twin?: boolean;
  /** The shops give their tills floats (float-scenarios.ts). */
  floats?: boolean;
  /** The shops give bonus tiers and cashiers undo recharges (card-scenarios.ts). */
  cards?: boolean;
  /** Print every seed's trace (one seed's, usually). */
  trace?: boolean;
  print?: (line: string) => void;
  /** Adds up how often the runs reached each path (world.ts, SimResult.paths). */
  paths?: Map<string, number>;
  /** Stops at the first failing seed (which seed catches a defect put back). */
  first?: boolean;
}

/** Runs seeds from..from+count-1; prints each failure with its replay command. The failures. */
export async function runSeeds(
  from: number,
  count: number,
  {
    ledger = 'model',
    twin = false,
    floats = false,
    cards = false,
    trace = false,
    print = () => undefined,
    paths,
    first = false,
  }: RunOptions = {},
): Promise<SimResult[]> {
  const failures: SimResult[] = [];
  for (let seed = from; seed < from + count; seed += 1) {
    const result = await runSeed(seed, { ledger, floats, cards });
    if (twin && ledger === 'sql') {
      // The model runs the same world: the same seed with the same scenarios.
      const drift = firstDifference(result.trace, (await runSeed(seed, { floats, cards })).trace);
      if (drift) result.problems.push(drift);
    }
    if (trace) for (const line of result.trace) print(line);
    if (paths) for (const [path, n] of result.paths) paths.set(path, (paths.get(path) ?? 0) + n);
    if (result.problems.length === 0) continue;
    failures.push(result);
    print(
      `seed ${seed} failed:\n  ${result.problems.join('\n  ')}\nreplay: ${replayCommand(seed, ledger, twin, floats, cards)}`,
    );
    if (first) break;
  }
  return failures;
}

/**
 * Where two runs of a seed parted (the real ledger's and the model's, by default), with what
 * led there; undefined when their traces are the same.
 */
export function firstDifference(
  trace: readonly string[],
  other: readonly string[],
  [name, otherName] = ['real', 'model'],
): string | undefined {
  const at = trace.findIndex((line, index) => line !== other[index]);
  const index = at === -1 ? (trace.length === other.length ? -1 : trace.length) : at;
  if (index === -1) return undefined;
  return [
    `the ${name} run parted from the ${otherName} run at trace line ${index + 1}:`,
    ...trace.slice(Math.max(0, index - 3), index).map((line) => `         ${line}`),
    `  ${name.padEnd(6)} ${trace[index] ?? '(the trace ends)'}`,
    `  ${otherName.padEnd(6)} ${other[index] ?? '(the trace ends)'}`,
  ].join('\n');
}
