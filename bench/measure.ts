import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

/** The p-th percentile (0-100) of `values`, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** A small markdown table, as docs/benchmarks.md shows them. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) =>
    Math.max(...cells.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => cell.padStart(widths[i] ?? 0)).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

/** One line that says whether the target is met; benchmarks measure, they do not fail. */
export function verdict(what: string, value: number, target: string, met: boolean): string {
  return `${what}: ${value.toFixed(2)} (target ${target}) ${met ? 'PASS' : 'MISS'}`;
}

/** Milliseconds since `started` (a process.hrtime.bigint() reading). */
export function msSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Ticks per second of the utime/stime fields of /proc/PID/stat (USER_HZ, 100 on Linux). */
export function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    if (Number.isInteger(ticks) && ticks > 0) return ticks;
  } catch {
    // getconf missing: Linux has used 100 on every architecture for decades.
  }
  return 100;
}

/**
 * The fields of /proc/PID/stat after the command name, so that index 0 is field 3 (state),
 * 1 the parent's PID, 11 utime and 12 stime. The name (field 2) may hold spaces and
 * parentheses: the split is after its last ')'.
 */
export function procStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU a process has used so far, user + system, in clock ticks (all its threads, Linux). */
export function cpuTicks(pid: number): number {
  const fields = procStat(pid);
  return Number(fields[11]) + Number(fields[12]);
}

export interface LoadResult {
  /** Requests answered 200. */
  requests: number;
  /** Requests answered otherwise than 200 (or failed): a benchmark with any of these measures nothing. */
  errors: number;
  perSecond: number;
  latenciesMs: number[];
}

/**
 * Closed-loop load: `connections` keep-alive clients each send the next request when the last
 * answered, for `durationMs`. Every request is GET `path` with `headers`; node sets Host to
 * the URL's host:port, which is what the service's Host check wants.
 */
export async function load(
  url: string,
  path: string,
  headers: Record<string, string>,
  connections: number,
  durationMs: number,
): Promise<LoadResult> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latenciesMs: number[] = [];
  let errors = 0;
  const end = Date.now() + durationMs;
  const one = () =>
    new Promise<void>((resolve) => {
      const started = process.hrtime.bigint();
      const req = request(
        { host: target.hostname, port: target.port, path, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latenciesMs.push(msSince(started));
            else errors += 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end();
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) await one();
    }),
  );
  const elapsedMs = msSince(started);
  agent.destroy();
  return {
    requests: latenciesMs.length,
    errors,
    perSecond: latenciesMs.length / (elapsedMs / 1000),
    latenciesMs,
  };
}
