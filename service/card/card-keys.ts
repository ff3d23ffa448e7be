import { aes128, cmac, cmacPadded, cmacSubkeys as subkeys } from './block-cipher.ts';

/**
 * Per-card MIFARE Classic keys, derived from one 16-byte master key and the card's UID, so that
 * the keys read from one card (Crypto1 is broken) open no other card. Pure functions, no I/O;
 * the exact bytes are in docs/card-format.md section 8, with test vectors the unit tests read.
 *
 * - AES-CMAC as RFC 4493 defines it, over node's AES-128 (one block at a time).
 * - NXP AN10922 AES-128 key diversification: CMAC(K, 0x01 || M), M of 1 to 31 bytes, where a
 *   shorter input is padded (0x80 00..) to 32 bytes and the last block takes subkey K2.
 * - Each key slot (A, B) has its own 16-byte master, diversified from the master key, so that
 *   vending machines can hold the key-A master without being able to derive any key B.
 * - A card's key: M = UID || sector || "A" or "B" || "CardWallet" diversified with the slot's
 *   master; the MIFARE Classic key is the first 6 bytes of the 16-byte result.
 */

const BLOCK = 16;

function checkAesKey(key: Buffer): void {
  if (key.length !== BLOCK) throw new RangeError(`an AES-128 key is 16 bytes, not ${key.length}`);
}

/** RFC 4493 2.3: K1 and K2 from L = AES(K, 0^128). */
export function cmacSubkeys(key: Buffer): { k1: Buffer; k2: Buffer } {
  checkAesKey(key);
  return subkeys(aes128(key));
}

/** AES-CMAC (RFC 4493): the 16-byte tag of `message` under a 16-byte key. */
export function aesCmac(key: Buffer, message: Buffer): Buffer {
  checkAesKey(key);
  return cmac(aes128(key), message);
}

/** AN10922's diversification constant of an AES-128 key. */
const AES128_DIVERSIFICATION_CONSTANT = 0x01;

/**
 * NXP AN10922 AES-128 key diversification: `M` (1 to 31 bytes) becomes
 * D = 0x01 || M || padding to 32 bytes, the last block XORed with K2 (or K1 when D is exactly
 * 32 bytes), and the diversified key is the CBC-MAC of D. For D of 17 to 32 bytes this is
 * exactly AES-CMAC(K, 0x01 || M); it differs from CMAC only for inputs of up to 15 bytes, which
 * AN10922 still pads to two blocks.
 */
export function diversifyAes128(masterKey: Buffer, input: Buffer): Buffer {
  checkAesKey(masterKey);
  if (input.length < 1 || input.length > 31) {
    throw new RangeError(`AN10922 diversification input is 1 to 31 bytes, not ${input.length}`);
  }
  const data = Buffer.concat([Buffer.from([AES128_DIVERSIFICATION_CONSTANT]), input]);
  return cmacPadded(aes128(masterKey), data, 2 * BLOCK);
}

export type KeySlot = 'A' | 'B';

/** AN10922's "system identifier": names this scheme, so its keys differ from any other's. */
export const CARD_KEY_SYSTEM_IDENTIFIER = Buffer.from('CardWallet', 'ascii');

/**
 * The 16-byte master of one key slot: AN10922(master key, "CardWallet key A" or "... key B").
 * The shop's vending machines get the key-A master only: from it they derive every card's key A,
 * but neither key B nor the master key (AES-CMAC is a one-way function of its key).
 */
export function slotMasterKey(masterKey: Buffer, slot: KeySlot): Buffer {
  return diversifyAes128(
    masterKey,
    Buffer.concat([CARD_KEY_SYSTEM_IDENTIFIER, Buffer.from(` key ${slot}`, 'ascii')]),
  );
}

