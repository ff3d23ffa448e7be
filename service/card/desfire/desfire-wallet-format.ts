import { createHash } from 'node:crypto';
import type { CardRecord } from '../../../common/ledger-contract.ts';
import { MAX_CARD_BALANCE } from '../wallet-format.ts';
import type { AccessRights, RecordFileSpec, ValueFileSpec } from './desfire-client.ts';

/**
 * The DESFire wallet, byte by byte (docs/card-format.md, "DESFire wallet"): one application
 * per card system, a value file that only authenticated Credit and Debit change, and a cyclic
 * record file in which every till write leaves a record committed in the same transaction as
 * the value change, so a write the card was pulled from can be decided exactly later. Pure
 * functions and constants; the card session drives them.
 */

/** The wallet application's default AID (configurable): "CW" and 1, sent as 01 57 43. */
export const DEFAULT_DESFIRE_AID = 0x435701;

/** Key numbers in the application. */
export const KEY_APPLICATION_MASTER = 0;
export const KEY_TILL = 1;
export const KEY_MACHINE = 2;
export const APPLICATION_KEY_COUNT = 3;

export const VALUE_FILE = 0x01;
export const RECORD_FILE = 0x02;

/**
 * Application key settings: bit 0 the application master key may change, bit 1 file settings
 * readable without it, bit 2 clear (files created and deleted with it only), bit 3 these
 * settings may change, bits 4-7 zero (only the application master key changes keys).
 */
export const APPLICATION_SETTINGS = 0x0b;

/**
 * PICC key settings after personalization: the PICC master key may change, the application
 * list is readable without it, applications are created and deleted with it only, these
 * settings may change.
 */
export const PICC_SETTINGS = 0x0b;

const NEVER = 0xf;

/** The till (key 1) credits and debits; the machines (key 2) read and debit; key 0 changes it. */
export const VALUE_FILE_ACCESS: AccessRights = {
  read: KEY_MACHINE,
  write: NEVER,
  readWrite: KEY_TILL,
  change: KEY_APPLICATION_MASTER,
};

/** Only the till reads and writes the movement records. */
export const RECORD_FILE_ACCESS: AccessRights = {
  read: NEVER,
  write: NEVER,
  readWrite: KEY_TILL,
  change: KEY_APPLICATION_MASTER,
};

export const VALUE_FILE_SPEC: ValueFileSpec = {
  fileNo: VALUE_FILE,
  comm: 'enciphered',
  access: VALUE_FILE_ACCESS,
  lowerLimit: 0,
  upperLimit: MAX_CARD_BALANCE,
  value: 0,
  limitedCredit: false,
};

/**
 * Bytes of one movement record: 32 in a wallet made now (v2: the movement's credits and kind
 * too, so any till can tell a float recharge on the card), 24 in one made before (v1).
 */
export const RECORD_SIZE = 32;
export const RECORD_SIZE_V1 = 24;
/** Bit 0 of a v2 record's flags byte: the movement is a float recharge (docs/card-format.md). */
const FLOAT_RECHARGE = 0x01;
/** The file's MaxNumberOfRecords: it keeps the 9 newest records (one is the card's spare). */
export const RECORD_FILE_CAPACITY = 10;

export const RECORD_FILE_SPEC: RecordFileSpec = {
  fileNo: RECORD_FILE,
  comm: 'enciphered',
  access: RECORD_FILE_ACCESS,
  recordSize: RECORD_SIZE,
  maxRecords: RECORD_FILE_CAPACITY,
};

