/**
 * MIFARE Classic wallet format v1 (docs/card-format.md): pure functions
 * from blocks to wallet states and back. No I/O: the reader code moves the bytes.
 *
 * The card is a cache of money whose truth is the ledger, so every function here answers with
 * data ("corrupt", "unknown") rather than a guess; only programmer errors (out-of-range
 * arguments) throw, as RangeError.
 */

export const WALLET_FORMAT_VERSION = 1;

export const INT32_MIN = -0x8000_0000;
export const INT32_MAX = 0x7fff_ffff;
/** The largest balance a slot can hold (int32); a recharge past it cannot be written. */
export const MAX_CARD_BALANCE = INT32_MAX;

/** A MIFARE Classic block, and so a wallet slot, is 16 bytes. */
export const BLOCK_SIZE = 16;

export const DEFAULT_WALLET_SECTOR = 1;
/** The transport key of a new card, used with key type A unless configured otherwise. */
export const DEFAULT_KEY_HEX = 'FFFFFFFFFFFF';
export const DEFAULT_KEY_TYPE = 'A';

// ---------------------------------------------------------------------------------------------
// Sector geometry

export interface SectorBlocks {
  /** The sector's first block (authenticate against it). */
  first: number;
  /** Slot 0 and slot 1: the sector's first two data blocks, always adjacent. */
  slots: [number, number];
  /** The third data block, after the slots: a float recharge's reference (float-reference.ts). */
  spare: number;
  /** The sector trailer (keys and access bits); the wallet never writes it. */
  trailer: number;
}

/**
 * Sectors 1..39. Sector 0 is refused because its block 0 is the manufacturer block, which leaves
 * no two free data blocks ahead of the trailer; 32..39 exist only on a 4K card (16..39 not on 1K,
 * which the card itself reports by failing authentication).
 */
export function isValidWalletSector(sector: number): boolean {
  return Number.isInteger(sector) && sector >= 1 && sector <= 39;
}

/** Sectors 0-31 have 4 blocks; sectors 32-39 of a 4K card have 16 (starting at block 128). */
export function sectorBlocks(sector: number): SectorBlocks {
  if (!isValidWalletSector(sector)) {
    throw new RangeError(`wallet sector must be an integer in 1..39, got ${sector}`);
  }
  const small = sector < 32;
  const first = small ? sector * 4 : 128 + (sector - 32) * 16;
  const trailer = first + (small ? 3 : 15);
  return { first, slots: [first, first + 1], spare: first + 2, trailer };
}

// ---------------------------------------------------------------------------------------------
// Value block codec

export type SlotContent =
  { kind: 'value'; value: number; generation: number } | { kind: 'blank' } | { kind: 'invalid' };

function assertInt32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
    throw new RangeError(`${what} must be an int32, got ${value}`);
  }
}

function assertGeneration(generation: number): void {
  if (!Number.isInteger(generation) || generation < 0 || generation > 255) {
    throw new RangeError(`generation must be an integer in 0..255, got ${generation}`);
  }
}

/**
 * An NXP value block: value, ~value, value (int32 LE), then g, ~g, g, ~g. The generation sits in
 * the address byte, so the block stays a genuine value block for any tool that inspects it.
 */
export function encodeValueBlock(value: number, generation: number): Buffer {
  assertInt32(value, 'value');
  assertGeneration(generation);
  const block = Buffer.alloc(BLOCK_SIZE);
  block.writeInt32LE(value, 0);
  block.writeInt32LE(~value, 4);
  block.writeInt32LE(value, 8);
  block[12] = generation;
  block[13] = ~generation & 0xff;
  block[14] = generation;
  block[15] = ~generation & 0xff;
  return block;
}

/**
 * Every copy must agree. Because each bit is stored both plain and inverted, a block damaged in
 * one direction only (a write torn while erasing or programming the EEPROM) never decodes.
 */
export function decodeSlot(block: Buffer): SlotContent {
  // A short read is a bug in the reader layer, not a property of the card: refusing the card as
  // corrupt would blame the customer's card for it.
  if (block.length !== BLOCK_SIZE) {
    throw new RangeError(`a slot is ${BLOCK_SIZE} bytes, got ${block.length}`);
  }
  if (block.every((byte) => byte === 0)) return { kind: 'blank' };
  const value = block.readInt32LE(0);
  const generation = block.readUInt8(12);
  const valid =
    block.readInt32LE(4) === ~value &&
    block.readInt32LE(8) === value &&
    block.readUInt8(13) === (~generation & 0xff) &&
    block.readUInt8(14) === generation &&
    block.readUInt8(15) === (~generation & 0xff);
  return valid ? { kind: 'value', value, generation } : { kind: 'invalid' };
}

