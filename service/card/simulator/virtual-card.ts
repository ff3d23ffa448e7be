// A MIFARE Classic 1K/4K card and the contactless front end of a PC/SC part 3 reader, in Node:
// the card of the built-in simulator (simulated-pcsc.ts) and of the PC/SC test rig (which
// presents it to a real pcscd through vpcd). One implementation, so the simulator behaves like
// the card the tests prove the service against.
//
// Emulated APDUs and answers (ContactlessFrontEnd.execute):
//   GET UID        FF CA 00 00 00                      -> UID 90 00
//   LOAD KEY       FF 82 00 <slot> 06 <key>            -> 90 00 (63 00 for a slot >= keySlots)
//   AUTHENTICATE   FF 86 00 00 05 01 00 <blk> <60|61> <slot>, or obsolete FF 88 00 <blk> <60|61> <slot>
//                                                      -> 90 00; 63 00 for a wrong or unloaded
//                                                         key or a blocked sector, which also
//                                                         drops authentication
//   READ BINARY    FF B0 00 <blk> 10                   -> 16 bytes 90 00
//   UPDATE BINARY  FF D6 00 <blk> 10 <16 bytes>        -> 90 00 (63 00 for the read-only block 0)
//   VALUE BLOCK    FF D7 00 <blk> 05 <01|02> <4 bytes, MSB first>
//                                                      -> 90 00: INCREMENT (01) or DECREMENT (02)
//                                                         the value block, then TRANSFER into it
//   RESTORE VALUE  FF D7 00 <src> 02 03 <dst>          -> 90 00: RESTORE the source, TRANSFER
//                                                         into the destination (same sector)
//   READ VALUE     FF B1 00 <blk> 04                   -> 4 bytes (MSB first) 90 00
//   (the value block APDUs of the ACR122U and ACR1252U, which PC/SC part 3 leaves to vendors;
//   63 00 where the card refuses: not a value block, or its access bits do not allow it)
// A TRANSFER writes the value and keeps the destination's address byte (the datasheet: "during
// increment, decrement, restore and transfer operations the address remains unchanged").
// A failed authentication that reached the card (a wrong key, a blocked sector, a block not on
// the card) halts it, as the MIFARE Classic protocol does: the card answers nothing until it is
// re-activated, so the reader answers 63 00 to every AUTHENTICATE, READ BINARY and UPDATE BINARY
// after it, the right key included (what an ACR122U gives). GET UID and LOAD KEY, which the
// reader answers itself, still work. Re-activation is the reader's RF reset and re-selection:
// a PC/SC reset (SCardDisconnect or SCardReconnect with SCARD_RESET_CARD or
// SCARD_UNPOWER_CARD), which reaches the card as vpcd's power off, power on or reset
// (ContactlessFrontEnd.reactivate).
// Access bits are interpreted as on a real card (MIFARE Classic datasheet, section 8.7): each
// block's C1 C2 C3 say which key may read and write it; a read the key may not do, or a command
// outside the authenticated sector, answers 69 82 and drops authentication (a real card halts
// there too; not modelled: the wallet's own keys never ask for an access their bits refuse).
// In a trailer key A always reads as zeros, and the access bits and key B read as zeros where
// the key may not read them; a trailer write changes only the fields the key may write. Where
// key B is readable it cannot serve for authentication: it authenticates, then every access is
// refused. Access bits whose inverted copy does not match block the sector for good (every
// authentication fails), which is what a torn trailer write can do. Wrong lengths answer
// 67 00, other FF instructions 6D 00, other classes 6A 81.

import { FaultingCard, type ApduCommand } from './card-faults.ts';
import { powerOn, VirtualDesfireCard, type DesfireVolatile } from './virtual-desfire-card.ts';

export * from './card-faults.ts';

export type CardSize = '1K' | '4K';

export interface VirtualCardOptions {
  /** 4 or 7 bytes. */
  uid: Buffer;
  size?: CardSize;
  /** Initial contents of any blocks (16 bytes each), over the fresh-card defaults. */
  blocks?: Record<number, Buffer>;
}

export type KeyType = 'A' | 'B';

