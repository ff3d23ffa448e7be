import { runSeed, type SimResult } from './world.ts';

/** The command that replays one seed exactly. */
export function replayCommand(seed: number): string {
  return `npm run simulate -- --seed ${seed} --trace`;
}

/** The command that runs a range of seeds again. */
export function rangeCommand(from: number, count: number): string {
  return `npm run simulate -- --from ${from} --seeds ${count}`;
}

export interface RunOptions {
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
  { trace = false, print = () => undefined, paths, first = false }: RunOptions = {},
): Promise<SimResult[]> {
  const failures: SimResult[] = [];
  for (let seed = from; seed < from + count; seed += 1) {
    const result = await runSeed(seed);
    if (trace) for (const line of result.trace) print(line);
    if (paths) for (const [path, n] of result.paths) paths.set(path, (paths.get(path) ?? 0) + n);
    if (result.problems.length === 0) continue;
    failures.push(result);
    print(
      `seed ${seed} failed:\n  ${result.problems.join('\n  ')}\nreplay: ${replayCommand(seed)}`,
    );
    if (first) break;
  }
  return failures;
}
