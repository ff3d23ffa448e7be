/**
 * The float reference of a MIFARE Classic card (docs/card-format.md, "The float reference"):
 * the wallet sector's spare block (block 6 in sector 1) names the card's newest float recharge,
 * its movement id and credits, and the generation of the value write it goes with. A till that
 * reads the card can then tell the ledger of a float recharge its till has not reported. Pure
 * functions: the card session moves the bytes.
 *
 * Bytes: 0 the tag `F1`, 1 the generation, 2-7 the float's id prefix, 8-10 the sequence number
 * (uint24 big-endian), 11-13 the credits (uint24 big-endian), 14-15 a CRC-16/CCITT-FALSE of
 * bytes 0-13 (big-endian). Anything else in the block (all zeros on a card no float recharged,
 * a torn write) is no reference.
 */
import { floatMovementId, parseFloatMovementId } from '../../common/float-ids.ts';

export const FLOAT_REFERENCE_TAG = 0xf1;
/** The most credits a reference holds (3 bytes); a float recharge is far below it. */
export const MAX_REFERENCE_CREDITS = 0xff_ffff;

export interface FloatReference {
  /** The generation of the value block written with it: it counts only while that is active. */
  generation: number;
  movementId: string;
  credits: number;
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF): `123456789` gives 0x29B1. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

export function encodeFloatReference(reference: FloatReference): Buffer {
  const id = parseFloatMovementId(reference.movementId);
  if (!id) throw new RangeError(`${reference.movementId} is not a float movement id`);
  const { generation, credits } = reference;
  if (!Number.isInteger(generation) || generation < 0 || generation > 255) {
    throw new RangeError(`generation must be 0..255, got ${generation}`);
  }
  if (!Number.isInteger(credits) || credits < 1 || credits > MAX_REFERENCE_CREDITS) {
    throw new RangeError(
      `a float reference holds 1 to ${MAX_REFERENCE_CREDITS} credits, not ${credits}`,
    );
  }
  const block = Buffer.alloc(16);
  block[0] = FLOAT_REFERENCE_TAG;
  block[1] = generation;
  Buffer.from(id.prefix, 'hex').copy(block, 2);
  block.writeUIntBE(id.seq, 8, 3);
  block.writeUIntBE(credits, 11, 3);
  block.writeUInt16BE(crc16(block.subarray(0, 14)), 14);
  return block;
}

/** The reference a block holds, or undefined (no reference, or one torn or garbled). */
export function decodeFloatReference(block: Buffer): FloatReference | undefined {
  if (block.length !== 16 || block[0] !== FLOAT_REFERENCE_TAG) return undefined;
  if (block.readUInt16BE(14) !== crc16(block.subarray(0, 14))) return undefined;
  const seq = block.readUIntBE(8, 3);
  const credits = block.readUIntBE(11, 3);
  if (seq < 1 || credits < 1) return undefined;
  return {
    generation: block[1] as number,
    movementId: floatMovementId(block.subarray(2, 8).toString('hex'), seq),
    credits,
  };
}