/** What the keys may do with one block, from its access bits. */
export interface BlockAccess {
  read: readonly KeyType[];
  write: readonly KeyType[];
  increment: readonly KeyType[];
  /** Decrement, transfer and restore: the datasheet gives them together. */
  decrement: readonly KeyType[];
}

/** What the keys may do with the fields of a sector trailer, from its access bits. */
export interface TrailerAccess {
  writeKeyA: readonly KeyType[];
  readAccessBits: readonly KeyType[];
  writeAccessBits: readonly KeyType[];
  readKeyB: readonly KeyType[];
  writeKeyB: readonly KeyType[];
}

export const BLOCK_SIZE = 16;
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

const A: readonly KeyType[] = ['A'];
const B: readonly KeyType[] = ['B'];
const AB: readonly KeyType[] = ['A', 'B'];
const NEVER: readonly KeyType[] = [];

// Datasheet table 8 (data blocks), indexed by C1 C2 C3 as a 3-bit number (C1 the high bit).
const DATA_ACCESS: readonly BlockAccess[] = [
  { read: AB, write: AB, increment: AB, decrement: AB }, // 000: transport configuration
  { read: AB, write: NEVER, increment: NEVER, decrement: AB }, // 001
  { read: AB, write: NEVER, increment: NEVER, decrement: NEVER }, // 010
  { read: B, write: B, increment: NEVER, decrement: NEVER }, // 011
  { read: AB, write: B, increment: NEVER, decrement: NEVER }, // 100
  { read: B, write: NEVER, increment: NEVER, decrement: NEVER }, // 101
  { read: AB, write: B, increment: B, decrement: AB }, // 110
  { read: NEVER, write: NEVER, increment: NEVER, decrement: NEVER }, // 111
];

// Datasheet table 7 (sector trailer), same indexing.
const TRAILER_ACCESS: readonly TrailerAccess[] = [
  { writeKeyA: A, readAccessBits: A, writeAccessBits: NEVER, readKeyB: A, writeKeyB: A }, // 000
  { writeKeyA: A, readAccessBits: A, writeAccessBits: A, readKeyB: A, writeKeyB: A }, // 001: transport
  { writeKeyA: NEVER, readAccessBits: A, writeAccessBits: NEVER, readKeyB: A, writeKeyB: NEVER }, // 010
  { writeKeyA: B, readAccessBits: AB, writeAccessBits: B, readKeyB: NEVER, writeKeyB: B }, // 011
  { writeKeyA: B, readAccessBits: AB, writeAccessBits: NEVER, readKeyB: NEVER, writeKeyB: B }, // 100
  { writeKeyA: NEVER, readAccessBits: AB, writeAccessBits: B, readKeyB: NEVER, writeKeyB: NEVER }, // 101
  {
    writeKeyA: NEVER,
    readAccessBits: AB,
    writeAccessBits: NEVER,
    readKeyB: NEVER,
    writeKeyB: NEVER,
  }, // 110
  {
    writeKeyA: NEVER,
    readAccessBits: AB,
    writeAccessBits: NEVER,
    readKeyB: NEVER,
    writeKeyB: NEVER,
  }, // 111
];

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

/**
 * Which access-bit group (0-3) governs a block: its index in a 4-block sector; in a 16-block
 * sector of a 4K card, blocks 0-4, 5-9 and 10-14 share groups 0, 1 and 2, the trailer is 3.
 */
function accessGroupOf(block: number): number {
  if (block < 128) return block & 3;
  return Math.min(3, Math.floor(((block - 128) & 15) / 5));
}

/**
 * The access bits (trailer bytes 6-8) for the given C1 C2 C3 of groups 0-3 (each 0-7, C1 the
 * high bit), with their inverted copies. `accessBits([0, 0, 0, 1])` is the transport value
 * FF 07 80.
 */
export function accessBits(groups: readonly [number, number, number, number]): Buffer {
  let c1 = 0;
  let c2 = 0;
  let c3 = 0;
  groups.forEach((bits, group) => {
    if (bits & 4) c1 |= 1 << group;
    if (bits & 2) c2 |= 1 << group;
    if (bits & 1) c3 |= 1 << group;
  });
  return Buffer.from([((~c2 & 0xf) << 4) | (~c1 & 0xf), (c1 << 4) | (~c3 & 0xf), (c3 << 4) | c2]);
}

