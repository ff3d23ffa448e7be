// A MIFARE Classic 1K/4K card behind a PC/SC part 3 contactless reader, emulated in Node and
// presented to pcscd through the vpcd driver (see pcscd.ts and shared/pcsc-test-rig.md).
//
// vpcd protocol (the card is a TCP client of vpcd; connected = card present): every message,
// both ways, is a 2-byte big-endian length and a payload. A 1-byte payload from vpcd is a
// control byte: 00 power off, 01 power on, 02 reset (no answer to these), 04 get ATR (answer the
// ATR). Anything longer is a command APDU, answered with data + SW1 SW2.
//
// Emulated APDUs and answers:
//   GET UID        FF CA 00 00 00                      -> UID 90 00
//   LOAD KEY       FF 82 00 <slot> 06 <key>            -> 90 00 (63 00 for a slot >= keySlots)
//   AUTHENTICATE   FF 86 00 00 05 01 00 <blk> <60|61> <slot>, or obsolete FF 88 00 <blk> <60|61> <slot>
//                                                      -> 90 00; 63 00 for a wrong or unloaded
//                                                         key, which also drops authentication
//   READ BINARY    FF B0 00 <blk> 10                   -> 16 bytes 90 00 (key A reads as zeros
//                                                         in a trailer, as on a real card)
//   UPDATE BINARY  FF D6 00 <blk> 10 <16 bytes>        -> 90 00 (63 00 for the read-only block 0)
// READ/UPDATE outside the authenticated sector answer 69 82 and drop authentication (a real
// Classic card halts on such a command). Wrong lengths answer 67 00, other FF instructions
// 6D 00, other classes 6A 81. Power off, reset and removal drop authentication. Access bits are
// not interpreted: key A and key B of a sector both grant reading and writing its blocks.
import { Socket } from 'node:net';

export type CardSize = '1K' | '4K';

export type ApduCommand = 'getUid' | 'loadKey' | 'authenticate' | 'read' | 'write' | 'other';

export const APDU_COMMANDS: readonly ApduCommand[] = [
  'getUid',
  'loadKey',
  'authenticate',
  'read',
  'write',
  'other',
];

/** What a fault handler sees for each command APDU the card receives. */
export interface ApduEvent {
  /** A copy of the command APDU. */
  readonly apdu: Buffer;
  /** 0-based count of APDUs this card received since it was inserted (GET UID is usually 0). */
  readonly index: number;
  readonly command: ApduCommand;
  /** The block addressed by authenticate, read and write. */
  readonly block?: number;
}

/**
 * What the card does with an APDU:
 * - 'answer': execute it and answer (the default);
 * - 'pull-before': the card leaves the field before the command takes effect: the connection
 *   closes, nothing is executed;
 * - 'pull-after': the command takes effect (a write is committed), then the card leaves before
 *   answering;
 * - 'stall': never answer; the card stays present, silent, until removed. vpcd and pcscd have no
 *   timeout, so the transmit hangs until then;
 * - `{ delayMs }`: answer late. The command takes effect when the answer is sent, so a card
 *   removed during the delay has not executed it.
 */
export type FaultAction = 'answer' | 'pull-before' | 'pull-after' | 'stall' | { delayMs: number };

/** A persistent handler: return an action, or nothing to answer normally. */
export type ApduHandler = (event: ApduEvent) => FaultAction | undefined | void;

/**
 * Which APDU a one-shot fault hits:
 * - a command name: its next occurrence, e.g. `'write'`;
 * - `{ command, block?, nth? }`: the nth (1-based, default 1) occurrence of that command (on that
 *   block) counted from when the fault was armed;
 * - `{ index }`: the APDU with that index since insertion (see ApduEvent.index).
 */
export type FaultTrigger =
  ApduCommand | { command: ApduCommand; block?: number; nth?: number } | { index: number };

/** A one-shot fault armed with `card.failAt`. */
export interface Fault {
  /** Whether it has hit an APDU. Assert it, so a test cannot pass without its fault. */
  readonly fired: boolean;
  /** The APDU it hit. */
  readonly event: ApduEvent | undefined;
  /** Resolves with the APDU it hit, when it hits (e.g. to remove a stalled card afterwards). */
  readonly triggered: Promise<ApduEvent>;
  /** Disarms it if it has not fired. */
  cancel(): void;
}

