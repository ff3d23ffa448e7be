// /ping through the service's whole middleware chain (security headers, activity log, origin
// policy, Host check, routing) against a bare express app answering the same JSON, both in one
// child process (same conditions), loaded from this process in interleaved rounds so drift on
// a shared machine hits both alike. Target: the service keeps at least 0.8 of the bare rate.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { load, percentile, table, verdict, type LoadResult } from './measure.ts';

const CONNECTIONS = 8;
const ROUND_MS = 3_000;
const ROUNDS = 3;

if (process.argv[2] === 'serve') {
  // The child: both servers, on 127.0.0.1, reporting their URLs to the parent.
  const { default: express } = await import('express');
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { startTestLedger, TEST_API_KEY } = await import('../test/support/test-ledger.ts');
  const { parseConfig } = await import('../service/config.ts');
  const { silentLogger } = await import('../service/logger.ts');
  const { startWorkerService } = await import('../service/worker-service.ts');
  const { listen } = await import('../service/http/server.ts');
  const ledger = await startTestLedger();
  const dataDir = mkdtempSync(join(tmpdir(), 'cww-bench-'));
  const service = await startWorkerService({
    config: parseConfig({ port: 0, apiKey: TEST_API_KEY, dataDir, cloudUrl: ledger.url }),
    log: silentLogger,
    pcscdSocket: join(dataDir, 'no-pcscd.sock'),
  });
  const bare = express();
  bare.get('/ping', (_req, res) => {
    res.json('pong');
  });
  const bareServer = await listen(bare, 0);
  process.send?.({ service: service.url, bare: bareServer.url });
  process.on('message', async () => {
    await service.close();
    await bareServer.close();
    await ledger.close();
    process.exit(0);
  });
} else {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'] });
  const urls = await new Promise<{ service: string; bare: string }>((resolve) =>
    child.once('message', resolve as never),
  );
  const results: Record<'service' | 'bare', LoadResult[]> = { service: [], bare: [] };
  // Warm-up, then interleave.
  await load(urls.bare, '/ping', {}, CONNECTIONS, 1_000);
  await load(urls.service, '/ping', {}, CONNECTIONS, 1_000);
  for (let round = 0; round < ROUNDS; round += 1) {
    results.bare.push(await load(urls.bare, '/ping', {}, CONNECTIONS, ROUND_MS));
    results.service.push(await load(urls.service, '/ping', {}, CONNECTIONS, ROUND_MS));
  }
  child.send('stop');
  const summary = (runs: LoadResult[]) => {
    const latencies = runs.flatMap((run) => run.latenciesMs);
    const perSecond = runs.reduce((sum, run) => sum + run.perSecond, 0) / runs.length;
    return { perSecond, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  };
  const service = summary(results.service);
  const bare = summary(results.bare);
  const ratio = service.perSecond / bare.perSecond;
  console.log(
    `/ping throughput, ${CONNECTIONS} keep-alive connections, ${ROUNDS} interleaved rounds of ${ROUND_MS / 1000} s`,
  );
  console.log(
    table(
      ['server', 'requests/s', 'p50 ms', 'p99 ms'],
      [
        ['bare express', bare.perSecond.toFixed(0), bare.p50.toFixed(2), bare.p99.toFixed(2)],
        [
          'card-wallet-worker',
          service.perSecond.toFixed(0),
          service.p50.toFixed(2),
          service.p99.toFixed(2),
        ],
      ],
    ),
  );
  console.log(verdict('service / bare throughput', ratio, '>= 0.80', ratio >= 0.8));
  console.log(`p99 ratio (service / bare): ${(service.p99 / bare.p99).toFixed(2)}`);
}