/** One movement record: what a till wrote, in the transaction that changed the value. */
export interface MovementRecord {
  /** The card's till write counter: 1 for the first till write, then one more each. */
  counter: number;
  /** 16 bytes naming the movement (movementIdBytes). */
  movementId: Buffer;
  /** The value the till left in the value file. */
  valueAfter: number;
  /** v2: the credits the write moved (a payout's negative). */
  credits?: number;
  /** v2: a float recharge (its id names its float, common/float-ids.ts). */
  float?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A movement id as 16 bytes: a UUID's own bytes, any other id the first 16 of its SHA-256. */
export function movementIdBytes(movementId: string): Buffer {
  if (UUID.test(movementId)) return Buffer.from(movementId.replaceAll('-', ''), 'hex');
  return createHash('sha256').update(movementId, 'utf8').digest().subarray(0, 16);
}

/**
 * Bytes 0-3 counter (uint32 LE), 4-19 movement id, 20-23 value after (int32 LE); v2 (32 bytes)
 * adds 24-27 the credits moved (int32 LE) and 28 the flags (bit 0: a float recharge), 29-31
 * zero.
 */
export function encodeMovementRecord(record: MovementRecord, size = RECORD_SIZE): Buffer {
  if (!Number.isInteger(record.counter) || record.counter < 1 || record.counter > 0xffffffff) {
    throw new RangeError(`a record counter is 1 to 2^32-1, not ${record.counter}`);
  }
  if (record.movementId.length !== 16) throw new RangeError('a movement id is 16 bytes');
  if (size !== RECORD_SIZE && size !== RECORD_SIZE_V1) {
    throw new RangeError(`a record is ${RECORD_SIZE} or ${RECORD_SIZE_V1} bytes, not ${size}`);
  }
  const out = Buffer.alloc(size);
  out.writeUInt32LE(record.counter, 0);
  record.movementId.copy(out, 4);
  out.writeInt32LE(record.valueAfter, 20);
  if (size === RECORD_SIZE) {
    out.writeInt32LE(record.credits ?? 0, 24);
    out[28] = record.float ? FLOAT_RECHARGE : 0;
  }
  return out;
}

export function decodeMovementRecord(bytes: Buffer): MovementRecord {
  if (bytes.length !== RECORD_SIZE && bytes.length !== RECORD_SIZE_V1) {
    throw new RangeError(`a record is ${RECORD_SIZE} or ${RECORD_SIZE_V1} bytes`);
  }
  const v1 = {
    counter: bytes.readUInt32LE(0),
    movementId: Buffer.from(bytes.subarray(4, 20)),
    valueAfter: bytes.readInt32LE(20),
  };
  if (bytes.length === RECORD_SIZE_V1) return v1;
  return {
    ...v1,
    credits: bytes.readInt32LE(24),
    float: ((bytes[28] as number) & FLOAT_RECHARGE) !== 0,
  };
}

/**
 * The float recharges records show (v2 only: a v1 record does not say), newest first: each its
 * movement id (its bytes as a UUID) and credits.
 */
export function floatEvidenceOf(
  records: readonly Buffer[],
): { movementId: string; credits: number }[] {
  return records
    .map(decodeMovementRecord)
    .filter((record) => record.float === true && (record.credits ?? 0) > 0)
    .sort((a, b) => b.counter - a.counter)
    .map((record) => ({
      movementId: uuidOf(record.movementId),
      credits: record.credits as number,
    }));
}

function uuidOf(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A record as the ledger sees it (`cardRecord`): its movement's 16 bytes written as a UUID, so
 * the ledger finds a movement whose id is a UUID by it.
 */
export function cardRecordOf(bytes: Buffer): CardRecord {
  const { counter, movementId, valueAfter } = decodeMovementRecord(bytes);
  const uuid = movementId
    .toString('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  return { counter, movementId: uuid, valueAfter };
}

/** What a till reads of a DESFire wallet. */
export interface DesfireWalletState {
  balance: number;
  /** The newest record's counter, 0 when the card has none (fresh from personalization). */
  counter: number;
}

/**
 * A DESFire card write, as the journal keeps it. `previousBalance` is null for a card that
 * held no wallet application when it was read.
 */
export interface DesfireWriteIntent {
  type: 'desfire';
  /** The counter of the record this write adds. */
  counter: number;
  movementId: string;
  value: number;
  previousBalance: number | null;
  /** A float recharge: its record says so (v2), so any till can tell it from the card. */
  float?: true;
}

const BEFORE_PREFIX = 'desfire:v1:';
const BLANK_BEFORE = `${BEFORE_PREFIX}blank`;
/** `desfire:v1:<balance>:<counter>`, or `desfire:v1:blank` for a card without the wallet. */
const VALID_BEFORE = /^desfire:v1:(\d{1,10}):(\d{1,10})$/;

/** The text a DESFire wallet reads as (wallet-card.ts, `before`); null: no wallet application. */
export function desfireBefore(state: DesfireWalletState | null): string {
  return state ? `${BEFORE_PREFIX}${state.balance}:${state.counter}` : BLANK_BEFORE;
}

export function isDesfireBefore(before: string): boolean {
  const match = VALID_BEFORE.exec(before);
  return (
    before === BLANK_BEFORE ||
    (match !== null &&
      Number(match[1]) <= MAX_CARD_BALANCE &&
      Number(match[2]) <= MAX_RECORD_COUNTER)
  );
}

/** The wallet a `before` says the card held; null: no wallet application. */
export function parseDesfireBefore(before: string): DesfireWalletState | null {
  if (before === BLANK_BEFORE) return null;
  const match = VALID_BEFORE.exec(before);
  if (!match || !isDesfireBefore(before))
    throw new RangeError(`not a DESFire wallet state: "${before}"`);
  return { balance: Number(match[1]), counter: Number(match[2]) };
}

const MAX_RECORD_COUNTER = 0xffffffff;

/**
 * The write that takes a card holding `before` to `newBalance` for movement `movementId`:
 * pure, so the same movement planned again (by another till, from the ledger's record) is the
 * same write.
 */
export function planDesfireWrite(
  before: string,
  newBalance: number,
  movementId: string,
  float = false,
): DesfireWriteIntent {
  if (!Number.isInteger(newBalance) || newBalance < 0 || newBalance > MAX_CARD_BALANCE) {
    throw new RangeError(`a DESFire balance is 0 to ${MAX_CARD_BALANCE}, not ${newBalance}`);
  }
  const wallet = parseDesfireBefore(before);
  const counter = wallet?.counter ?? 0;
  if (counter >= MAX_RECORD_COUNTER) throw new RangeError('the card has no record counter left');
  return {
    type: 'desfire',
    counter: counter + 1,
    movementId,
    value: newBalance,
    previousBalance: wallet?.balance ?? null,
    ...(float ? { float: true as const } : {}),
  };
}

/** What a card held when `before` was read. */
export function desfireBalanceBefore(before: string): number {
  return parseDesfireBefore(before)?.balance ?? 0;
}

/** The record a planned write adds, in a file of `size`-byte records. */
export function recordOf(intent: DesfireWriteIntent, size = RECORD_SIZE): Buffer {
  return encodeMovementRecord(
    {
      counter: intent.counter,
      movementId: movementIdBytes(intent.movementId),
      valueAfter: intent.value,
      credits: intent.value - (intent.previousBalance ?? 0),
      ...(intent.float ? { float: true } : {}),
    },
    size,
  );
}

export type DesfireWriteOutcome = 'committed' | 'not-written' | 'unknown';

/**
 * Decides a write from the records the card holds (oldest first), whatever the value file
 * holds now (machines debit it without records):
 * - the record of the planned counter names this movement and value: committed;
 * - it names another movement: not written (that counter went to another write, and this one's
 *   transaction can never commit any more: a DESFire card drops an uncommitted transaction
 *   when it loses power, is reselected or answers an error);
 * - no record reaches the planned counter: not written;
 * - the records start after the planned counter (it rotated out of the file), or anything
 *   else: unknown, for an operator.
 */
export function decideDesfireWrite(
  intent: DesfireWriteIntent,
  records: readonly Buffer[],
): DesfireWriteOutcome {
  const decoded = records.map(decodeMovementRecord);
  const own = decoded.find((record) => record.counter === intent.counter);
  if (own) {
    if (!own.movementId.equals(movementIdBytes(intent.movementId))) return 'not-written';
    return own.valueAfter === intent.value ? 'committed' : 'unknown';
  }
  const newest = decoded.at(-1);
  if (!newest || newest.counter < intent.counter) return 'not-written';
  return 'unknown';
}
