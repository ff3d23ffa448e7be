// The vpcd transport of the PC/SC test rig: presents a virtual MIFARE Classic or DESFire card to
// a real pcscd through the vpcd driver (see pcscd.ts and docs/pcsc-test-rig.md).
//
// vpcd protocol (the card is a TCP client of vpcd; connected = card present): every message,
// both ways, is a 2-byte big-endian length and a payload. A 1-byte payload from vpcd is a
// control byte: 00 power off, 01 power on, 02 reset (no answer to these), 04 get ATR (answer the
// ATR). Anything longer is a command APDU, answered with data + SW1 SW2.
//
// The card itself and what it does with each APDU (keys, access bits, faults) are the
// product's: service/card/simulator/virtual-card.ts. This file is only the vpcd transport.
import { Socket } from 'node:net';

import {
  APDU_COMMANDS,
  ContactlessFrontEnd,
  classifyApdu,
  type AnyVirtualCard,
  type ApduCommand,
  type ApduEvent,
  type CardContact,
} from '../../service/card/simulator/virtual-card.ts';

export * from '../../service/card/simulator/virtual-card.ts';
export * from '../../service/card/simulator/virtual-desfire-card.ts';

export interface VirtualReaderOptions {
  /** Number of LOAD KEY slots (an ACR122U has 2: 0 and 1). */
  keySlots?: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function emptyCounts(): Record<ApduCommand, number> {
  return Object.fromEntries(APDU_COMMANDS.map((command) => [command, 0])) as Record<
    ApduCommand,
    number
  >;
}

interface Session extends CardContact {
  readonly socket: Socket;
  readonly closed: Promise<void>;
  isClosed: boolean;
  apduCount: number;
  stalled: boolean;
  inbox: Buffer;
  queue: Promise<void>;
  connected: boolean;
  /** Marks the card gone; idempotent. */
  end(): void;
}

const insertedCards = new WeakSet<AnyVirtualCard>();

// LOAD KEY slots per vpcd port. The port is the physical reader: a VirtualReader object is only
// a handle on it, and nfc-pcsc caches which key it loaded in which slot for as long as its
// Reader lives, so a second handle on the same port must see the same keys.
// vpcd learns that a card left only when it next talks to it. If that is a transmit (not its
// 400 ms presence poll), it drops the connection and its very next poll accepts whatever card
// connected meanwhile: pcscd then never sees the reader empty, reports no removal nor
// insertion, and nfc-pcsc's GET UID for the new card is never sent. A person cannot swap cards
// that fast; the rig waits this long after a card left a port before the next one connects.
const REMOVAL_SETTLE_MS = 600;
const settleUntilByPort = new Map<number, number>();

const keySlotsByPort = new Map<number, (Buffer | undefined)[]>();

/**
 * One vpcd reader slot (one TCP port). Holds at most one card; its LOAD KEY slots survive card
 * removal, as on an ACR122U, and are shared by every VirtualReader on the same port.
 */
export class VirtualReader {
  readonly port: number;
  readonly #frontEnd: ContactlessFrontEnd;
  #session: Session | null = null;
  #apdus: Buffer[] = [];
  #counts = emptyCounts();
  #resets = 0;

  constructor(port: number, options: VirtualReaderOptions = {}) {
    this.port = port;
    const slotCount = options.keySlots ?? 2;
    let slots = keySlotsByPort.get(port);
    if (!slots || slots.length !== slotCount) {
      slots = new Array<Buffer | undefined>(slotCount).fill(undefined);
      keySlotsByPort.set(port, slots);
    }
    this.#frontEnd = new ContactlessFrontEnd(slots);
  }

  /** The card in the reader, or null. */
  get card(): AnyVirtualCard | null {
    return this.#session?.card ?? null;
  }