/** C1 C2 C3 of each group from the access bits, or null when the inverted copy does not match. */
export function decodeAccessBits(bytes: Buffer): [number, number, number, number] | null {
  const [b6 = 0, b7 = 0, b8 = 0] = bytes;
  const c1 = b7 >> 4;
  const c2 = b8 & 0xf;
  const c3 = b8 >> 4;
  if ((~b6 & 0xf) !== c1 || ((~b6 >> 4) & 0xf) !== c2 || (~b7 & 0xf) !== c3) return null;
  const groups = [0, 1, 2, 3].map(
    (group) => (((c1 >> group) & 1) << 2) | (((c2 >> group) & 1) << 1) | ((c3 >> group) & 1),
  );
  return groups as [number, number, number, number];
}

/** A MIFARE Classic card: memory, keys and access bits (in the trailers) and armed faults. */
export class VirtualCard extends FaultingCard {
  readonly size: CardSize;
  readonly blockCount: number;
  readonly atr: Buffer;
  readonly #memory: Buffer;

  constructor(options: VirtualCardOptions) {
    super(options.uid);
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

  /** A card with exactly this memory (a dump of a card seen before). */
  static fromMemory(uid: Buffer, memory: Buffer): VirtualCard {
    const size: CardSize = memory.length === blockCountOf('4K') * BLOCK_SIZE ? '4K' : '1K';
    if (memory.length !== blockCountOf(size) * BLOCK_SIZE) {
      throw new RangeError(`a card memory has 1024 or 4096 bytes, got ${memory.length}`);
    }
    const card = new VirtualCard({ uid, size });
    card.#memory.set(memory);
    return card;
  }

  get sectorCount(): number {
    return sectorOfBlock(this.blockCount - 1) + 1;
  }

  /** A copy of a block's raw contents (trailer keys included). */
  block(block: number): Buffer {
    this.#checkBlock(block);
    return Buffer.from(this.#memory.subarray(block * BLOCK_SIZE, (block + 1) * BLOCK_SIZE));
  }

  /** Sets a block directly (any block, block 0 and trailers included): for setup. */
  setBlock(block: number, data: Buffer): void {
    this.#checkBlock(block);
    if (data.length !== BLOCK_SIZE) {
      throw new RangeError(`block ${block}: a block has 16 bytes, got ${data.length}`);
    }
    this.#memory.set(data, block * BLOCK_SIZE);
    this.changed();
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

  /** Sets a sector's access bits (C1 C2 C3 of groups 0-3, see accessBits). */
  setAccessBits(sector: number, groups: readonly [number, number, number, number]): void {
    const trailerBlock = trailerBlockOf(sector);
    const trailer = this.block(trailerBlock);
    accessBits(groups).copy(trailer, 6);
    this.setBlock(trailerBlock, trailer);
  }

  /** C1 C2 C3 of the group governing `block`, or null when the sector is blocked. */
  accessConditionOf(block: number): number | null {
    const groups = decodeAccessBits(
      this.block(trailerBlockOf(sectorOfBlock(block))).subarray(6, 9),
    );
    return groups ? groups[accessGroupOf(block)]! : null;
  }

  #checkBlock(block: number): void {
    if (!Number.isInteger(block) || block < 0 || block >= this.blockCount) {
      throw new RangeError(
        `block ${block} is not on a ${this.size} card (0-${this.blockCount - 1})`,
      );
    }
  }
}

/** A value block's value (NXP format: value, inverse, value, address copies), or null. */
function valueOf(block: Buffer): number | null {
  const value = block.readInt32LE(0);
  const copiesAgree =
    block.readInt32LE(4) === ~value &&
    block.readInt32LE(8) === value &&
    block[13] === (~block[12]! & 0xff) &&
    block[14] === block[12] &&
    block[15] === block[13];
  return copiesAgree ? value : null;
}

/** A value block of `value` with the given address bytes (12-15) as they are. */
function valueBlock(value: number, address: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK_SIZE);
  out.writeInt32LE(value, 0);
  out.writeInt32LE(~value, 4);
  out.writeInt32LE(value, 8);
  address.copy(out, 12);
  return out;
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

/** The command of an APDU and the block it addresses. */
export function classifyApdu(apdu: Buffer): { command: ApduCommand; block?: number } {
  if (apdu[0] === 0x90) return { command: VirtualDesfireCard.classify(apdu) };
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
    case 0xb1:
      return { command: 'read', block: (p1 << 8) | p2 };
    case 0xd6:
      return { command: 'write', block: (p1 << 8) | p2 };
    case 0xd7:
      return { command: 'value', block: (p1 << 8) | p2 };
    default:
      return { command: 'other' };
  }
}

/** A virtual card of either type. */
export type AnyVirtualCard = VirtualCard | VirtualDesfireCard;

/**
 * One card in the field of a reader. A MIFARE Classic card: which sector and key it is
 * authenticated with, and whether it is halted. A DESFire card: what it holds while powered.
 */
export interface CardContact {
  readonly card: AnyVirtualCard;
  authenticated: { sector: number; key: KeyType } | null;
  /** Halted by a failed authentication: mute until re-activated (see the top of this file). */
  halted: boolean;
  /** A DESFire card's session, selected application and transaction; gone with the power. */
  desfire?: DesfireVolatile | undefined;
}

interface ClassicContact extends CardContact {
  readonly card: VirtualCard;
}

/**
 * The reader's contactless front end: LOAD KEY slots (volatile, kept across card removal as on
 * an ACR122U) and the execution of the PC/SC part 3 storage-card APDUs on the card in contact.
 */
export class ContactlessFrontEnd {
  readonly #keySlots: (Buffer | undefined)[];

