/**
 * The result tables of the benchmarks whose sides run in alternating rounds on one PostgreSQL
 * server (bench/ledger-throughput.ts, bench/float-reports.ts): each side's median rate and the
 * ratios between sides, and the CPU each process group spent per operation.
 */
import { median, table } from './measure.ts';
import type { Round } from './pgbench-rounds.ts';

/** One side's rounds at one client count. */
export interface Side {
  /** Its row in the CPU table ("raw SQL movement"). */
  name: string;
  rounds: Round[];
  /** Operations per counted call (a float report of 100 movements: 100); 1 by default. */
  per?: number;
}

/** The sides of one client count, by key. */
export interface ClientSides<K extends string> {
  clients: number;
  sides: Record<K, Side>;
}

/** A column of the rates table: a side's operations per second, or one side's rate over another's. */
export type RateColumn<K extends string> =
  { header: string; side: K } | { header: string; ratio: [K, K] };

/** Operations per second: the median of the rounds' rates. */
export function rateOf(side: Side): number {
  return median(side.rounds.map((r) => r.perSecond)) * (side.per ?? 1);
}

/** CPU µs per operation of one process group: the median of the rounds'. */
export function cpuOf(side: Side, group: keyof Round['cpu']): number {
  return median(side.rounds.map((r) => r.cpu[group])) / (side.per ?? 1);
}

/** One side's rate over another's (of medians). */
export function ratioOf<K extends string>(result: ClientSides<K>, [over, under]: [K, K]): number {
  return rateOf(result.sides[over]) / rateOf(result.sides[under]);
}

/** One row per client count: the columns' rates (whole numbers) and ratios (two decimals). */
export function ratesTable<K extends string>(
  results: ClientSides<K>[],
  columns: RateColumn<K>[],
): string {
  return table(
    ['clients', ...columns.map((c) => c.header)],
    results.map((result) => [
      result.clients,
      ...columns.map((c) =>
        'side' in c ? rateOf(result.sides[c.side]).toFixed(0) : ratioOf(result, c.ratio).toFixed(2),
      ),
    ]),
  );
}

/** One row per client count and side: its rate and each process group's CPU µs per operation. */
export function cpuTable<K extends string>(results: ClientSides<K>[], order: K[]): string {
  return table(
    ['clients', 'side', 'per second', 'CPU µs per one: bench', 'ledger', 'postgres'],
    results.flatMap((result) =>
      order.map((key) => {
        const side = result.sides[key];
        const bench = cpuOf(side, 'bench');
        return [
          result.clients,
          side.name,
          rateOf(side).toFixed(0),
          Number.isNaN(bench) ? '-' : bench.toFixed(0),
          cpuOf(side, 'ledger').toFixed(0),
          cpuOf(side, 'postgres').toFixed(0),
        ];
      }),
    ),
  );
}
