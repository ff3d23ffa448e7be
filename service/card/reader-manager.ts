import { EventEmitter } from 'node:events';
import type { NFC, Reader } from 'nfc-pcsc';
import { errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { boundedApdu } from './bounded-apdu.ts';
import { CardSession } from './card-session.ts';
import { cardTypeOfAtr, type CardType } from './card-type.ts';
import { DesfireWalletSession } from './desfire/desfire-wallet-session.ts';
import type { WalletCard } from './card-face.ts';
import { OperationQueue } from './operation-queue.ts';
import { pcscdProblem, RetryBackoff, type SmartCardServiceProbe } from './pcscd-probe.ts';
import { afterAnswersRead, lastAnswerAt, watchAnswers } from './reader-answers.ts';
import {
  loadProblem,
  readerErrorProblem,
  ReaderProblemError,
  type ReaderProblem,
} from './reader-problems.ts';
import { formatCardId } from './wallet-format.ts';
import type { WalletKeys } from './wallet-keys.ts';

export type PcscState = 'stopped' | 'unavailable' | 'ready';

/**
 * The card on the reader for one operation: its face (wallet-card.ts), and what personalizing
 * a card of its type takes (a MIFARE Classic card's session, or a DESFire card's).
 */
export type ReaderCard = WalletCard &
  Partial<Pick<CardSession, 'openWallet' | 'readSlots' | 'writeSlotBlock' | 'writeTrailer'>> &
  Partial<Pick<DesfireWalletSession, 'personalize'>>;

export interface CardPresence {
  cardId: string;
  reader: string;
  since: Date;
}

/** What the tray and the status events show. */
export interface ReaderStatus {
  pcsc: PcscState;
  /** Contactless readers seen (SAM slots and other readers are left out). */
  readers: string[];
  /** The reader card operations use. */
  reader: string | null;
  card: CardPresence | null;
  /** Why no reader can be used (cleared once PC/SC is ready), or the last card's problem. */
  problem: (ReaderProblem & { at: Date }) | null;
}

export type ReaderEvent =
  | { type: 'pcsc'; state: PcscState }
  | { type: 'reader-attached'; reader: string }
  | { type: 'reader-detached'; reader: string }
  | { type: 'card-present'; reader: string; cardId: string }
  | { type: 'card-removed'; reader: string; cardId: string }
  | { type: 'problem'; message: string };

export interface ReaderManagerOptions {
  /** Substring of the reader name to use; default: the first contactless reader. */
  readerName?: string;
  /** Which key opens each card's wallet sector. */
  keys: WalletKeys;
  /**
   * pcscd's unix socket, probed before a PC/SC context is created. Undefined where there is no
   * pcscd (Windows and macOS have their own PC/SC service, which does not busy-wait).
   */
  pcscdSocket?: string;
  /**
   * Whether the platform's smart-card service runs (see smartCardServiceProbe); asked before
   * each attempt to create a PC/SC context, after the pcscd socket probe if both are given.
   * The problem it gives is the reader problem shown while it says no.
   */
  serviceProbe?: SmartCardServiceProbe;
  /** nfc-pcsc's NFC; may load it first (a failed load is a reader problem, not a crash). */
  createNfc: () => NFC | Promise<NFC>;
  operationTimeoutMs: number;
  queueLimit: number;
  /**
   * How long to wait before looking for PC/SC again while it is away: this (default 1 s),
   * doubling up to `probeMaxIntervalMs` (default 30 s), from the first wait again once a reader
   * is attached (RetryBackoff).
   */
  probeIntervalMs?: number;
  probeMaxIntervalMs?: number;
  log: Logger;
}

interface ReaderManagerEvents {
  event: [ReaderEvent];
  status: [ReaderStatus];
}

/**
 * nfc-pcsc's NFC, imported when first needed rather than at module load: its native binding
 * (@pokusew/pcsclite) fails to load without libpcsclite.so.1 on Linux, or when built for another
 * Node ABI (Electron's differs from Node's). A static import would kill the whole process; here
 * the failure is a reader problem and the HTTP service keeps answering.
 */
export async function loadNfc(): Promise<NFC> {
  let Nfc: typeof NFC | undefined;
  try {
    // nfc-pcsc is CommonJS: Node gives its exports as the default export, a loader that turns
    // import() into require() (tsx, bundlers) gives them as the namespace itself.
    const loaded = (await import('nfc-pcsc')) as unknown as {
      NFC?: typeof NFC;
      default?: { NFC?: typeof NFC };
    };
    Nfc = loaded.NFC ?? loaded.default?.NFC;
  } catch (error) {
    const message = messageOf(error);
    const hint = /NODE_MODULE_VERSION|different Node\.js version/.test(message)
      ? 'the reader module was built for another Node version; run npm run app, which rebuilds it'
      : /libpcsclite/.test(message)
        ? 'install the PC/SC library (Debian/Ubuntu: sudo apt install pcscd libpcsclite1)'
        : 'the reader module could not be loaded';
    throw new Error(`${hint} (${message.split('\n')[0]})`, { cause: error });
  }
  if (!Nfc) throw new Error('the reader module has no NFC class (an incompatible nfc-pcsc)');
  return new Nfc();
}

/** The longest answer a DESFire frame brings: 59 bytes of data, its status word, room to spare. */
const MAX_ANSWER = 256;

/** A SAM slot of a dual reader ("... SAM 0", "... SAM Interface") holds no customer card. */
const SAM_SLOT = /\bSAM\b/i;
/**
 * Errors after which the PC/SC context is dead: pcscd went away or restarted. Nothing recovers
 * in that context (docs/pcsc-test-rig.md), so a new NFC is built once pcscd answers again.
 */
const CONTEXT_LOST =
  /RPC transport|SCardGetStatusChange|SCardEstablishContext|no service|service (was )?stopped/i;

/**
 * Tracks PC/SC readers and the card on the chosen reader through nfc-pcsc, and runs card
 * operations one at a time. Survives pcscd being absent at start, dying and restarting.
 */
export class ReaderManager extends EventEmitter<ReaderManagerEvents> {
  readonly #options: ReaderManagerOptions;
  readonly #queue: OperationQueue;
  readonly #readers = new Map<string, Reader>();
  #nfc: NFC | undefined;
  #state: PcscState = 'stopped';
  #card: CardPresence | null = null;
  /** The present card's type, from its ATR. */
  #cardType: CardType = 'mifare-classic';
  #problem: ReaderStatus['problem'] = null;
  #timer: NodeJS.Timeout | undefined;
  #generation = 0;
  readonly #backoff: RetryBackoff;

  constructor(options: ReaderManagerOptions) {
    super();
    this.#options = options;
    // A waiter's turn is judged on the chosen reader's answers too: see OperationQueue.
    this.#queue = new OperationQueue(
      options.queueLimit,
      () => {
        const reader = this.#selected();
        return reader ? lastAnswerAt(reader) : -Infinity;
      },
      (judge) => afterAnswersRead(this.#selected(), judge),
    );
    this.#backoff = new RetryBackoff(options.probeIntervalMs, options.probeMaxIntervalMs);
  }

  get status(): ReaderStatus {
    return {
      pcsc: this.#state,
      readers: [...this.#readers.keys()].filter((name) => this.#isContactless(name)),
      reader: this.#selected()?.name ?? null,
      card: this.#card,
      problem: this.#problem,
    };
  }

  /** Starts watching for pcscd and readers; returns at once. */
  start(): void {
    if (this.#state !== 'stopped') return;
    this.#setState('unavailable');
    void this.#connect();
  }

  /**
   * Looks for PC/SC now instead of at the next backoff step (the operator plugged the reader in,
   * or fixed the smart-card service); does nothing while PC/SC is ready or stopped.
   */
  retryNow(): void {
    if (this.#state !== 'unavailable' || this.#nfc) return;
    this.#backoff.reset();
    clearTimeout(this.#timer);
    void this.#connect();
  }

  /** True while a card operation holds the reader (a read, recharge, payout...). */
  get busy(): boolean {
    return this.#queue.busy;
  }

  /** Lets the running card operation finish (bounded), then releases PC/SC. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#generation += 1;
    clearTimeout(this.#timer);
    await Promise.race([this.#queue.drained(), delay(graceMs)]);
    this.#teardown();
    this.#setState('stopped');
  }

  /**
   * Runs `operation` on the card on the chosen reader, alone. Fails with NoReader, NoCard,
   * CardBusy, or CardNotResponding when its turn does not come within the card timeout; each
   * APDU inside has the same timeout.
   */
  withCard<T>(operation: (card: ReaderCard) => Promise<T>): Promise<T> {
    const { operationTimeoutMs, keys } = this.#options;
    return this.#queue.run(async (hold) => {
      const reader = this.#selected();
      if (!reader) throw errors.noReader();
      const card = this.#card;
      if (!card || card.reader !== reader.name || !reader.card) throw errors.noCard();
      if (this.#cardType === 'desfire') {
        const transmit = (apdu: Buffer) =>
          boundedApdu(
            hold,
            operationTimeoutMs,
            async () => {
              const answer = await reader.transmit(apdu, MAX_ANSWER);
              // No answer at all (vpcd's when the card left; a reader's after a field loss): gone.
              if (answer.length === 0) throw errors.noCard();
              return answer;
            },
            () => lastAnswerAt(reader),
            (judge) => afterAnswersRead(reader, judge),
          );
        return operation(
          new DesfireWalletSession(card.cardId, transmit, keys.desfireKeysFor(card.cardId)),
        );
      }
      return operation(new CardSession(reader, card.cardId, keys, operationTimeoutMs, hold));
    }, Date.now() + operationTimeoutMs);
  }

  async #connect(): Promise<void> {
    const generation = this.#generation;
    const socket = this.#options.pcscdSocket;
    const problem =
      (socket === undefined ? null : await pcscdProblem(socket)) ??
      (await this.#options.serviceProbe?.check()) ??
      null;
    if (generation !== this.#generation) return;
    if (problem) {
      // The same answer at every retry is reported once.
      if (this.#problem?.message !== problem.message) this.#reportProblem(problem);
      this.#retryLater();
      return;
    }
    let nfc: NFC;
    try {
      nfc = await this.#options.createNfc();
    } catch (error) {
      if (generation !== this.#generation) return;
      const failed = problemOf(error, (message) =>
        loadProblem(`PC/SC is not available: ${message}`),
      );
      // The same failure every second (e.g. a library that cannot load) is reported once.
      if (this.#problem?.message !== failed.message) this.#reportProblem(failed);
      this.#retryLater();
      return;
    }
    if (generation !== this.#generation) {
      // Stopped while it loaded: release the context it just made.
      setImmediate(() => safely(() => nfc.close()));
      return;
    }
    this.#nfc = nfc;
    nfc.on('reader', (reader) => this.#attach(reader, nfc));
    nfc.on('error', (error) => {
      if (this.#nfc !== nfc) return;
      this.#reportProblem(
        problemOf(error, (message) => ({ code: 'pcsc-error', message: `PC/SC error: ${message}` })),
      );
      this.#contextLost();
    });
    // What kept PC/SC away is over; a card's problem is said when it happens.
    this.#problem = null;
    this.#setState('ready');
    this.#options.log.info('PC/SC context ready');
  }

  #attach(reader: Reader, nfc: NFC): void {
    const name = reader.name;
    // Every emitter keeps an error listener: an unheard 'error' would crash the process.
    reader.on('error', (error) => {
      if (this.#nfc !== nfc) return;
      if (CONTEXT_LOST.test(error.message)) {
        this.#reportProblem({
          code: 'pcsc-error',
          message: `PC/SC connection lost: ${error.message}`,
        });
        this.#contextLost();
        return;
      }
      // nfc-pcsc reports here a card it cannot identify (e.g. ISO 14443-4 without an AID) and,
      // patched (patches/nfc-pcsc+0.8.1.patch), a card it cannot connect to: another program
      // holds the reader. PC/SC's own words are in the wrapped error.
      const previous = (error as { previous?: unknown }).previous;
      this.#reportProblem(
        readerErrorProblem(
          `${name}: ${error.message}`,
          previous instanceof Error ? previous.message : undefined,
        ),
      );
    });
    if (!this.#isContactless(name)) {
      this.#options.log.info(`ignoring reader ${name}`);
      return;
    }
    readEveryUid(reader);
    watchAnswers(reader);
    this.#readers.set(name, reader);
    this.#backoff.reset();
    this.#emitEvent({ type: 'reader-attached', reader: name });
    reader.on('card', (card) => {
      if (this.#nfc !== nfc || !card.uid || reader !== this.#selected()) return;
      let cardId: string;
      try {
        cardId = formatCardId(card.uid);
      } catch {
        this.#reportProblem({
          code: 'card-unreadable',
          message: `${name}: a card with an unusable UID (${card.uid})`,
        });
        return;
      }
      this.#card = { cardId, reader: name, since: new Date() };
      // A card was read: the reader is this program's again.
      if (this.#problem?.code === 'reader-in-use' || this.#problem?.code === 'card-unreadable')
        this.#problem = null;
      this.#cardType = cardTypeOfAtr(card.atr);
      this.#emitEvent({ type: 'card-present', reader: name, cardId });
    });
    reader.on('card.off', () => this.#cardGone(name));
    reader.on('end', () => {
      if (this.#readers.get(name) !== reader) return;
      this.#readers.delete(name);
      this.#cardGone(name);
      this.#emitEvent({ type: 'reader-detached', reader: name });
    });
  }

  #cardGone(readerName: string): void {
    const card = this.#card;
    if (!card || card.reader !== readerName) return;
    this.#card = null;
    this.#emitEvent({ type: 'card-removed', reader: readerName, cardId: card.cardId });
  }

  #contextLost(): void {
    if (this.#state !== 'ready') return;
    this.#teardown();
    this.#setState('unavailable');
    this.#retryLater();
  }

  #teardown(): void {
    const nfc = this.#nfc;
    this.#nfc = undefined;
    const readers = [...this.#readers.values()];
    for (const name of this.#readers.keys()) {
      this.#cardGone(name);
      this.#emitEvent({ type: 'reader-detached', reader: name });
    }
    this.#readers.clear();
    if (!nfc) return;
    // Not synchronously inside an nfc-pcsc handler: closing there re-enters pcsclite.
    setImmediate(() => {
      for (const reader of readers) safely(() => reader.close());
      safely(() => nfc.close());
    });
  }

  #retryLater(): void {
    clearTimeout(this.#timer);
    const generation = this.#generation;
    this.#timer = setTimeout(() => {
      if (generation === this.#generation && this.#state !== 'stopped') void this.#connect();
    }, this.#backoff.next());
  }

  #selected(): Reader | undefined {
    for (const [name, reader] of this.#readers) {
      if (this.#isContactless(name)) return reader;
    }
    return undefined;
  }

  #isContactless(name: string): boolean {
    if (SAM_SLOT.test(name)) return false;
    const wanted = this.#options.readerName;
    return wanted === undefined || name.includes(wanted);
  }

  #setState(state: PcscState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#emitEvent({ type: 'pcsc', state });
  }

  #reportProblem(problem: ReaderProblem): void {
    this.#problem = { ...problem, at: new Date() };
    this.#options.log.warn(problem.message);
    this.#emitEvent({ type: 'problem', message: problem.message });
  }

  #emitEvent(event: ReaderEvent): void {
    this.emit('event', event);
    this.emit('status', this.status);
  }
}

/**
 * nfc-pcsc (0.8.1, src/Reader.js handleTag) reads the UID of an ISO 14443-3 card, but makes an
 * ISO 14443-4 card (a DESFire) wait for an ISO 7816 application SELECT (its `aid` setting),
 * and emits no `card` without one. DESFire wallets are reached with native commands, and the
 * reader's GET DATA (FF CA 00 00 00) gives the UID of any contactless card, so every card takes
 * nfc-pcsc's own UID path.
 */
function readEveryUid(reader: Reader): void {
  const tags = reader as unknown as Record<string, unknown>;
  if (typeof tags.handle_Iso_14443_3_Tag === 'function') {
    tags.handle_Iso_14443_4_Tag = tags.handle_Iso_14443_3_Tag;
  }
}

function safely(action: () => void): void {
  try {
    action();
  } catch {
    // Closing a context or reader that pcscd already dropped may throw; it is gone either way.
  }
}

/** The problem an error carries (ReaderProblemError), or `otherwise` of its message. */
function problemOf(error: unknown, otherwise: (message: string) => ReaderProblem): ReaderProblem {
  return error instanceof ReaderProblemError ? error.problem : otherwise(messageOf(error));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