  /** `keySlots`: a slot count (an ACR122U has 2), or slots shared with another handle. */
  constructor(keySlots: number | (Buffer | undefined)[] = 2) {
    this.#keySlots =
      typeof keySlots === 'number'
        ? new Array<Buffer | undefined>(keySlots).fill(undefined)
        : keySlots;
  }

  /** The reader's RF reset and re-selection of the card: authentication dropped, halt ended. */
  reactivate(contact: CardContact): void {
    contact.authenticated = null;
    contact.halted = false;
    contact.desfire = undefined;
  }

  /**
   * Executes a command APDU and returns the response (data + SW1 SW2). With `torn`, a write
   * lands only half (see FaultAction 'tear'); the caller drops the card and the answer.
   */
  execute(contact: CardContact, apdu: Buffer, torn = false): Buffer {
    if (contact.card instanceof VirtualDesfireCard) {
      return this.#executeIso(contact, contact.card, apdu, torn);
    }
    return this.#executeClassic(contact as ClassicContact, apdu, torn);
  }

  /**
   * An ISO 14443-4 card (DESFire): GET UID and LOAD KEY are the reader's own; its MIFARE
   * Classic commands fail as a reader's do on a card that is not one (63 00); anything else
   * goes to the card.
   */
  #executeIso(contact: CardContact, card: VirtualDesfireCard, apdu: Buffer, torn: boolean): Buffer {
    if (apdu[0] === 0xff) {
      switch (apdu[1]) {
        case 0xca:
          return apdu[2] === 0x00 && apdu[3] === 0x00
            ? Buffer.concat([card.uid, SW_OK])
            : SW_NOT_SUPPORTED;
        case 0x82:
        case 0x86:
        case 0x88:
        case 0xb0:
        case 0xd6:
          return apdu[1] === 0x82 ? this.#loadKey(apdu) : SW_FAILED;
        default:
          return SW_INS_UNKNOWN;
      }
    }
    contact.desfire ??= powerOn();
    return card.execute(contact.desfire, apdu, torn);
  }

  #loadKey(apdu: Buffer): Buffer {
    if (apdu.length !== 11 || apdu[4] !== 6) return SW_WRONG_LENGTH;
    const slot = apdu[3] ?? 0;
    if (slot >= this.#keySlots.length) return SW_FAILED;
    this.#keySlots[slot] = Buffer.from(apdu.subarray(5, 11));
    return SW_OK;
  }