/** M for one key of one sector of one card: UID || sector || "A" or "B" || "CardWallet". */
export function diversificationInput(uid: Buffer, sector: number, slot: KeySlot): Buffer {
  if (uid.length !== 4 && uid.length !== 7) {
    throw new RangeError(`a MIFARE Classic UID is 4 or 7 bytes, not ${uid.length}`);
  }
  if (!Number.isInteger(sector) || sector < 0 || sector > 39) {
    throw new RangeError(`a MIFARE Classic sector is 0 to 39, not ${sector}`);
  }
  return Buffer.concat([
    uid,
    Buffer.from([sector]),
    Buffer.from(slot, 'ascii'),
    CARD_KEY_SYSTEM_IDENTIFIER,
  ]);
}

export interface SectorKeys {
  /** Read and decrement: what the shop's vending machines hold. */
  keyA: Buffer;
  /** Read, write and increment, and the only key that can change the trailer: the till's. */
  keyB: Buffer;
}

/**
 * One card's 6-byte MIFARE Classic key from its slot's master: the first 6 bytes of
 * AN10922(slot master, M). What a vending machine computes with the key-A master.
 */
export function cardKeyFromSlotMaster(
  slotMaster: Buffer,
  uid: Buffer,
  sector: number,
  slot: KeySlot,
): Buffer {
  return diversifyAes128(slotMaster, diversificationInput(uid, sector, slot)).subarray(0, 6);
}

/** One card's key of one slot, from the master key. */
export function deriveCardKey(
  masterKey: Buffer,
  uid: Buffer,
  sector: number,
  slot: KeySlot,
): Buffer {
  return cardKeyFromSlotMaster(slotMasterKey(masterKey, slot), uid, sector, slot);
}

export function deriveSectorKeys(masterKey: Buffer, uid: Buffer, sector: number): SectorKeys {
  return {
    keyA: deriveCardKey(masterKey, uid, sector, 'A'),
    keyB: deriveCardKey(masterKey, uid, sector, 'B'),
  };
}

// ---------------------------------------------------------------------------------------------
// Access conditions of the sector trailer (MIFARE Classic datasheet, "access conditions").

/** C1 C2 C3 of one block as a 3-bit number, C1 the high bit: 0b110 is C1=1, C2=1, C3=0. */
export type AccessCondition = number;

/**
 * The wallet sector: slots 0 and 1 are value blocks that key A may read and decrement and key B
 * may also write and increment (110); the reserved block is read A|B, write B (100); the
 * trailer (011) lets key B write both keys and the access bits, key A only read the access bits.
 */
export const WALLET_ACCESS_CONDITIONS: readonly [
  AccessCondition,
  AccessCondition,
  AccessCondition,
  AccessCondition,
] = [0b110, 0b110, 0b100, 0b011];

/** The user byte after the access bits (byte 9); NXP's default, unused by the worker. */
export const TRAILER_USER_BYTE = 0x69;

const bit = (condition: AccessCondition, c: 1 | 2 | 3): number => (condition >> (3 - c)) & 1;

/** Bytes 6, 7, 8 of a trailer: every bit both as is and inverted, as the card demands. */
export function encodeAccessBits(conditions: readonly AccessCondition[]): Buffer {
  if (conditions.length !== 4 || conditions.some((c) => !Number.isInteger(c) || c < 0 || c > 7)) {
    throw new RangeError('access conditions are four 3-bit numbers, blocks 0 to 3');
  }
  const nibble = (c: 1 | 2 | 3) =>
    conditions.reduce((acc, condition, block) => acc | (bit(condition, c) << block), 0);
  const [c1, c2, c3] = [nibble(1), nibble(2), nibble(3)];
  return Buffer.from([((~c2 & 0xf) << 4) | (~c1 & 0xf), (c1 << 4) | (~c3 & 0xf), (c3 << 4) | c2]);
}

/**
 * Blocks 0 to 3's conditions from bytes 6, 7, 8, or undefined when the inverted copies
 * disagree (a card refuses such a trailer write, and a sector with it is lost for good).
 */
export function decodeAccessBits(bytes: Buffer): AccessCondition[] | undefined {
  if (bytes.length !== 3) return undefined;
  const [b6 = 0, b7 = 0, b8 = 0] = bytes;
  const c1 = b7 >> 4;
  const c2 = b8 & 0xf;
  const c3 = b8 >> 4;
  if ((b6 & 0xf) !== (~c1 & 0xf) || b6 >> 4 !== (~c2 & 0xf) || (b7 & 0xf) !== (~c3 & 0xf)) {
    return undefined;
  }
  return [0, 1, 2, 3].map(
    (block) => (((c1 >> block) & 1) << 2) | (((c2 >> block) & 1) << 1) | ((c3 >> block) & 1),
  );
}