  /** Copies of the command APDUs received since the last resetApduLog(). */
  get apdus(): Buffer[] {
    return [...this.#apdus];
  }

  /** APDUs received by command since the last resetApduLog(). */
  get counts(): Readonly<Record<ApduCommand, number>> {
    return { ...this.#counts };
  }

  /** Card resets (vpcd's control byte 02) since the last resetApduLog(). */
  get resets(): number {
    return this.#resets;
  }

  resetApduLog(): void {
    this.#apdus = [];
    this.#counts = emptyCounts();
    this.#resets = 0;
  }

  /**
   * Puts a card on the reader: connects to vpcd. Resolves once connected; pcscd notices at its
   * next poll (up to ~400 ms), then nfc-pcsc sends GET UID and emits `card`. Right after a
   * removal on this port it first waits out the settle time (see REMOVAL_SETTLE_MS).
   */
  async insert(card: AnyVirtualCard): Promise<void> {
    if (this.#session) throw new Error(`reader on port ${this.port} already holds a card`);
    if (insertedCards.has(card)) throw new Error(`card ${card.id} is already on a reader`);
    insertedCards.add(card);
    const socket = new Socket();
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const session: Session = {
      card,
      socket,
      closed,
      isClosed: false,
      authenticated: null,
      halted: false,
      apduCount: 0,
      stalled: false,
      inbox: Buffer.alloc(0),
      queue: Promise.resolve(),
      connected: false,
      end: () => {
        if (session.isClosed) return;
        session.isClosed = true;
        session.authenticated = null;
        insertedCards.delete(card);
        if (this.#session === session) this.#session = null;
        settleUntilByPort.set(this.port, Date.now() + REMOVAL_SETTLE_MS);
        resolveClosed();
      },
    };
    this.#session = session;
    socket.on('close', () => session.end());
    socket.on('data', (chunk: Buffer) => this.#receive(session, chunk));

    const settleMs = (settleUntilByPort.get(this.port) ?? 0) - Date.now();
    if (settleMs > 0) await sleep(settleMs);
    if (session.isClosed)
      throw new Error(`card ${card.id} was removed before it reached the reader`);
    session.connected = true;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        session.end();
        reject(new Error(`cannot insert a card on port ${this.port}: ${error.message}`));
      };
      socket.once('error', onError);
      socket.connect({ host: '127.0.0.1', port: this.port }, () => {
        socket.off('error', onError);
        // Errors after connecting (pcscd dying resets the connection) end in 'close', which
        // is the card leaving; without a listener they would crash the test process.
        socket.on('error', () => {});
        socket.setNoDelay(true);
        resolve();
      });
    });
  }

  /** Takes the card off the reader; resolves when the connection is closed. No-op if empty. */
  async remove(): Promise<void> {
    const session = this.#session;
    if (!session) return;
    this.#drop(session);
    await session.closed;
  }

  /**
   * Resolves when the card now on the reader leaves it: remove(), a pull fault, or vpcd closing
   * the connection (pcscd stopping). Resolves at once if the reader is empty.
   */
  waitForRemoval(): Promise<void> {
    return this.#session?.closed ?? Promise.resolve();
  }

  #drop(session: Session): void {
    // FIN or RST makes no difference to vpcd: either way its recv gets nothing and it returns
    // an empty response (nfc-pcsc: "Invalid response length 0").
    if (session.isClosed) return;
    session.socket.destroy();
    // Still settling, never connected: no 'close' will come.
    if (!session.connected) session.end();
  }

  #receive(session: Session, chunk: Buffer): void {
    session.inbox = Buffer.concat([session.inbox, chunk]);
    while (session.inbox.length >= 2) {
      const length = session.inbox.readUInt16BE(0);
      if (session.inbox.length < 2 + length) break;
      const message = Buffer.from(session.inbox.subarray(2, 2 + length));
      session.inbox = session.inbox.subarray(2 + length);
      // One message at a time, in order: a delayed answer holds back everything after it.
      session.queue = session.queue.then(() => this.#handle(session, message));
    }
  }

  async #handle(session: Session, message: Buffer): Promise<void> {
    if (session.isClosed || session.stalled) return;
    if (message.length === 1) {
      switch (message[0]) {
        case 0x00: // power off
        case 0x01: // power on
        case 0x02: // reset
          // pcscd's SCardDisconnect/SCardReconnect with SCARD_RESET_CARD sends 02.
          if (message[0] === 0x02) this.#resets += 1;
          this.#frontEnd.reactivate(session);
          return;
        case 0x04: // get ATR
          this.#send(session, session.card.atr);
          return;
        default:
          return;
      }
    }

    const { command, block } = classifyApdu(message);
    const apdu = Buffer.from(message);
    const event: ApduEvent = {
      apdu,
      index: session.apduCount++,
      command,
      ...(block !== undefined ? { block } : {}),
    };
    this.#apdus.push(apdu);
    this.#counts[command] += 1;

    const action = session.card.decide(event);
    if (action === 'stall') {
      session.stalled = true;
      return;
    }
    if (action === 'pull-before') {
      this.#drop(session);
      return;
    }
    if (typeof action === 'object') {
      await sleep(action.delayMs);
      if (session.isClosed) return;
    }
    const response = this.#frontEnd.execute(session, message, action === 'tear');
    if (action === 'pull-after' || action === 'tear') {
      this.#drop(session);
      return;
    }
    this.#send(session, response);
  }

  #send(session: Session, payload: Buffer): void {
    if (session.isClosed) return;
    const frame = Buffer.alloc(2 + payload.length);
    frame.writeUInt16BE(payload.length, 0);
    payload.copy(frame, 2);
    // One write per frame: with TCP_NODELAY a split frame would cost vpcd an extra recv.
    session.socket.write(frame);
  }
}