  #executeClassic(contact: ClassicContact, apdu: Buffer, torn: boolean): Buffer {
    const card = contact.card;
    if (apdu[0] !== 0xff) return SW_NOT_SUPPORTED;
    const p1 = apdu[2] ?? 0;
    const p2 = apdu[3] ?? 0;
    switch (apdu[1]) {
      case 0xca: {
        // GET DATA: P1 00 is the UID (P1 01, the ATS, a Classic card does not have).
        if (p1 !== 0x00 || p2 !== 0x00) return SW_NOT_SUPPORTED;
        return Buffer.concat([card.uid, SW_OK]);
      }
      case 0x82:
        return this.#loadKey(apdu);
      case 0x86: {
        if (apdu.length !== 10 || apdu[4] !== 5) return SW_WRONG_LENGTH;
        if (apdu[5] !== 0x01) return SW_NOT_SUPPORTED;
        return this.#authenticate(
          contact,
          ((apdu[6] ?? 0) << 8) | (apdu[7] ?? 0),
          apdu[8] ?? 0,
          apdu[9] ?? 0,
        );
      }
      case 0x88: {
        if (apdu.length !== 6) return SW_WRONG_LENGTH;
        return this.#authenticate(contact, (p1 << 8) | p2, apdu[4] ?? 0, apdu[5] ?? 0);
      }
      case 0xb0: {
        if (apdu.length !== 5 || apdu[4] !== BLOCK_SIZE) return SW_WRONG_LENGTH;
        if (contact.halted) return SW_FAILED;
        const block = (p1 << 8) | p2;
        const data = this.#read(contact, block);
        return data ? Buffer.concat([data, SW_OK]) : SW_NOT_ALLOWED;
      }
      case 0xd6: {
        if (apdu.length !== 5 + BLOCK_SIZE || apdu[4] !== BLOCK_SIZE) return SW_WRONG_LENGTH;
        if (contact.halted) return SW_FAILED;
        const block = (p1 << 8) | p2;
        if (!this.#inSector(contact, block)) return SW_NOT_ALLOWED;
        if (block === 0) return SW_FAILED;
        const written = this.#writable(contact, block, apdu.subarray(5));
        if (!written) {
          contact.authenticated = null;
          return SW_NOT_ALLOWED;
        }
        if (torn) written.set(card.block(block).subarray(8), 8);
        card.setBlock(block, written);
        return SW_OK;
      }
      case 0xb1: {
        if (apdu.length !== 5 || apdu[4] !== 4) return SW_WRONG_LENGTH;
        const block = (p1 << 8) | p2;
        if (contact.halted || !this.#read(contact, block)) return SW_FAILED;
        const value = valueOf(card.block(block));
        if (value === null) return SW_FAILED;
        const out = Buffer.alloc(4);
        out.writeInt32BE(value);
        return Buffer.concat([out, SW_OK]);
      }
      case 0xd7:
        return this.#valueOperation(contact, (p1 << 8) | p2, apdu.subarray(4), torn);
      default:
        return SW_INS_UNKNOWN;
    }
  }

