// GET /ping through the service's whole middleware chain (security headers and the activity
// record, origin policy, Host check, the API router) against a bare express 5 app answering the
// same `res.json('pong')`. Both servers live in ONE child process so they share its heap, JIT
// and CPU; the load comes from this process. Rounds alternate A/B/A/B after a warm-up, so a
// drift of the shared machine's load weighs on both sides alike.
// Target: the service keeps at least 0.8 of the bare app's throughput.
//
//   node --import tsx bench/ping-throughput.ts [--connections 8] [--seconds 1.5] [--rounds 10]
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clockTicksPerSecond, cpuTicks, load, percentile, table, verdict } from './measure.ts';

const TARGET = 0.8;

interface ServerUrls {
  service: string;
  bare: string;
}

async function serve(): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { default: express } = await import('express');
  const { parseConfig } = await import('../service/config.ts');
  const { silentLogger } = await import('../service/logger.ts');
  const { listen } = await import('../common/listen.ts');
  const { startWorkerService } = await import('../service/worker-service.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'cww-bench-ping-'));
  // /ping never calls the ledger, so the service gets a URL where nothing listens: an embedded
  // PGlite would only add start-up time and heap to the process whose CPU both servers share.
  const service = await startWorkerService({
    config: parseConfig({
      port: 0,
      apiKey: 'bench-key-0123456789abcdef',
      dataDir,
      cloudUrl: 'http://127.0.0.1:9',
    }),
    log: silentLogger,
    // A socket that does not exist: the reader manager never makes a PC/SC context.
    pcscdSocket: join(dataDir, 'no-pcscd.sock'),
  });
  const bare = express();
  bare.get('/ping', (_req, res) => {
    res.json('pong');
  });
  const bareServer = await listen(bare, 0);
  process.send?.({ service: service.url, bare: bareServer.url } satisfies ServerUrls);
  process.once('message', async () => {
    await service.close();
    await bareServer.close();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

interface Side {
  name: string;
  url: string;
  perSecond: number[];
  latencies: number[];
  errors: number;
  /** Child CPU (both servers' process) per answered request, in microseconds, per round. */
  cpuMicros: number[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '8' },
      // Many short rounds rather than a few long ones: on a shared machine a burst of someone
      // else's work then spoils one pair of rounds, visible in the per-round ratios.
      seconds: { type: 'string', default: '1.5' },
      rounds: { type: 'string', default: '10' },
    },
  });
  const connections = Number(values.connections);
  const roundMs = Number(values.seconds) * 1000;
  const rounds = Number(values.rounds);
  const ticksPerSecond = clockTicksPerSecond();

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve'], {
    execArgv: ['--import', 'tsx'],
  });
  const urls = await new Promise<ServerUrls>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerUrls));
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code}`)));
  });
  const pid = child.pid as number;
  const sides: Side[] = [
    {
      name: 'bare express 5',
      url: urls.bare,
      perSecond: [],
      latencies: [],
      errors: 0,
      cpuMicros: [],
    },
    {
      name: 'card-wallet-worker',
      url: urls.service,
      perSecond: [],
      latencies: [],
      errors: 0,
      cpuMicros: [],
    },
  ];
  try {
    // Warm-up: JIT both paths and open the connections before anything counts.
    for (const side of sides) await load(side.url, '/ping', {}, connections, 2_000);
    for (let round = 0; round < rounds; round += 1) {
      for (const side of sides) {
        const ticksBefore = cpuTicks(pid);
        const result = await load(side.url, '/ping', {}, connections, roundMs);
        const cpuMs = ((cpuTicks(pid) - ticksBefore) / ticksPerSecond) * 1000;
        side.perSecond.push(result.perSecond);
        side.latencies.push(...result.latenciesMs);
        side.errors += result.errors;
        side.cpuMicros.push((cpuMs * 1000) / Math.max(1, result.requests));
      }
    }
  } finally {
    child.send('stop');
  }

  const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const [bare, service] = sides as [Side, Side];
  console.log(
    `GET /ping, ${connections} keep-alive connections, ${rounds} rounds of ${roundMs / 1000} s ` +
      'per server, alternating; both servers in one child process, load from the parent',
  );
  console.log(
    table(
      ['server', 'requests/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'errors'],
      sides.map((side) => [
        side.name,
        mean(side.perSecond).toFixed(0),
        percentile(side.latencies, 50).toFixed(2),
        percentile(side.latencies, 99).toFixed(2),
        mean(side.cpuMicros).toFixed(0),
        side.errors,
      ]),
    ),
  );
  // Each round's service rate over the bare rate of the same pair: their spread shows the noise.
  const pairRatios = service.perSecond.map((rate, i) => rate / (bare.perSecond[i] as number));
  console.log(
    `per-round ratios: ${pairRatios.map((r) => r.toFixed(2)).join(' ')} ` +
      `(median ${percentile(pairRatios, 50).toFixed(2)}); ` +
      `p50 latency ratio ${(percentile(service.latencies, 50) / percentile(bare.latencies, 50)).toFixed(2)}, ` +
      `p99 ${(percentile(service.latencies, 99) / percentile(bare.latencies, 99)).toFixed(2)}, ` +
      `CPU per request ${(mean(service.cpuMicros) / mean(bare.cpuMicros)).toFixed(2)} (service / bare)`,
  );
  if (bare.errors + service.errors > 0) {
    console.log('some requests failed: the figures above do not measure /ping alone');
  }
  const ratio = mean(service.perSecond) / mean(bare.perSecond);
  console.log(
    verdict('service / bare express throughput', ratio, `>= ${TARGET.toFixed(2)}`, ratio >= TARGET),
  );
}

if (process.argv[2] === 'serve') await serve();
else await main();
