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

export interface LoadResult {
  requests: number;
  perSecond: number;
  latenciesMs: number[];
}

/**
 * Closed-loop load: `connections` keep-alive clients each send the next request when the last
 * answered, for `durationMs`. Every request is GET `path` with `headers`.
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
  const end = Date.now() + durationMs;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = request(
        { host: target.hostname, port: target.port, path, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) await one();
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  agent.destroy();
  return { requests: latenciesMs.length, perSecond: latenciesMs.length / elapsed, latenciesMs };
}
