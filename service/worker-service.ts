import { chmodSync, mkdirSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import type { NFC } from 'nfc-pcsc';
import type { WalletKey } from './card/card-session.ts';
import { parseMasterKey } from './card/card-keys.ts';
import { WalletKeys } from './card/wallet-keys.ts';
import { loadNfc, ReaderManager, type ReaderManagerOptions } from './card/reader-manager.ts';
import type { CardSimulator, CardSimulatorOptions } from './card/simulator/card-simulator.ts';
import { CustomerDirectory } from './cloud/customer-directory.ts';
import {
  startEmbeddedLedger,
  type ConsoleAddress,
  type EmbeddedLedger,
} from './cloud/embedded-ledger.ts';
import { LedgerClient, type LedgerReachability } from './cloud/ledger-client.ts';
import { blockedPortProblem } from './blocked-ports.ts';
import { readerOf, TillHeartbeatSender } from './cloud/till-heartbeat.ts';
import { CardListWatcher } from './cloud/card-list-watcher.ts';
import { apiKeySchema, originProblem, type Config } from './config.ts';
import { errors } from './errors.ts';
import { HttpActivity } from './http/activity.ts';
import { keyFingerprint } from './http/api-key.ts';
import { loadTillId } from './till-id.ts';
import { CardEventStream } from './http/card-events.ts';
import { createApp, type HttpSettings } from './http/create-app.ts';
import type { RateLimits } from './http/rate-limits.ts';
import { listen, type RunningServer } from '../common/listen.ts';
import type { Logger } from './logger.ts';
import { KeyRing } from './wallet/key-ring.ts';
import { MovementEngine, type WaitingMovement } from './wallet/movement-engine.ts';
import type { FloatStatus } from './wallet/float-status.ts';
import { MovementJournal } from './wallet/movement-journal.ts';
import type { Clock } from './wallet/clock.ts';
import type { TillFloats } from './wallet/till-floats.ts';
import {
  CardPersonalizer,
  personalizeCard,
  type PersonalizeAnswer,
} from './wallet/personalize-card.ts';
import { settleCard, type SettleAnswer } from './wallet/settle-card.ts';
import { packageVersion } from './version.ts';
import type { TillState } from '../common/ledger-contract.ts';

export interface WorkerServiceOptions {
  config: Config;
  log: Logger;
  /** pcscd's socket to probe before creating a PC/SC context; undefined: do not probe. */
  pcscdSocket?: string;
  /** The platform's smart-card service, asked before creating a PC/SC context. */
  serviceProbe?: ReaderManagerOptions['serviceProbe'];
  /** For tests: a PC/SC stand-in. Default: nfc-pcsc, loaded when first needed. */
  createNfc?: () => NFC | Promise<NFC>;
  /** For tests that call an endpoint more often than the spec's limits allow. */
  limits?: RateLimits;
  /** For tests that cannot wait 15 s for an event stream's heartbeat. */
  eventHeartbeatMs?: number;
  /**
   * Keys the operator replaced while movements made with them were unresolved, as the host
   * keeps them (where it keeps the current key) across a restart: those movements are still
   * resolved with them. `release` is called once no unresolved movement needs a key (standalone
   * mode has then revoked it in the embedded ledger), also for the key a live change replaces:
   * the host forgets it. The core never logs or writes a key.
   */
  earlierKeys?: EarlierKeys;
  /** The version the till's heartbeat reports (default: this package's). */
  version?: string;
  /** For tests: the money engine's clock (a cashier's undo window counts by it). */
  clock?: Clock;
}

/** The host's side of replaced API keys (see WorkerServiceOptions.earlierKeys). */
export interface EarlierKeys {
  readonly keys: readonly string[];
  release(apiKey: string): void;
}

/** Settings that apply to a running service at once, without a restart. */
export interface LiveSettings {
  apiKey?: string;
  allowedOrigins?: string[];
  port?: number;
}

interface WorkerServiceEvents {
  /** The HTTP listener moved (a new port was applied). */
  listening: [{ url: string; port: number }];
  /** The ledger answered, or stopped answering. */
  ledger: [LedgerReachability];
  /** The number of movements the ledger has not confirmed yet changed. */
  movements: [number];
  /** The movements pending at the ledger until their card is presented again changed. */
  waitingForCard: [readonly WaitingMovement[]];
  /**
   * The outbox went once through the movements it holds: whatever it sent the ledger is
   * answered or given up for this pass (for monitoring and tests).
   */
  outboxPassed: [];
  /** The ledger answered this till's heartbeat: the till as it knows it (its name). */
  till: [TillState];
  /** The back office's address, or its setup link, changed. */
  console: [ConsoleAddress];
  /** The till float's state changed (the tray's line: docs/operators.md). */
  float: [FloatStatus];
}

export interface WorkerService extends EventEmitter<WorkerServiceEvents> {
  readonly url: string;
  readonly port: number;
  /** The ledger in use: the configured cloud URL, or the embedded one (standalone mode). */
  readonly ledgerUrl: string;
  /** This till's identity at the ledger (docs/cloud-api.md, "Tills"). */
  readonly tillId: string;
  /** The name the shop gave this till in the back office, once a heartbeat told it; else null. */
  readonly tillName: string | null;
  /**
   * The back office: the embedded ledger's (standalone, with its setup link until the shop
   * has an owner), or the provider's ledger's /console.
   */
  readonly console: ConsoleAddress;
  readonly ledger: LedgerReachability;
  /** Movements the ledger has not confirmed yet (the outbox and undecided card writes). */
  readonly unconfirmedMovements: number;
  /** Movements pending at the ledger until their card is presented again (reconciliation). */
  readonly movementsWaitingForCard: readonly WaitingMovement[];
  /** The till float: online or offline, what it can still sell, what is left to report. */
  readonly float: FloatStatus;
  readonly readers: ReaderManager;
  /** The built-in card simulator when the service runs with it (`simulator` setting), else undefined. */
  readonly simulator: CardSimulator | undefined;
  readonly activity: HttpActivity;
  readonly settings: Readonly<HttpSettings>;
  /**
   * Applies a new API key, origin allowlist or port. The next request sees them; a new port is
   * bound before the old one is released, so a port in use fails (AppError PortInUse) and the
   * service stays where it was. Invalid values fail with AppError InvalidSetting.
   */
  applySettings(settings: LiveSettings): Promise<void>;
  /**
   * Personalizes the card on the reader, as POST /cards/personalize does, under the reader's
   * queue; for the tray window's button. Fails with the endpoint's AppErrors.
   */
  personalizeCard(): Promise<PersonalizeAnswer>;
  /**
   * Settles the card on the reader, as POST /cards/settle does with the API key in effect: the
   * card decides the pending movements other tills made of it, with evidence; for the tray
   * window's button. Fails with the endpoint's AppErrors.
   */
  settleCard(): Promise<SettleAnswer>;
  /** Stops taking requests, lets the running card operation finish, releases PC/SC. */
  close(): Promise<void>;
}

/**
 * Starts the service core: the embedded ledger when no cloud URL is set, the reader manager,
 * and the HTTP listener on 127.0.0.1.
 */
export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const { config, log } = options;
  // The data folder holds the key, the journal and, standalone, the ledger: its owner's only,
  // also when it existed before (created by hand, or by an earlier version).
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  const tillId = await loadTillId(config.dataDir, config.tillId);
  const embedded: EmbeddedLedger | undefined = config.cloudUrl
    ? undefined
    : await startEmbeddedLedger(config.dataDir, config.apiKey, log, {
        port: config.consolePort,
        tillId,
      });
  const ledgerUrl = config.cloudUrl ?? (embedded as EmbeddedLedger).url;
  // The service keeps answering (card reads, the window); each ledger call then fails as
  // LedgerUnavailable and the tray shows the ledger unreachable.
  embedded?.opened.catch((error: unknown) => {
    log.error(
      `the embedded ledger could not open its database in ${config.dataDir}: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const ledger = new LedgerClient({
    baseUrl: ledgerUrl,
    timeoutMs: config.ledgerTimeoutMs,
    opened: embedded?.opened,
  });
  const settings: HttpSettings = { apiKey: config.apiKey, allowedOrigins: config.allowedOrigins };
  if (config.unknownPendingGraceMs !== undefined) {
    log.warn(
      'unknownPendingGraceMs is no longer used: a pending movement is never voided on a timer (docs/integrators.md, "Reconciliation"); remove it',
    );
  }
  const journal = new MovementJournal(config.dataDir);
  await journal.open();
  const keys = new KeyRing(() => settings.apiKey, keyFingerprint);
  const movements = new MovementEngine({
    journal,
    ledger,
    keys,
    tillId,
    log,
    ...(options.clock ? { clock: options.clock } : {}),
    reconcileEveryMs: config.reconcileEveryMs,
    uncertainMovementBoundMs: config.uncertainMovementBoundMs,
    // The till float: it sells through an outage once the shop gives its tills one.
    floats: { ledger, customer: (apiKey) => customers.resolve(apiKey) },
  });
  const floats = movements.floats as TillFloats;
  const customers = new CustomerDirectory(ledger, {
    learnt: (apiKey) => floats.learntShop(apiKey),
    onResolved: (apiKey, customer) =>
      void floats.keeper
        .learnShop(apiKey, customer)
        .catch((error: unknown) => log.warn(`float: noting the shop: ${(error as Error).message}`)),
  });
  watchMoneyPaths({ ledger, keys, movements, embedded, log, host: options.earlierKeys });
  const walletKeys = new WalletKeys({
    sector: config.walletSector,
    key: Buffer.from(config.cardKey, 'hex'),
    type: config.cardKeyType === 'A' ? 0x60 : 0x61,
    masterKey:
      config.cardMasterKey === undefined ? undefined : parseMasterKey(config.cardMasterKey),
    desfireAid: Number.parseInt(config.desfireAid, 16),
  });
  // New simulated cards carry the configured key: the transport key when cards have their own.
  const simulator = await openSimulator(
    config,
    walletKeys.configured,
    log,
    embedded && {
      onDemoCredits: (cardId, credits) => embedded.importCard(settings.apiKey, cardId, credits),
    },
  );
  const readers = new ReaderManager({
    // The simulated reader has its own name: a configured real reader's name would hide it.
    readerName: simulator ? undefined : config.reader,
    keys: walletKeys,
    // The simulator replaces PC/SC entirely: no smart-card service probe, no native context.
    pcscdSocket: simulator ? undefined : options.pcscdSocket,
    serviceProbe: simulator ? undefined : options.serviceProbe,
    createNfc: simulator ? () => simulator.createNfc() : (options.createNfc ?? loadNfc),
    operationTimeoutMs: config.cardTimeoutMs,
    queueLimit: config.cardQueueLimit,
    log,
  });
  const activity = new HttpActivity();
  // The shop's blocked cards and changes waiting for cards: every till refuses a blocked card.
  const cardList = new CardListWatcher({
    ledger,
    apiKey: () => settings.apiKey,
    fingerprint: keyFingerprint,
    dataDir: config.dataDir,
    everyMs: config.cardListEveryMs,
    log,
  });
  const events = new CardEventStream(readers, options.eventHeartbeatMs, floats);
  // The Host check asks for the port on every request: it changes when the service moves.
  const current: { service?: WorkerService } = {};
  const personalizer = new CardPersonalizer({
    journal,
    movements,
    perCardKeys: walletKeys.perCard,
    autoPersonalize: config.autoPersonalize ?? walletKeys.perCard,
    log,
  });
  const app = createApp({
    settings: () => settings,
    port: () => current.service?.port ?? config.port,
    cards: readers,
    ledger,
    customers,
    movements,
    personalizer,
    refuseCardsAboveAccount: config.refuseCardsAboveAccount,
    cardList,
    events,
    activity,
    log,
    limits: options.limits,
    simulator,
  });

  // A card whose last write was left undecided is settled as soon as it is seen again.
  readers.on('event', (event) => {
    if (event.type !== 'card-present' || !movements.uncertainCards.has(event.cardId)) return;
    readers
      .withCard((session) => movements.settle(session))
      .catch((error: unknown) =>
        log.warn(`settling card ${event.cardId}: ${(error as Error).message}`),
      );
  });
  const heartbeat = new TillHeartbeatSender({
    ledger,
    tillId,
    apiKey: () => settings.apiKey,
    version: options.version ?? packageVersion(),
    everyMs: config.heartbeatEveryMs,
    log,
    state: () => ({
      reader: readerOf(readers.status),
      pendingMovements: movements.unconfirmed,
      // This till's own (its card decides them here, or the provider must): other tills'
      // waiting movements are theirs to report.
      waitingMovements: movements.waitingForCard.filter((waiting) => waiting.owner !== 'other-till')
        .length,
      float: floats.heartbeatReport(),
    }),
  });
  readers.on('status', () => heartbeat.changed());
  movements.on('unconfirmed', () => heartbeat.changed());
  movements.on('waitingForCard', () => heartbeat.changed());
  floats.on('status', () => heartbeat.changed());
  movements.start();
  readers.start();
  let server: RunningServer;
  try {
    server = await listen(app, config.port);
  } catch (error) {
    heartbeat.close();
    cardList.close();
    await readers.stop();
    await movements.close();
    await journal.close();
    await embedded?.close();
    throw error;
  }
  log.info(`service listening on ${server.url}`);
  // Only now: PGlite's start has synchronous stretches that would hold the listener back.
  embedded?.open();
  heartbeat.start();
  cardList.start();
  // A till back online learns what was blocked meanwhile at once.
  ledger.on('reachability', (state) => {
    if (state.reachable) void cardList.poll();
  });

  const service = new RunningWorkerService({
    server,
    app,
    ledgerUrl,
    ledger,
    readers,
    simulator,
    activity,
    settings,
    embedded,
    movements,
    personalizer,
    journal,
    events,
    heartbeat,
    cardList,
    consoleUrl: config.cloudUrl ? `${config.cloudUrl.replace(/\/+$/, '')}/console` : null,
    log,
  });
  ledger.on('reachability', (state) => service.emit('ledger', state));
  heartbeat.on('till', (till) => service.emit('till', till));
  embedded?.on('console', (address) => service.emit('console', address));
  floats.on('status', (status) => {
    log.info(`till float: ${status.line}`);
    service.emit('float', status);
  });
  movements.on('unconfirmed', (count) => service.emit('movements', count));
  movements.on('outboxPassed', () => service.emit('outboxPassed'));
  // A card whose newest movement record does not explain it, read in any request: the tray shows it.
  movements.on('cardSuspect', ({ cardId, credits, suspicion }) =>
    activity.emit('card-answer', {
      at: new Date(),
      cardId,
      credits,
      suspect: true,
      suspectReason: suspicion,
    }),
  );
  movements.on('waitingForCard', (waiting) => service.emit('waitingForCard', waiting));
  // A key no movement needs is released (and revoked) at once.
  for (const earlier of options.earlierKeys?.keys ?? []) movements.retireKey(earlier);
  current.service = service;
  return service;
}

interface Parts {
  server: RunningServer;
  app: Parameters<typeof listen>[0];
  ledgerUrl: string;
  ledger: LedgerClient;
  readers: ReaderManager;
  simulator: CardSimulator | undefined;
  activity: HttpActivity;
  settings: HttpSettings;
  embedded: EmbeddedLedger | undefined;
  movements: MovementEngine;
  personalizer: CardPersonalizer;
  journal: MovementJournal;
  events: CardEventStream;
  heartbeat: TillHeartbeatSender;
  cardList: CardListWatcher;
  /** The provider's back office (cloud mode); standalone: the embedded ledger's. */
  consoleUrl: string | null;
  log: Logger;
}

class RunningWorkerService extends EventEmitter<WorkerServiceEvents> implements WorkerService {
  readonly ledgerUrl: string;
  readonly readers: ReaderManager;
  readonly simulator: CardSimulator | undefined;
  readonly activity: HttpActivity;
  readonly #parts: Parts;

  constructor(parts: Parts) {
    super();
    this.#parts = parts;
    this.ledgerUrl = parts.ledgerUrl;
    this.readers = parts.readers;
    this.simulator = parts.simulator;
    this.activity = parts.activity;
  }

  get url(): string {
    return this.#parts.server.url;
  }

  get port(): number {
    return this.#parts.server.port;
  }

  get ledger(): LedgerReachability {
    return this.#parts.ledger.reachability;
  }

  get tillId(): string {
    return this.#parts.movements.tillId;
  }

  get tillName(): string | null {
    return this.#parts.heartbeat.till?.name ?? null;
  }

  get console(): ConsoleAddress {
    return this.#parts.embedded?.console ?? { url: this.#parts.consoleUrl ?? '', setupUrl: null };
  }

  get unconfirmedMovements(): number {
    return this.#parts.movements.unconfirmed;
  }

  get movementsWaitingForCard(): readonly WaitingMovement[] {
    return this.#parts.movements.waitingForCard;
  }

  get float(): FloatStatus {
    return (this.#parts.movements.floats as TillFloats).status();
  }

  get settings(): Readonly<HttpSettings> {
    return this.#parts.settings;
  }

  async applySettings(next: LiveSettings): Promise<void> {
    const parts = this.#parts;
    const checked = checkLiveSettings(next);
    if (checked.port !== undefined && checked.port !== parts.server.port) {
      let moved: RunningServer;
      try {
        moved = await listen(parts.app, checked.port);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw code === 'EADDRINUSE'
          ? errors.portInUse(checked.port)
          : errors.listenFailed(checked.port, code);
      }
      const old = parts.server;
      parts.server = moved;
      parts.log.info(`service moved to ${moved.url}`);
      this.emit('listening', { url: moved.url, port: moved.port });
      void old.close();
    }
    if (checked.apiKey !== undefined && checked.apiKey !== parts.settings.apiKey) {
      // Standalone: the embedded ledger must know the new key before the till accepts it.
      await parts.embedded?.registerKey(checked.apiKey);
      const previous = parts.settings.apiKey;
      parts.settings.apiKey = checked.apiKey;
      // Movements made with the previous key are still resolved with it (their shop's).
      parts.movements.retireKey(previous);
      parts.events.closeKey(keyFingerprint(previous));
      parts.heartbeat.resend();
      void parts.cardList.poll();
    }
    if (checked.allowedOrigins !== undefined)
      parts.settings.allowedOrigins = checked.allowedOrigins;
  }

  personalizeCard(): Promise<PersonalizeAnswer> {
    const { readers, movements, personalizer } = this.#parts;
    return personalizeCard(readers, movements, personalizer);
  }

  settleCard(): Promise<SettleAnswer> {
    const { readers, movements, ledger, settings, cardList } = this.#parts;
    return settleCard(readers, movements, ledger, settings.apiKey, {
      changes: cardList,
      keyFingerprint: keyFingerprint(settings.apiKey),
    });
  }

  async close(): Promise<void> {
    const closing = this.#parts.server.close();
    this.#parts.heartbeat.close();
    this.#parts.cardList.close();
    this.#parts.events.closeAll();
    await this.#parts.readers.stop();
    await closing;
    await this.#parts.movements.close();
    await this.#parts.simulator?.flush();
    await this.#parts.journal.close();
    await this.#parts.embedded?.close();
  }
}

/**
 * Reconciles when the ledger answers again after an outage. Once no movement needs an earlier
 * key: in standalone mode, revokes it in the embedded ledger; then tells the host to forget it
 * (after the revocation, so a crash in between leaves the key kept, to be revoked next start).
 */
function watchMoneyPaths(parts: {
  ledger: LedgerClient;
  keys: KeyRing;
  movements: MovementEngine;
  embedded: EmbeddedLedger | undefined;
  log: Logger;
  host: EarlierKeys | undefined;
}): void {
  const { ledger, keys, movements, embedded, log, host } = parts;
  ledger.on('reachability', (state) => {
    if (state.reachable) movements.reconcileSoon();
  });
  keys.on('released', (apiKey) => {
    log.info(`the earlier API key ${keyFingerprint(apiKey)} has no movements left`);
    const revoked = embedded ? embedded.revokeKey(apiKey) : Promise.resolve();
    revoked.then(
      () => host?.release(apiKey),
      (error: unknown) =>
        log.error(`embedded ledger: revoking the earlier key: ${(error as Error).message}`),
    );
  });
}

/**
 * The card simulator, only when the configuration asks for it; loaded only then, so a service
 * with a real reader never runs a line of it.
 */
async function openSimulator(
  config: Config,
  key: WalletKey,
  log: Logger,
  hooks: Pick<CardSimulatorOptions, 'onDemoCredits'> = {},
): Promise<CardSimulator | undefined> {
  if (!config.simulator) return undefined;
  const { CardSimulator } = await import('./card/simulator/card-simulator.ts');
  log.warn('card simulator ON: virtual cards, no real reader is used');
  return CardSimulator.open({
    dataDir: config.dataDir,
    key,
    desfireAid: Number.parseInt(config.desfireAid, 16),
    log,
    ...hooks,
  });
}

function checkLiveSettings(next: LiveSettings): LiveSettings {
  const problems: string[] = [];
  if (next.apiKey !== undefined) {
    const key = apiKeySchema.safeParse(next.apiKey);
    if (!key.success) problems.push(`apiKey: ${key.error.issues[0]?.message}`);
  }
  for (const origin of next.allowedOrigins ?? []) {
    const problem = originProblem(origin);
    if (problem) problems.push(`allowedOrigins: ${JSON.stringify(origin)}: ${problem}`);
  }
  if (
    next.port !== undefined &&
    (!Number.isInteger(next.port) || next.port < 0 || next.port > 65535)
  ) {
    problems.push('port: must be a whole number from 0 to 65535');
  } else if (next.port !== undefined && blockedPortProblem(next.port)) {
    problems.push(`port: ${blockedPortProblem(next.port)}`);
  }
  if (problems.length > 0) throw errors.invalidSetting(problems.join('; '));
  return next;
}