export interface VirtualCardOptions {
  /** 4 or 7 bytes. */
  uid: Buffer;
  size?: CardSize;
  /** Initial contents of any blocks (16 bytes each), over the fresh-card defaults. */
  blocks?: Record<number, Buffer>;
}

export interface VirtualReaderOptions {
  /** Number of LOAD KEY slots (an ACR122U has 2: 0 and 1). */
  keySlots?: number;
}

const BLOCK_SIZE = 16;
const TRANSPORT_TRAILER = Buffer.from('FFFFFFFFFFFFFF078069FFFFFFFFFFFF', 'hex');
// The Classic ATR of PC/SC part 3: RID A0 00 00 03 06, standard 03 (ISO 14443 A part 3), card
// name 00 01 (1K) or 00 02 (4K). 0x4F at index 5 is what makes nfc-pcsc treat it as 14443-3.
const ATR_1K = Buffer.from('3B8F8001804F0CA000000306030001000000006A', 'hex');
const ATR_4K = withAtrChecksum(Buffer.from('3B8F8001804F0CA00000030603000200000000', 'hex'));

const SW_OK = Buffer.from([0x90, 0x00]);
const SW_FAILED = Buffer.from([0x63, 0x00]);
const SW_WRONG_LENGTH = Buffer.from([0x67, 0x00]);
const SW_NOT_ALLOWED = Buffer.from([0x69, 0x82]);
const SW_NOT_SUPPORTED = Buffer.from([0x6a, 0x81]);
const SW_INS_UNKNOWN = Buffer.from([0x6d, 0x00]);

const KEY_TYPE_A = 0x60;
const KEY_TYPE_B = 0x61;

function withAtrChecksum(atr: Buffer): Buffer {
  // TCK: XOR of every byte from T0 to the last historical byte.
  let tck = 0;
  for (const byte of atr.subarray(1)) tck ^= byte;
  return Buffer.concat([atr, Buffer.from([tck])]);
}

/** Number of blocks of a card size. */
export function blockCountOf(size: CardSize): number {
  return size === '1K' ? 64 : 256;
}

/** The sector of a block: 4-block sectors, then (4K, from block 128) 16-block sectors. */
export function sectorOfBlock(block: number): number {
  return block < 128 ? block >> 2 : 32 + ((block - 128) >> 4);
}

/** The sector trailer (last block) of a sector. */
export function trailerBlockOf(sector: number): number {
  return sector < 32 ? sector * 4 + 3 : 128 + (sector - 32) * 16 + 15;
}

/** Whether a block is a sector trailer. */
export function isTrailerBlock(block: number): boolean {
  return trailerBlockOf(sectorOfBlock(block)) === block;
}

interface ArmedFault {
  trigger: FaultTrigger;
  action: FaultAction;
  matches: number;
  fired: boolean;
  event: ApduEvent | undefined;
  resolve: (event: ApduEvent) => void;
}

// Lets VirtualReader consult a card's faults without making that part of the card's API.
let decideFault: (card: VirtualCard, event: ApduEvent) => FaultAction;

/** A MIFARE Classic card: memory, keys (in the trailers) and armed faults. */
export class VirtualCard {
  readonly uid: Buffer;
  readonly size: CardSize;
  readonly blockCount: number;
  readonly atr: Buffer;
  readonly #memory: Buffer;
  readonly #handlers = new Set<ApduHandler>();
  #faults: ArmedFault[] = [];

  static {
    decideFault = (card, event) => card.#decide(event);
  }