  /**
   * INCREMENT or DECREMENT a value block and TRANSFER into it, or RESTORE a value block and
   * TRANSFER into another block of the sector. The card checks the key's access to each block
   * the command names; a TRANSFER keeps the destination's address bytes.
   */
  #valueOperation(contact: ClassicContact, source: number, body: Buffer, torn: boolean): Buffer {
    const card = contact.card;
    if (contact.halted || !this.#inSector(contact, source)) return SW_FAILED;
    const [length, operation] = body;
    let target = source;
    let value: number | null = valueOf(card.block(source));
    if (length === 5 && body.length === 6 && (operation === 0x01 || operation === 0x02)) {
      const operand = body.readInt32BE(2);
      const right = operation === 0x01 ? 'increment' : 'decrement';
      if (value === null || !this.#mayValue(contact, source, right)) return SW_FAILED;
      value = operation === 0x01 ? value + operand : value - operand;
      if (value > 0x7fffffff || value < -0x80000000) return SW_FAILED;
    } else if (length === 2 && body.length === 3 && operation === 0x03) {
      target = body[2] ?? 0;
      if (value === null || !this.#mayValue(contact, source, 'decrement')) return SW_FAILED;
      if (!this.#inSector(contact, target)) return SW_FAILED;
    } else {
      return SW_WRONG_LENGTH;
    }
    // The TRANSFER: into `target`, which must allow it (transfer goes with decrement).
    if (!this.#mayValue(contact, target, 'decrement')) return SW_FAILED;
    const written = valueBlock(value, card.block(target).subarray(12, 16));
    if (torn) written.set(card.block(target).subarray(8), 8);
    card.setBlock(target, written);
    return SW_OK;
  }

  #mayValue(contact: ClassicContact, block: number, right: 'increment' | 'decrement'): boolean {
    const key = this.#keyInUse(contact, block);
    const condition = contact.card.accessConditionOf(block);
    if (isTrailerBlock(block) || key === null || condition === null) return false;
    return DATA_ACCESS[condition]![right].includes(key);
  }

  #authenticate(contact: ClassicContact, block: number, keyType: number, slot: number): Buffer {
    const card = contact.card;
    const key = this.#keySlots[slot];
    contact.authenticated = null;
    // The reader refuses these itself, without a word to the card.
    if (!key || (keyType !== KEY_TYPE_A && keyType !== KEY_TYPE_B)) return SW_FAILED;
    if (contact.halted) return SW_FAILED;
    const sector = block < card.blockCount ? sectorOfBlock(block) : -1;
    // Access bits that fail their own check have blocked the sector for good.
    const opens =
      sector >= 0 &&
      card.accessConditionOf(block) !== null &&
      key.equals(keyType === KEY_TYPE_A ? card.keyA(sector) : card.keyB(sector));
    if (!opens) {
      contact.halted = true;
      return SW_FAILED;
    }
    contact.authenticated = { sector, key: keyType === KEY_TYPE_A ? 'A' : 'B' };
    return SW_OK;
  }

  /** Whether the block is in the authenticated sector; if not, authentication is dropped. */
  #inSector(contact: ClassicContact, block: number): boolean {
    if (block < contact.card.blockCount && contact.authenticated?.sector === sectorOfBlock(block))
      return true;
    // A real Classic card halts on a command outside its authenticated sector.
    contact.authenticated = null;
    return false;
  }

  /** The key in use, or null where it may do nothing (key B while key B is readable). */
  #keyInUse(contact: ClassicContact, block: number): KeyType | null {
    const key = contact.authenticated?.key ?? null;
    if (key !== 'B') return key;
    const trailer = contact.card.accessConditionOf(trailerBlockOf(sectorOfBlock(block)));
    return trailer !== null && TRAILER_ACCESS[trailer]!.readKeyB.length > 0 ? null : key;
  }

  #read(contact: ClassicContact, block: number): Buffer | null {
    if (!this.#inSector(contact, block)) return null;
    const key = this.#keyInUse(contact, block);
    const condition = contact.card.accessConditionOf(block);
    if (key === null || condition === null) return this.#refuse(contact);
    const data = contact.card.block(block);
    if (!isTrailerBlock(block)) {
      return DATA_ACCESS[condition]!.read.includes(key) ? data : this.#refuse(contact);
    }
    const access = TRAILER_ACCESS[condition]!;
    data.fill(0, 0, 6); // key A never reads back
    if (!access.readAccessBits.includes(key)) data.fill(0, 6, 10);
    if (!access.readKeyB.includes(key)) data.fill(0, 10, 16);
    return data;
  }

  /** The block as it will be after the write, or null when the key may not write it. */
  #writable(contact: ClassicContact, block: number, data: Buffer): Buffer | null {
    const key = this.#keyInUse(contact, block);
    const condition = contact.card.accessConditionOf(block);
    if (key === null || condition === null) return null;
    if (!isTrailerBlock(block)) {
      return DATA_ACCESS[condition]!.write.includes(key) ? Buffer.from(data) : null;
    }
    // A trailer write changes the fields the key may write and keeps the others.
    const access = TRAILER_ACCESS[condition]!;
    const next = contact.card.block(block);
    const fields: [readonly KeyType[], number, number][] = [
      [access.writeKeyA, 0, 6],
      [access.writeAccessBits, 6, 10],
      [access.writeKeyB, 10, 16],
    ];
    if (!fields.some(([allowed]) => allowed.includes(key))) return null;
    for (const [allowed, start, end] of fields) {
      if (allowed.includes(key)) data.copy(next, start, start, end);
    }
    return next;
  }

  #refuse(contact: ClassicContact): null {
    contact.authenticated = null;
    return null;
  }
}
