import assert from 'node:assert/strict';
import { issueKey } from '../../cloud/admin.ts';
import { parseMasterKey } from '../../service/card/card-keys.ts';
import { desfireCardKeys } from '../../service/card/desfire/desfire-keys.ts';
import {
  DEFAULT_DESFIRE_AID,
  VALUE_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import type { ReaderEvent, ReaderManager } from '../../service/card/reader-manager.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { decodeWallet, encodeValueBlock } from '../../service/card/wallet-format.ts';
import type { ConfigInput } from '../../service/config.ts';
import type { RateLimits } from '../../service/http/rate-limits.ts';
import type { WorkerServiceOptions } from '../../service/worker-service.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { startPcscd, type PcscdRig } from './pcscd.ts';
import {
  importCardBalance,
  pendingMovements,
  startTestLedger,
  startTestLedgerProcess,
  TEST_API_KEY,
  type TestLedger,
} from './test-ledger.ts';
import { startTestService, type TestService } from './test-service.ts';
import {
  VirtualCard,
  VirtualDesfireCard,
  VirtualReader,
  type AnyVirtualCard,
} from './virtual-card.ts';

/** A service whose reader is attached, with the virtual reader behind it. */
async function attached(
  service: TestService,
  { name, port }: { name: string; port: number },
  apiKey: string,
  withinMs = 5_000,
): Promise<Till> {
  await waitUntil(() => service.readers.status.reader === name, withinMs, 'reader attached');
  const reader = new VirtualReader(port);
  return {
    service,
    apiKey,
    reader,
    async present(card) {
      const seen = nextReaderEvent(
        service.readers,
        (event) => event.type === 'card-present' && event.cardId === card.id,
      );
      await reader.insert(card);
      await seen;
    },
    async takeAway() {
      if (!reader.card) return;
      const gone = nextReaderEvent(service.readers, (event) => event.type === 'card-removed');
      await reader.remove();
      await gone;
    },
  };
}

/** Resolves with the first reader event that matches, or rejects after `timeoutMs`. */
export function nextReaderEvent(
  readers: ReaderManager,
  matches: (event: ReaderEvent) => boolean,
  timeoutMs = 5_000,
): Promise<ReaderEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      readers.off('event', listener);
      reject(new Error(`no matching reader event in ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (event: ReaderEvent) => {
      if (!matches(event)) return;
      clearTimeout(timer);
      readers.off('event', listener);
      resolve(event);
    };
    readers.on('event', listener);
  });
}

/** Another till of the test shop: its own service, API key, data folder and reader. */
export interface Till {
  service: TestService;
  /** Its own API key, of the same shop. */
  apiKey: string;
  reader: VirtualReader;
  present(card: AnyVirtualCard): Promise<void>;
  takeAway(): Promise<void>;
}

export interface CardRig {
  pcscd: PcscdRig;
  ledger: TestLedger;
  /** Between the service and the ledger, to make the ledger fail on demand. */
  ledgerProxy: FaultProxy;
  service: TestService;
  /** The virtual reader behind the service's chosen reader ("Virtual PCD 00 00"). */
  reader: VirtualReader;
  /** Puts `card` on the reader and waits until the service sees it. */
  present(card: AnyVirtualCard): Promise<void>;
  /** Takes the card off and waits until the service saw it go. */
  takeAway(): Promise<void>;
  /** The same till (service, reader, present, takeAway) as a Till, its key TEST_API_KEY. */
  firstTill: Till;
  /**
   * A card with a UID no other card of this rig has, holding `balance` (null: blank). A balance
   * is imported at the ledger as a card sold before it (its account covers it).
   */
  cardHolding(balance: number | null): Promise<VirtualCard>;
  /**
   * A DESFire card with a UID no other card of this rig has: fresh from the factory (null), or
   * holding `balance` in its wallet application, personalized with the rig's master key (the
   * trial keys without one). A balance is imported at the ledger as for cardHolding.
   */
  desfireCardHolding(balance: number | null): Promise<VirtualDesfireCard>;
  /** Waits until the service has settled every movement, and checks none is pending. */
  settled(timeoutMs?: number): Promise<void>;
  /**
   * Starts a second till of the same shop on the rig's second reader ("Virtual PCD 00 01"),
   * with a key of its own issued at the ledger, straight to the ledger (no fault proxy).
   */
  secondTill(overrides?: Partial<ConfigInput>): Promise<Till>;
  close(): Promise<void>;
}

/** Room for every call a card test makes; the spec's limits are tested in test/http. */
export const ROOMY_LIMITS: RateLimits = {
  readcard: { limit: 1_000, windowMs: 10_000 },
  info: { limit: 1_000, windowMs: 10_000 },
  writecard: { limit: 1_000, windowMs: 60_000 },
  dischargecard: { limit: 1_000, windowMs: 60_000 },
  personalize: { limit: 1_000, windowMs: 60_000 },
  settle: { limit: 1_000, windowMs: 60_000 },
  undo: { limit: 1_000, windowMs: 60_000 },
  movements: { limit: 1_000, windowMs: 60_000 },
  quote: { limit: 1_000, windowMs: 60_000 },
  holder: { limit: 1_000, windowMs: 60_000 },
  failedAuth: { limit: 1_000, windowMs: 60_000 },
};

let rigStarted = false;

/**
 * The whole card path for real: a private pcscd with vpcd, the service core over real HTTP
 * (port 0) talking to it through nfc-pcsc, a real ledger, and a virtual reader for virtual cards.
 *
 * One per test file: libpcsclite reads PCSCLITE_CSOCK_NAME once per process, so a second
 * pcscd would not be seen, and nfc-pcsc would busy-wait on the first one's dead socket.
 */
export async function startCardRig(
  overrides: Partial<ConfigInput> = {},
  {
    limits = ROOMY_LIMITS,
    eventHeartbeatMs,
    ledgerProcess = false,
    createNfc,
    ledgerReady,
  }: {
    limits?: RateLimits;
    eventHeartbeatMs?: number;
    /** The ledger as a process of its own on PostgreSQL, instead of in this process on PGlite. */
    ledgerProcess?: boolean;
    /**
     * PC/SC through another host than nfc-pcsc in this process (the tray's PC/SC host, a
     * process that starts first: the reader is waited for longer).
     */
    createNfc?: WorkerServiceOptions['createNfc'];
    /** Runs on the ledger before any till starts (a shop's settings every till reads at start). */
    ledgerReady?: (ledger: TestLedger) => Promise<void>;
  } = {},
): Promise<CardRig> {
  if (rigStarted) throw new Error('startCardRig: one card rig per test file (process)');
  rigStarted = true;
  const pcscd = await startPcscd();
  // libpcsclite (inside nfc-pcsc) reads this when the service creates its PC/SC context.
  process.env.PCSCLITE_CSOCK_NAME = pcscd.socketPath;
  const [first] = pcscd.readers;
  if (!first) throw new Error('the rig has no reader');
  const ledger = ledgerProcess ? await startTestLedgerProcess() : await startTestLedger();
  await ledgerReady?.(ledger);
  const ledgerProxy = await startFaultProxy(ledger.url);
  const service = await startTestService(
    { reader: first.name, cloudUrl: ledgerProxy.url, ...overrides },
    { pcscdSocket: pcscd.socketPath, limits, eventHeartbeatMs, createNfc },
  );
  const till = await attached(service, first, TEST_API_KEY, createNfc ? 60_000 : 5_000);
  const others: Till[] = [];
  let cardsMade = 0;
  return {
    pcscd,
    ledger,
    ledgerProxy,
    service,
    reader: till.reader,
    present: till.present,
    takeAway: till.takeAway,
    firstTill: till,
    async cardHolding(balance) {
      cardsMade += 1;
      const uid = Buffer.from([0x04, 0x5a, cardsMade >> 8, cardsMade & 0xff]);
      const card = new VirtualCard({
        uid,
        blocks: balance === null ? {} : { 4: encodeValueBlock(balance, 1) },
      });
      if (balance !== null && balance > 0) await importCardBalance(ledger, card.id, balance);
      return card;
    },
    async desfireCardHolding(balance) {
      cardsMade += 1;
      const uid = Buffer.from([0x04, 0xdf, 0x5a, 0, 0, cardsMade >> 8, cardsMade & 0xff]);
      if (balance === null) return new VirtualDesfireCard({ uid });
      const master = overrides.cardMasterKey;
      const keys = desfireCardKeys(
        master === undefined ? undefined : parseMasterKey(master),
        uid,
        DEFAULT_DESFIRE_AID,
      );
      const card = desfireWalletCard(uid, DEFAULT_DESFIRE_AID, balance, keys);
      if (balance > 0) await importCardBalance(ledger, card.id, balance);
      return card;
    },
    async settled(timeoutMs = 30_000) {
      await waitUntil(() => service.unconfirmedMovements === 0, timeoutMs, 'movements settled');
      assert.equal(await pendingMovements(ledger.url), 0, 'nothing left pending at the ledger');
    },
    async secondTill(tillOverrides = {}) {
      const second = pcscd.readers[1];
      if (!second || others.length > 0) throw new Error('the rig has one second reader');
      const customerId = await ledger.ledger.authenticate(TEST_API_KEY);
      const { apiKey } = await issueKey(ledger.db, { customerId });
      const other = await startTestService(
        { apiKey, reader: second.name, cloudUrl: ledger.url, ...tillOverrides },
        { pcscdSocket: pcscd.socketPath, limits, eventHeartbeatMs },
      );
      const added = await attached(other, second, apiKey);
      others.push(added);
      return added;
    },
    async close() {
      for (const other of others) {
        await other.reader.remove();
        await other.service.close();
      }
      await till.reader.remove();
      await service.close();
      await ledgerProxy.close();
      await ledger.close();
      await pcscd.stop();
    },
  };
}

export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The balance a virtual card holds, by its wallet format (a DESFire card: its wallet's value
 * file; 0 without the application or before its value file is made, as when a personalization
 * was pulled between the two); a corrupt card fails the test.
 */
export function walletBalance(card: AnyVirtualCard): number {
  if (card instanceof VirtualDesfireCard) {
    const file = card.application(DEFAULT_DESFIRE_AID)?.files.get(VALUE_FILE);
    if (file === undefined) return 0;
    if (file.type !== 'value') {
      throw new Error(`card ${card.id}: its wallet's value file (1) is of another type`);
    }
    return file.value;
  }
  const state = decodeWallet(card.block(4), card.block(5));
  if (state.kind === 'corrupt') throw new Error(`card ${card.id} is corrupt: ${state.reason}`);
  return state.kind === 'valid' ? state.balance : 0;
}