  constructor(options: VirtualCardOptions) {
    if (options.uid.length !== 4 && options.uid.length !== 7) {
      throw new RangeError(`a MIFARE Classic UID has 4 or 7 bytes, got ${options.uid.length}`);
    }
    this.uid = Buffer.from(options.uid);
    this.size = options.size ?? '1K';
    this.blockCount = blockCountOf(this.size);
    this.atr = this.size === '1K' ? ATR_1K : ATR_4K;
    this.#memory = Buffer.alloc(this.blockCount * BLOCK_SIZE);
    for (let sector = 0; sector <= sectorOfBlock(this.blockCount - 1); sector++) {
      TRANSPORT_TRAILER.copy(this.#memory, trailerBlockOf(sector) * BLOCK_SIZE);
    }
    this.#memory.set(manufacturerBlock(this.uid, this.size), 0);
    for (const [block, data] of Object.entries(options.blocks ?? {})) {
      this.setBlock(Number(block), data);
    }
  }

  /** The UID as the service's cardId: uppercase hex, no separators. */
  get id(): string {
    return this.uid.toString('hex').toUpperCase();
  }

  get sectorCount(): number {
    return sectorOfBlock(this.blockCount - 1) + 1;
  }

  /** A copy of a block's raw contents (trailer keys included). */
  block(block: number): Buffer {
    this.#checkBlock(block);
    return Buffer.from(this.#memory.subarray(block * BLOCK_SIZE, (block + 1) * BLOCK_SIZE));
  }

  /** Sets a block directly (any block, block 0 and trailers included): for test setup. */
  setBlock(block: number, data: Buffer): void {
    this.#checkBlock(block);
    if (data.length !== BLOCK_SIZE) {
      throw new RangeError(`block ${block}: a block has 16 bytes, got ${data.length}`);
    }
    this.#memory.set(data, block * BLOCK_SIZE);
  }

  /** A copy of the whole memory, to compare before and after. */
  dump(): Buffer {
    return Buffer.from(this.#memory);
  }

  keyA(sector: number): Buffer {
    return this.block(trailerBlockOf(sector)).subarray(0, 6);
  }

  keyB(sector: number): Buffer {
    return this.block(trailerBlockOf(sector)).subarray(10, 16);
  }

  /** Changes a sector's keys in its trailer, keeping its access bits. */
  setKeys(sector: number, keys: { keyA?: Buffer; keyB?: Buffer }): void {
    const trailerBlock = trailerBlockOf(sector);
    const trailer = this.block(trailerBlock);
    for (const key of [keys.keyA, keys.keyB]) {
      if (key && key.length !== 6) throw new RangeError(`a key has 6 bytes, got ${key.length}`);
    }
    keys.keyA?.copy(trailer, 0);
    keys.keyB?.copy(trailer, 10);
    this.setBlock(trailerBlock, trailer);
  }

  /**
   * Arms a one-shot fault, e.g. `card.failAt('write', 'pull-after')` (next write commits, then
   * the card is gone), `card.failAt({ command: 'read', nth: 2 }, 'stall')`,
   * `card.failAt({ index: 3 }, { delayMs: 500 })`. Faults stay armed across removal and
   * insertion until they fire or are cancelled; the earliest armed one wins an APDU.
   */
  failAt(trigger: FaultTrigger, action: FaultAction): Fault {
    let resolve!: (event: ApduEvent) => void;
    const triggered = new Promise<ApduEvent>((r) => (resolve = r));
    const armed: ArmedFault = {
      trigger,
      action,
      matches: 0,
      fired: false,
      event: undefined,
      resolve,
    };
    this.#faults.push(armed);
    return {
      get fired() {
        return armed.fired;
      },
      get event() {
        return armed.event;
      },
      triggered,
      cancel: () => {
        this.#faults = this.#faults.filter((fault) => fault !== armed);
      },
    };
  }

  /** Adds a persistent handler consulted for every APDU after the one-shot faults. */
  onApdu(handler: ApduHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** Disarms every fault and handler. */
  clearFaults(): void {
    this.#faults = [];
    this.#handlers.clear();
  }

  #decide(event: ApduEvent): FaultAction {
    let action: FaultAction | undefined;
    for (const fault of this.#faults) {
      if (!matches(fault, event)) continue;
      fault.fired = true;
      fault.event = event;
      fault.resolve(event);
      action ??= fault.action;
    }
    this.#faults = this.#faults.filter((fault) => !fault.fired);
    if (action !== undefined) return action;
    for (const handler of this.#handlers) {
      const result = handler(event);
      if (result !== undefined && result !== 'answer') return result;
    }
    return 'answer';
  }

  #checkBlock(block: number): void {
    if (!Number.isInteger(block) || block < 0 || block >= this.blockCount) {
      throw new RangeError(
        `block ${block} is not on a ${this.size} card (0-${this.blockCount - 1})`,
      );
    }
  }
}

function matches(fault: ArmedFault, event: ApduEvent): boolean {
  const trigger = typeof fault.trigger === 'string' ? { command: fault.trigger } : fault.trigger;
  if ('index' in trigger) return event.index === trigger.index;
  if (trigger.command !== event.command) return false;
  if (trigger.block !== undefined && trigger.block !== event.block) return false;
  fault.matches += 1;
  return fault.matches === (trigger.nth ?? 1);
}

function manufacturerBlock(uid: Buffer, size: CardSize): Buffer {
  // 4-byte UID: UID, BCC (XOR of the UID bytes), SAK, ATQA (LSB first), 8 bytes of
  // manufacturer data. 7-byte UID: UID, SAK, ATQA, 6 bytes of manufacturer data.
  const sak = size === '1K' ? 0x08 : 0x18;
  const atqa = uid.length === 4 ? (size === '1K' ? 0x04 : 0x02) : size === '1K' ? 0x44 : 0x42;
  const bcc = uid.length === 4 ? [uid.reduce((xor, byte) => xor ^ byte, 0)] : [];
  const header = Buffer.from([...uid, ...bcc, sak, atqa, 0x00]);
  const manufacturerData = Buffer.from('4659255849102302', 'hex');
  return Buffer.concat([header, manufacturerData]).subarray(0, BLOCK_SIZE);
}

function classify(apdu: Buffer): { command: ApduCommand; block?: number } {
  if (apdu.length < 4 || apdu[0] !== 0xff) return { command: 'other' };
  const p1 = apdu[2] ?? 0;
  const p2 = apdu[3] ?? 0;
  switch (apdu[1]) {
    case 0xca:
      return { command: 'getUid' };
    case 0x82:
      return { command: 'loadKey' };
    case 0x86:
      return apdu.length >= 10
        ? { command: 'authenticate', block: ((apdu[6] ?? 0) << 8) | (apdu[7] ?? 0) }
        : { command: 'authenticate' };
    case 0x88:
      return { command: 'authenticate', block: (p1 << 8) | p2 };
    case 0xb0:
      return { command: 'read', block: (p1 << 8) | p2 };
    case 0xd6:
      return { command: 'write', block: (p1 << 8) | p2 };
    default:
      return { command: 'other' };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function emptyCounts(): Record<ApduCommand, number> {
  return { getUid: 0, loadKey: 0, authenticate: 0, read: 0, write: 0, other: 0 };
}

interface Session {
  readonly card: VirtualCard;
  readonly socket: Socket;
  readonly closed: Promise<void>;
  isClosed: boolean;
  authenticatedSector: number | null;
  apduCount: number;
  stalled: boolean;
  inbox: Buffer;
  queue: Promise<void>;
  connected: boolean;
  /** Marks the card gone; idempotent. */
  end(): void;
}

const insertedCards = new WeakSet<VirtualCard>();

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
  readonly #keySlots: (Buffer | undefined)[];
  #session: Session | null = null;
  #apdus: Buffer[] = [];
  #counts = emptyCounts();

  constructor(port: number, options: VirtualReaderOptions = {}) {
    this.port = port;
    const slotCount = options.keySlots ?? 2;
    let slots = keySlotsByPort.get(port);
    if (!slots || slots.length !== slotCount) {
      slots = new Array<Buffer | undefined>(slotCount).fill(undefined);
      keySlotsByPort.set(port, slots);
    }
    this.#keySlots = slots;
  }

  /** The card in the reader, or null. */
  get card(): VirtualCard | null {
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

  resetApduLog(): void {
    this.#apdus = [];
    this.#counts = emptyCounts();
  }

  /**
   * Puts a card on the reader: connects to vpcd. Resolves once connected; pcscd notices at its
   * next poll (up to ~400 ms), then nfc-pcsc sends GET UID and emits `card`. Right after a
   * removal on this port it first waits out the settle time (see REMOVAL_SETTLE_MS).
   */
  async insert(card: VirtualCard): Promise<void> {
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
      authenticatedSector: null,
      apduCount: 0,
      stalled: false,
      inbox: Buffer.alloc(0),
      queue: Promise.resolve(),
      connected: false,
      end: () => {
        if (session.isClosed) return;
        session.isClosed = true;
        session.authenticatedSector = null;
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
          session.authenticatedSector = null;
          return;
        case 0x04: // get ATR
          this.#send(session, session.card.atr);
          return;
        default:
          return;
      }
    }

    const { command, block } = classify(message);
    const apdu = Buffer.from(message);
    const event: ApduEvent = {
      apdu,
      index: session.apduCount++,
      command,
      ...(block !== undefined ? { block } : {}),
    };
    this.#apdus.push(apdu);
    this.#counts[command] += 1;

    const action = decideFault(session.card, event);
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
    const response = this.#execute(session, message);
    if (action === 'pull-after') {
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

  #execute(session: Session, apdu: Buffer): Buffer {
    const card = session.card;
    if (apdu[0] !== 0xff) return SW_NOT_SUPPORTED;
    const p1 = apdu[2] ?? 0;
    const p2 = apdu[3] ?? 0;
    switch (apdu[1]) {
      case 0xca: {
        // GET DATA: P1 00 is the UID (P1 01, the ATS, a Classic card does not have).
        if (p1 !== 0x00 || p2 !== 0x00) return SW_NOT_SUPPORTED;
        return Buffer.concat([card.uid, SW_OK]);
      }
      case 0x82: {
        if (apdu.length !== 11 || apdu[4] !== 6) return SW_WRONG_LENGTH;
        if (p2 >= this.#keySlots.length) return SW_FAILED;
        this.#keySlots[p2] = Buffer.from(apdu.subarray(5, 11));
        return SW_OK;
      }
      case 0x86: {
        if (apdu.length !== 10 || apdu[4] !== 5) return SW_WRONG_LENGTH;
        if (apdu[5] !== 0x01) return SW_NOT_SUPPORTED;
        return this.#authenticate(
          session,
          ((apdu[6] ?? 0) << 8) | (apdu[7] ?? 0),
          apdu[8] ?? 0,
          apdu[9] ?? 0,
        );
      }
      case 0x88: {
        if (apdu.length !== 6) return SW_WRONG_LENGTH;
        return this.#authenticate(session, (p1 << 8) | p2, apdu[4] ?? 0, apdu[5] ?? 0);
      }
      case 0xb0: {
        if (apdu.length !== 5 || apdu[4] !== BLOCK_SIZE) return SW_WRONG_LENGTH;
        const block = (p1 << 8) | p2;
        if (!this.#mayAccess(session, block)) return SW_NOT_ALLOWED;
        const data = card.block(block);
        // Key A never reads back from a trailer.
        if (isTrailerBlock(block)) data.fill(0, 0, 6);
        return Buffer.concat([data, SW_OK]);
      }
      case 0xd6: {
        if (apdu.length !== 5 + BLOCK_SIZE || apdu[4] !== BLOCK_SIZE) return SW_WRONG_LENGTH;
        const block = (p1 << 8) | p2;
        if (!this.#mayAccess(session, block)) return SW_NOT_ALLOWED;
        if (block === 0) return SW_FAILED;
        card.setBlock(block, apdu.subarray(5));
        return SW_OK;
      }
      default:
        return SW_INS_UNKNOWN;
    }
  }

  #authenticate(session: Session, block: number, keyType: number, slot: number): Buffer {
    const card = session.card;
    const key = this.#keySlots[slot];
    session.authenticatedSector = null;
    if (!key || block >= card.blockCount || (keyType !== KEY_TYPE_A && keyType !== KEY_TYPE_B))
      return SW_FAILED;
    const sector = sectorOfBlock(block);
    const expected = keyType === KEY_TYPE_A ? card.keyA(sector) : card.keyB(sector);
    if (!key.equals(expected)) return SW_FAILED;
    session.authenticatedSector = sector;
    return SW_OK;
  }

  #mayAccess(session: Session, block: number): boolean {
    if (block < session.card.blockCount && session.authenticatedSector === sectorOfBlock(block))
      return true;
    // A real Classic card halts on a command outside its authenticated sector.
    session.authenticatedSector = null;
    return false;
  }
}
