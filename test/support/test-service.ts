import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type ConfigInput } from '../../service/config.ts';
import { silentLogger, type Logger } from '../../service/logger.ts';
import {
  startWorkerService,
  type WorkerService,
  type WorkerServiceOptions,
} from '../../service/worker-service.ts';
import { TEST_API_KEY } from './test-ledger.ts';

export { TEST_API_KEY } from './test-ledger.ts';

export interface TestService extends WorkerService {
  dataDir: string;
}

/**
 * The real service core on 127.0.0.1 port 0 with a temp data folder, using the ledger at
 * `cloudUrl` (see startTestLedger). Without `pcscdSocket` it probes a socket that does not
 * exist, so no PC/SC context is ever made (NoReader).
 */
export async function startTestService(
  overrides: Partial<ConfigInput> & { cloudUrl: string },
  options: Partial<Omit<WorkerServiceOptions, 'config'>> & { log?: Logger } = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cww-test-'));
  const config = parseConfig({ port: 0, apiKey: TEST_API_KEY, dataDir, ...overrides });
  const service = await startWorkerService({
    log: silentLogger,
    pcscdSocket: join(dataDir, 'no-pcscd.sock'),
    ...options,
    config,
  });
  const close = service.close.bind(service);
  return Object.assign(service, {
    dataDir,
    async close() {
      await close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
