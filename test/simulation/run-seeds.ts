import { runSeed, type SimResult } from './world.ts';

/** The command that replays one seed exactly. */
export function replayCommand(seed: number): string {
  return `npm run simulate -- --seed ${seed} --trace`;
}

/** Runs seeds from..from+count-1; prints each failure with its replay command. */
export async function runSeeds(
  from: number,
  count: number,
  { trace = false, print }: { trace?: boolean; print: (line: string) => void },
): Promise<SimResult[]> {
  const failures: SimResult[] = [];
  for (let seed = from; seed < from + count; seed += 1) {
    const result = await runSeed(seed);
    if (trace) for (const line of result.trace) print(line);
    if (result.problems.length === 0) continue;
    failures.push(result);
    print(
      `seed ${seed} failed:\n  ${result.problems.join('\n  ')}\nreplay: ${replayCommand(seed)}`,
    );
  }
  return failures;
}