/** Who may do what: 'A', 'B', 'AB' or 'never'. */
export type Who = 'A' | 'B' | 'AB' | 'never';

export interface DataBlockPermissions {
  read: Who;
  write: Who;
  increment: Who;
  /** Decrement, transfer and restore. */
  decrement: Who;
}

export interface TrailerPermissions {
  keyARead: Who;
  keyAWrite: Who;
  accessBitsRead: Who;
  accessBitsWrite: Who;
  keyBRead: Who;
  keyBWrite: Who;
}

// The datasheet's two tables, indexed by C1C2C3. Where key B is readable (trailer 000, 010, 001)
// it cannot authenticate, so "AB" there means key A only: the worker never uses those.
const DATA_BLOCK_TABLE: Record<number, DataBlockPermissions> = {
  0b000: { read: 'AB', write: 'AB', increment: 'AB', decrement: 'AB' },
  0b010: { read: 'AB', write: 'never', increment: 'never', decrement: 'never' },
  0b100: { read: 'AB', write: 'B', increment: 'never', decrement: 'never' },
  0b110: { read: 'AB', write: 'B', increment: 'B', decrement: 'AB' },
  0b001: { read: 'AB', write: 'never', increment: 'never', decrement: 'AB' },
  0b011: { read: 'B', write: 'B', increment: 'never', decrement: 'never' },
  0b101: { read: 'B', write: 'never', increment: 'never', decrement: 'never' },
  0b111: { read: 'never', write: 'never', increment: 'never', decrement: 'never' },
};

const TRAILER_TABLE: Record<number, TrailerPermissions> = {
  0b000: t('never', 'A', 'A', 'never', 'A', 'A'),
  0b010: t('never', 'never', 'A', 'never', 'A', 'never'),
  0b100: t('never', 'B', 'AB', 'never', 'never', 'B'),
  0b110: t('never', 'never', 'AB', 'never', 'never', 'never'),
  0b001: t('never', 'A', 'A', 'A', 'A', 'A'),
  0b011: t('never', 'B', 'AB', 'B', 'never', 'B'),
  0b101: t('never', 'never', 'AB', 'B', 'never', 'never'),
  0b111: t('never', 'never', 'AB', 'never', 'never', 'never'),
};

function t(
  keyARead: Who,
  keyAWrite: Who,
  accessBitsRead: Who,
  accessBitsWrite: Who,
  keyBRead: Who,
  keyBWrite: Who,
): TrailerPermissions {
  return { keyARead, keyAWrite, accessBitsRead, accessBitsWrite, keyBRead, keyBWrite };
}

export function dataBlockPermissions(condition: AccessCondition): DataBlockPermissions {
  const permissions = DATA_BLOCK_TABLE[condition];
  if (!permissions) throw new RangeError(`not a 3-bit access condition: ${condition}`);
  return permissions;
}

export function trailerPermissions(condition: AccessCondition): TrailerPermissions {
  const permissions = TRAILER_TABLE[condition];
  if (!permissions) throw new RangeError(`not a 3-bit access condition: ${condition}`);
  return permissions;
}

/** The 16-byte trailer of the wallet sector: key A, access bits, user byte, key B. */
export function walletSectorTrailer(keys: SectorKeys): Buffer {
  return Buffer.concat([
    keys.keyA,
    encodeAccessBits(WALLET_ACCESS_CONDITIONS),
    Buffer.from([TRAILER_USER_BYTE]),
    keys.keyB,
  ]);
}

/** A master key from its 32 hex digits (any case). */
export function parseMasterKey(hex: string): Buffer {
  if (!/^[0-9A-Fa-f]{32}$/.test(hex)) {
    throw new RangeError('a card master key is 32 hex digits (16 bytes)');
  }
  return Buffer.from(hex, 'hex');
}