// ---------------------------------------------------------------------------------------------
// Wallet state

export type BlankWallet = { kind: 'blank' };
export type ValidWallet = {
  kind: 'valid';
  balance: number;
  generation: number;
  activeSlot: 0 | 1;
  /** What the other slot holds: the previous value, nothing yet, or a torn write. */
  backup: 'valid' | 'blank' | 'invalid';
};
export type CorruptWallet = { kind: 'corrupt'; reason: string };
export type WalletState = BlankWallet | ValidWallet | CorruptWallet;
/** The states a write may start from; a corrupt card is never written. */
export type WritableWallet = BlankWallet | ValidWallet;

/** Serial-number arithmetic (RFC 1982) on 8 bits: a is newer when (a - b) mod 256 is 1..127. */
export function isNewerGeneration(a: number, b: number): boolean {
  const distance = (a - b) & 0xff;
  return distance >= 1 && distance <= 127;
}

/**
 * Both slots blank: a blank card (0 credits, writable). One valid slot: it is active, whatever
 * the other holds. Two valid slots: the newer generation is active. The writer always puts g+1
 * next to g, so two valid slots with equal generations, or 128 apart (where neither is newer),
 * were not written by this format: corrupt, because choosing one would be guessing with money.
 */
export function decodeWallet(slot0: Buffer, slot1: Buffer): WalletState {
  const slots = [decodeSlot(slot0), decodeSlot(slot1)] as const;
  const [a, b] = slots;
  if (a.kind === 'blank' && b.kind === 'blank') return { kind: 'blank' };
  if (a.kind !== 'value' && b.kind !== 'value') {
    return { kind: 'corrupt', reason: `no valid slot (slot 0 ${a.kind}, slot 1 ${b.kind})` };
  }
  let active: 0 | 1;
  if (a.kind === 'value' && b.kind === 'value') {
    if (a.generation === b.generation) {
      return { kind: 'corrupt', reason: `both slots hold generation ${a.generation}` };
    }
    if (isNewerGeneration(a.generation, b.generation)) active = 0;
    else if (isNewerGeneration(b.generation, a.generation)) active = 1;
    else {
      return {
        kind: 'corrupt',
        reason: `generations ${a.generation} and ${b.generation} are 128 apart: neither is newer`,
      };
    }
  } else {
    active = a.kind === 'value' ? 0 : 1;
  }
  const current = slots[active];
  const backup = slots[active === 0 ? 1 : 0];
  // Narrowing for the compiler: `active` was chosen among value slots.
  if (current.kind !== 'value') throw new Error('unreachable: active slot is not a value');
  return {
    kind: 'valid',
    balance: current.value,
    generation: current.generation,
    activeSlot: active,
    backup: backup.kind === 'value' ? 'valid' : backup.kind,
  };
}

// ---------------------------------------------------------------------------------------------
// Writes

/**
 * What a write is meant to do, JSON-serializable so the movement journal can keep it and decide
 * the write on a later tap. The state it starts from is implied: the other slot, holding
 * `previousBalance` at generation `generation - 1` (mod 256), or a blank card.
 */
export interface WriteIntent {
  slot: 0 | 1;
  value: number;
  generation: number;
  /** The balance the card held when the write was planned; null when the card was blank. */
  previousBalance: number | null;
}

/** A Classic write as the card face plans it: the slot, value and generation it puts. */
export interface ClassicWriteIntent extends WriteIntent {
  /** Absent in journals written before the card face: those are Classic too. */
  type?: 'classic';
  /**
   * A float recharge's float reference (float-reference.ts), as 32 hex digits: written to the
   * wallet sector's spare block before the slot (docs/card-format.md, "The float reference").
   */
  reference?: string;
}

export interface PlannedWrite extends WriteIntent {
  /** The 16 bytes to write to block `sectorBlocks(sector).slots[slot]`. */
  block: Buffer;
}

/**
 * The new value goes into the slot that is not active, with generation g+1 mod 256; the active
 * slot is left alone as the backup. A blank card is treated as if slot 1 held 0 at generation 0,
 * so its first write is slot 0, generation 1: the same block a card personalized with slot 1 =
 * (0, generation 0) receives, so both kinds of new card behave alike from then on.
 */
export function planWrite(state: WritableWallet, newBalance: number): PlannedWrite {
  assertInt32(newBalance, 'newBalance');
  const from = describeStart(state);
  const slot: 0 | 1 = from.activeSlot === 0 ? 1 : 0;
  const generation = (from.generation + 1) & 0xff;
  return {
    slot,
    value: newBalance,
    generation,
    previousBalance: state.kind === 'blank' ? null : state.balance,
    block: encodeValueBlock(newBalance, generation),
  };
}

