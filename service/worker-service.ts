import nfcPcsc, { type NFC } from 'nfc-pcsc';
import { ReaderManager } from './card/reader-manager.ts';
import { CustomerDirectory } from './cloud/customer-directory.ts';
import { startEmbeddedLedger, type EmbeddedLedger } from './cloud/embedded-ledger.ts';
import { LedgerClient } from './cloud/ledger-client.ts';
import type { Config } from './config.ts';
import { HttpActivity } from './http/activity.ts';
import { createApp, type HttpSettings } from './http/create-app.ts';
import type { EndpointLimits } from './http/rate-limits.ts';
import { listen, type RunningServer } from './http/server.ts';
import type { Logger } from './logger.ts';

export interface WorkerServiceOptions {
  config: Config;
  log: Logger;
  /** pcscd's socket to probe before creating a PC/SC context; undefined: do not probe. */
  pcscdSocket?: string;
  /** For tests: a PC/SC stand-in. Default: nfc-pcsc. */
  createNfc?: () => NFC;
  /** For tests that call an endpoint more often than the spec's limits allow. */
  limits?: EndpointLimits;
}

export interface WorkerService {
  readonly url: string;
  /** The ledger in use: the configured cloud URL, or the embedded one (standalone mode). */
  readonly ledgerUrl: string;
  readonly port: number;
  readonly readers: ReaderManager;
  readonly activity: HttpActivity;
  /** Stops taking requests, lets the running card operation finish, releases PC/SC. */
  close(): Promise<void>;
}

/**
 * Starts the service core: the embedded ledger when no cloud URL is set, the reader manager,
 * and the HTTP listener on 127.0.0.1.
 */
export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const { config, log } = options;
  const embedded: EmbeddedLedger | undefined = config.cloudUrl
    ? undefined
    : await startEmbeddedLedger(config.dataDir, config.apiKey, log);
  const ledgerUrl = config.cloudUrl ?? (embedded as EmbeddedLedger).url;
  const ledger = new LedgerClient({ baseUrl: ledgerUrl, timeoutMs: config.ledgerTimeoutMs });
  const customers = new CustomerDirectory(ledger);
  const readers = new ReaderManager({
    readerName: config.reader,
    key: {
      key: Buffer.from(config.cardKey, 'hex'),
      type: config.cardKeyType === 'A' ? 0x60 : 0x61,
      sector: config.walletSector,
    },
    pcscdSocket: options.pcscdSocket,
    createNfc: options.createNfc ?? (() => new nfcPcsc.NFC()),
    operationTimeoutMs: config.cardTimeoutMs,
    queueLimit: config.cardQueueLimit,
    log,
  });
  const activity = new HttpActivity();
  const settings: HttpSettings = { apiKey: config.apiKey, allowedOrigins: config.allowedOrigins };
  let server: RunningServer | undefined;
  const app = createApp({
    settings: () => settings,
    port: () => server?.port ?? config.port,
    cards: readers,
    ledger,
    customers,
    activity,
    log,
    limits: options.limits,
  });

  readers.start();
  try {
    server = await listen(app, config.port);
  } catch (error) {
    await readers.stop();
    await embedded?.close();
    throw error;
  }
  const running = server;
  log.info(`service listening on ${running.url}`);
  return {
    url: running.url,
    port: running.port,
    ledgerUrl,
    readers,
    activity,
    async close() {
      const closing = running.close();
      await readers.stop();
      await closing;
      await embedded?.close();
    },
  };
}
