/**
 * Float movement ids (docs/cloud-api.md, "Till floats"): a float hands out UUIDs made of its
 * random 6-byte prefix and a sequence number, `pppppppp-pppp-8000-8000-000000ssssss` (version
 * 8, the RFC 9562 layout for ids of one's own making). So an id names its float, and so its
 * till, and an id whose sequence number the float never handed out is forged. A worker's own
 * movement ids are random (version 4): the two never meet.
 */

/** The largest sequence number: 3 bytes, as a MIFARE Classic card's float reference keeps it. */
export const MAX_FLOAT_SEQ = 0xff_ffff;

const PREFIX = /^[0-9a-f]{12}$/;
const FLOAT_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-8000-8000-000000([0-9a-f]{6})$/i;

/** The id of a float's movement `seq` (1 to MAX_FLOAT_SEQ). */
export function floatMovementId(prefix: string, seq: number): string {
  if (!PREFIX.test(prefix))
    throw new RangeError(`a float prefix is 12 hex digits, not "${prefix}"`);
  if (!Number.isInteger(seq) || seq < 1 || seq > MAX_FLOAT_SEQ) {
    throw new RangeError(`a float sequence number is 1 to ${MAX_FLOAT_SEQ}, not ${seq}`);
  }
  const hex = seq.toString(16).padStart(6, '0');
  return `${prefix.slice(0, 8)}-${prefix.slice(8)}-8000-8000-000000${hex}`;
}

/** The float prefix and sequence number of a float movement id; undefined for any other id. */
export function parseFloatMovementId(id: string): { prefix: string; seq: number } | undefined {
  const match = FLOAT_ID.exec(id);
  if (!match) return undefined;
  const seq = Number.parseInt(match[3] as string, 16);
  if (seq < 1) return undefined;
  return { prefix: `${match[1]}${match[2]}`.toLowerCase(), seq };
}
