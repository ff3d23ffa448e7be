/**
 * Rounds side by side on one PostgreSQL server (bench/ledger-throughput.ts, bench/float-reports.ts):
 * pgbench's TPC-B in a database of its own, and closed loops of the ledger's work, each with
 * the CPU its processes spent per operation.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Database } from '../cloud/db/database.ts';
import { postgresBinDir } from '../test/support/postgres.ts';
import { clockTicksPerSecond, cpuTicks, procStat } from './measure.ts';

const run = promisify(execFile);
const pgbench = join(postgresBinDir(), 'pgbench');
const PGBENCH_DATABASE = 'pgbench';

/** pgbench's TPC-B tables in their own database, `scale` branches (one per client). */
export async function initPgbench(url: string, db: Database, scale: number): Promise<string> {
  await db.query(`CREATE DATABASE ${PGBENCH_DATABASE}`);
  const target = new URL(url);
  target.pathname = `/${PGBENCH_DATABASE}`;
  await run(pgbench, ['-i', '-q', '-s', String(scale), target.toString()]);
  return target.toString();
}

/**
 * One round of pgbench: TPC-B on its own database (transactions per second), or with
 * `script`, that script on the ledger's (script runs per second); and the server's CPU per one.
 */
export async function pgbenchRound(
  url: string,
  clients: number,
  seconds: number,
  processes: Processes,
  script?: string,
): Promise<Round> {
  const serverProcesses = postgresPids(processes.postmaster).length;
  const before = postgresTicks(processes.postmaster);
  const threads = String(Math.min(clients, cpus().length));
  const { stdout } = await run(pgbench, [
    '-n', // no vacuum before the round: the same as the other sides
    '-c',
    String(clients),
    '-j',
    threads,
    '-T',
    String(seconds),
    ...(script === undefined ? [] : ['-M', 'prepared', '-f', script]),
    url,
  ]);
  await backendsReaped(processes.postmaster, serverProcesses);
  const after = postgresTicks(processes.postmaster);
  const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
  if (tps === undefined) throw new Error(`pgbench printed no tps:\n${stdout}`);
  const perSecond = Number(tps);
  const postgres = ((after - before) / ticksPerSecond / Math.max(1, perSecond * seconds)) * 1e6;
  return { perSecond, cpu: { bench: Number.NaN, ledger: 0, postgres } };
}

/**
 * Waits until the server has no more processes than before a round: pgbench's backends exit
 * after it does, and their CPU is in the postmaster's reaped-children time only once it has
 * reaped them (read before, a backend's whole round went uncounted: a TPC-B transaction at
 * 25 µs). Gives up after 5 s (an autovacuum worker may outlive the round; its CPU is the
 * round's all the same).
 */
async function backendsReaped(postmaster: number, processes: number): Promise<void> {
  const giveUpAt = Date.now() + 5000;
  while (postgresPids(postmaster).length > processes && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The postmaster and its children (the backends serving the connections). */
function postgresPids(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return Number(procStat(pid)[1]) === postmaster;
      } catch {
        return false; // gone meanwhile
      }
    });
  return [postmaster, ...children];
}

/**
 * CPU of the server: its live processes, and the backends that exited meanwhile (pgbench's
 * connections, pooled ones closed when idle), which the postmaster reaped into its children's
 * time (fields 16 and 17 of its stat, indexes 13 and 14 here).
 */
export function postgresTicks(postmaster: number): number {
  const reaped = procStat(postmaster);
  return ticksOf(postgresPids(postmaster)) + Number(reaped[13]) + Number(reaped[14]);
}

export function ticksOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuTicks(pid);
    } catch {
      return sum;
    }
  }, 0);
}

export interface Round {
  perSecond: number;
  /** CPU per movement in microseconds, by process group. */
  cpu: { bench: number; ledger: number; postgres: number };
}

export interface Processes {
  ledger: number[];
  postmaster: number;
}

const ticksPerSecond = clockTicksPerSecond();

/** `clients` loops of `movement` for `seconds`; movements per second and CPU per movement. */
export async function round(
  clients: number,
  movement: (client: number) => Promise<void>,
  seconds: number,
  processes: Processes,
): Promise<Round> {
  const groups = () => ({
    bench: cpuTicks(process.pid),
    ledger: ticksOf(processes.ledger),
    postgres: postgresTicks(processes.postmaster),
  });
  const before = groups();
  const started = process.hrtime.bigint();
  const endAt = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (Date.now() < endAt) {
        await movement(client);
        done += 1;
      }
    }),
  );
  const after = groups();
  // The rate over the time the loops took, the last calls' tail included: a report of 100
  // movements at 16 clients ends well after endAt, and counting it in `seconds` would flatter
  // this side beside pgbench, which counts its own time.
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const micros = (group: keyof typeof before) =>
    ((after[group] - before[group]) / ticksPerSecond / Math.max(1, done)) * 1e6;
  return {
    perSecond: done / elapsed,
    cpu: { bench: micros('bench'), ledger: micros('ledger'), postgres: micros('postgres') },
  };
}