function describeStart(state: WalletState): { activeSlot: 0 | 1; generation: number } {
  if (state.kind === 'blank') return { activeSlot: 1, generation: 0 };
  if (state.kind === 'valid') return state;
  throw new RangeError('a corrupt card is never written');
}

export type WriteOutcome = 'committed' | 'not-committed' | 'unknown';

/**
 * Decides a write from the two slots as read afterwards (at the read-back or on the next tap).
 *
 * - committed: the planned slot holds exactly the planned value and generation and is active.
 * - not-committed: the card still holds the state the write started from (its value perhaps
 *   lowered by a machine since), and the planned slot does not hold the planned generation, so
 *   the new value can never become active without another write. From a blank card, that is
 *   slot 1 still blank and slot 0 blank or invalid (the card then reads as corrupt, but it
 *   certainly holds no credits from this write).
 * - unknown: anything else (another value at the planned generation, a newer write on top,
 *   a corrupt pair). Decide before any further write to the card: a later write from this
 *   worker or another till can turn a decidable card into an undecidable one. The planned
 *   generation active with a lower value stays unknown: a machine may have spent from the
 *   landed write, or a till of another shop (which the ledger does not hold off) may have
 *   written the same slot and generation from the same state.
 */
export function decideWrite(intent: WriteIntent, slot0: Buffer, slot1: Buffer): WriteOutcome {
  assertIntent(intent);
  const blocks = [slot0, slot1] as const;
  const planned = decodeSlot(blocks[intent.slot]);
  const other = decodeSlot(blocks[intent.slot === 0 ? 1 : 0]);
  const wallet = decodeWallet(slot0, slot1);

  if (
    wallet.kind === 'valid' &&
    wallet.activeSlot === intent.slot &&
    wallet.balance === intent.value &&
    wallet.generation === intent.generation
  ) {
    return 'committed';
  }
  // From a blank card, any value in slot 0 that is not the planned block is either the planned
  // generation with another value or a write this intent knows nothing about: not decidable.
  if (intent.previousBalance === null) {
    return other.kind === 'blank' && planned.kind !== 'value' ? 'not-committed' : 'unknown';
  }
  // The previous state still active implies the planned slot is not at the planned generation,
  // which would be newer than it. A vending machine may have spent from it since: DECREMENT and
  // TRANSFER in place lower its value and keep its generation (every writer of this format
  // moves the generation on), so a lower value at that generation is still the previous state.
  const stillPrevious =
    wallet.kind === 'valid' &&
    wallet.activeSlot !== intent.slot &&
    wallet.balance <= intent.previousBalance &&
    wallet.generation === ((intent.generation - 1) & 0xff);
  return stillPrevious ? 'not-committed' : 'unknown';
}

function assertIntent(intent: WriteIntent): void {
  if (intent.slot !== 0 && intent.slot !== 1) {
    throw new RangeError(`slot must be 0 or 1, got ${String(intent.slot)}`);
  }
  assertInt32(intent.value, 'value');
  assertGeneration(intent.generation);
  if (intent.previousBalance === null) {
    // Only planWrite's blank-card rule produces a write from a blank card.
    if (intent.slot !== 0 || intent.generation !== 1) {
      throw new RangeError('a write from a blank card is slot 0, generation 1');
    }
  } else {
    assertInt32(intent.previousBalance, 'previousBalance');
  }
}

// ---------------------------------------------------------------------------------------------
// Card id

const CARD_ID = /^(?:[0-9A-F]{8}|[0-9A-F]{14})$/;

/** A card id in its one canonical form: 4 or 7 bytes as uppercase hex, no separators. */
export function isCardId(value: string): boolean {
  return CARD_ID.test(value);
}

/**
 * The UID as the card id. Accepts the reader's bytes or hex in any case, with `:`, `-` or space
 * between bytes (nfc-pcsc gives lowercase hex). MIFARE Classic UIDs are 4 or 7 bytes; anything
 * else is a RangeError, since it cannot be a card this format is written on.
 */
export function formatCardId(uid: Buffer | string): string {
  const hex = (
    typeof uid === 'string' ? uid.replace(/[:\- ]/g, '') : uid.toString('hex')
  ).toUpperCase();
  if (!isCardId(hex)) {
    const got = typeof uid === 'string' ? JSON.stringify(uid) : `${uid.length} bytes`;
    throw new RangeError(`a card UID is 4 or 7 bytes, got ${got}`);
  }
  return hex;
}
