import { parseFloatMovementId } from '../../common/float-ids.ts';
import { ledgerErrors } from '../errors.ts';
import {
  REFERENCE_PATTERN,
  type CardRecord,
  type MovementRequest,
  type ResolveRequest,
} from '../../common/ledger-contract.ts';
import { MAX_LIST_LIMIT, MAX_MOVEMENT_CREDITS } from '../ledger.ts';
import type { MovementState } from '../records.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const CARD_ID = /^(?:[0-9A-F]{8}|[0-9A-F]{14})$/;
/** Euros: up to 12 integer digits, up to 2 decimals. */
const AMOUNT = /^\d{1,12}(?:\.\d{1,2})?$/;
const FIELDS = new Set([
  'id',
  'kind',
  'cardId',
  'credits',
  'amount',
  'cardCredits',
  'refuseAboveAccount',
  'tillId',
  'cardBefore',
  'compensates',
  'reference',
  'cardRecord',
  'refunds',
  'applies',
  'tillTime',
]);
const REFERENCE_RULE =
  'reference: must be 1 to 80 printable ASCII characters, without a space at either end';
/** The kinds a card's own rules make, and the fields each needs besides id, kind, cardId. */
const CARD_RULE_FIELDS: Record<string, readonly string[]> = {
  refund: ['refunds', 'tillId', 'cardCredits', 'tillTime'],
  correction: ['applies', 'tillId', 'cardCredits'],
  replacement: ['applies', 'tillId'],
  'block-clear': ['tillId', 'cardCredits'],
};
/** What the card held, in the till's card format: opaque, visible ASCII. */
export const CARD_BEFORE = /^[\x21-\x7e]{1,200}$/;
const MAX_EVIDENCE = 500;
/** The years a till's clock may name; anything else is a clock that was never set. */
export const TIMESTAMP_YEARS = { from: 2000, to: 2199 };
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * An ISO 8601 timestamp with its offset (`2026-01-31T09:15:02.123Z`, `...+01:00`) of the
 * years a till's clock may name, or undefined. Every field is checked, as PostgreSQL would
 * (JavaScript's Date turns 30 February into 2 March).
 */
export function parseTimestamp(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = Array.from(
    { length: 8 },
    (_, index) => Number(match[index + 1] ?? 0),
  ) as [number, number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const valid =
    year >= TIMESTAMP_YEARS.from &&
    year <= TIMESTAMP_YEARS.to &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 14 &&
    offsetMinutes <= 59;
  return valid ? new Date(text) : undefined;
}
const STATES: readonly MovementState[] = ['pending', 'posted', 'voided'];

/**
 * Validates a `POST /v1/movements` body. A failure is 400 InvalidMovement whose detail names
 * the field ("credits: must be an integer from 1 to 2147483647").
 */
export function parseMovementRequest(body: unknown): MovementRequest {
  const invalid = ledgerErrors.invalidMovement;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('body: must be a JSON object');
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !FIELDS.has(key));
  if (unknown.length > 0) throw invalid(`${unknown.join(', ')}: unknown field`);

  const { id, kind, cardId, credits, amount, cardCredits, refuseAboveAccount } = fields;
  if (typeof id !== 'string' || !UUID.test(id)) throw invalid('id: must be a UUID');
  if (parseFloatMovementId(id) !== undefined) {
    throw invalid('id: a float movement id is reported (POST /v1/float-reports), not created');
  }
  const origin = parseOrigin(fields);
  if (typeof kind === 'string' && kind in CARD_RULE_FIELDS) {
    return parseCardRuleMovement(fields, origin);
  }
  if (kind !== 'recharge' && kind !== 'discharge') {
    throw invalid(
      'kind: must be "recharge", "discharge", "refund", "correction", "replacement" or "block-clear"',
    );
  }
  if (typeof cardId !== 'string' || !CARD_ID.test(cardId)) {
    throw invalid('cardId: must be 8 or 14 uppercase hexadecimal characters');
  }
  for (const field of ['refunds', 'applies', 'tillTime']) {
    if (fields[field] !== undefined) throw invalid(`${field}: not for a ${kind}`);
  }
  const card = {
    ...parseCardCredits(kind, cardCredits, refuseAboveAccount),
    ...parseCardRecord(fields.cardRecord),
  };
  const hasCredits = credits !== undefined && credits !== null;
  const hasAmount = amount !== undefined && amount !== null;
  if (hasCredits === hasAmount) throw invalid('credits, amount: give exactly one of the two');
  if (hasCredits) {
    if (!isIntegerFrom(1, credits)) {
      throw invalid(`credits: must be an integer from 1 to ${MAX_MOVEMENT_CREDITS}`);
    }
    return { id, kind, cardId, credits, ...card, ...origin };
  }
  if (kind !== 'recharge') throw invalid('amount: only a recharge may give an amount');
  if (typeof amount !== 'string' || !AMOUNT.test(amount) || !/[1-9]/.test(amount)) {
    throw invalid('amount: must be a decimal string > 0 with at most 2 decimals, like "12.50"');
  }
  return { id, kind, cardId, amount, ...card, ...origin };
}

/**
 * A refund, correction, replacement or block-clear (docs/cloud-api.md, "Lost cards, refunds
 * and bonuses"): the ledger decides its credits, so it gives none; each needs its own fields.
 */
function parseCardRuleMovement(
  fields: Record<string, unknown>,
  origin: Pick<MovementRequest, 'tillId' | 'cardBefore' | 'compensates'>,
): MovementRequest {
  const invalid = ledgerErrors.invalidMovement;
  const kind = fields.kind as MovementRequest['kind'];
  // A compensation of one (docs/cloud-api.md): the ledger takes the rest from that movement.
  const compensation = origin.compensates !== undefined;
  const needed = compensation ? ['tillId'] : (CARD_RULE_FIELDS[kind] ?? []);
  const allowed = new Set(
    compensation
      ? ['id', 'kind', 'cardId', 'compensates', 'credits', ...needed]
      : ['id', 'kind', 'cardId', 'cardBefore', 'cardCredits', ...needed],
  );
  const extra = Object.keys(fields).filter((key) => !allowed.has(key));
  if (extra.length > 0) throw invalid(`${extra.join(', ')}: not for a ${kind}`);
  const missing = needed.filter((key) => fields[key] === undefined || fields[key] === null);
  if (missing.length > 0) throw invalid(`${missing.join(', ')}: required for a ${kind}`);
  const { cardId, cardCredits, refunds, applies, tillTime } = fields;
  if (typeof cardId !== 'string' || !CARD_ID.test(cardId)) {
    throw invalid('cardId: must be 8 or 14 uppercase hexadecimal characters');
  }
  const result: MovementRequest = {
    id: fields.id as string,
    kind,
    cardId,
    ...origin,
  };
  if (fields.credits !== undefined) {
    if (!isIntegerFrom(0, fields.credits)) {
      throw invalid(`credits: must be an integer from 0 to ${MAX_MOVEMENT_CREDITS}`);
    }
    result.credits = fields.credits;
  }
  if (cardCredits !== undefined) {
    if (!isIntegerFrom(0, cardCredits)) {
      throw invalid(`cardCredits: must be an integer from 0 to ${MAX_MOVEMENT_CREDITS}`);
    }
    result.cardCredits = cardCredits;
  }
  for (const [name, value] of [
    ['refunds', refunds],
    ['applies', applies],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'string' || !UUID.test(value)) throw invalid(`${name}: must be a UUID`);
    result[name] = value;
  }
  if (tillTime !== undefined) {
    if (parseTimestamp(tillTime) === undefined) {
      throw invalid(
        `tillTime: must be an ISO 8601 timestamp with its offset, from ${TIMESTAMP_YEARS.from} to ${TIMESTAMP_YEARS.to}`,
      );
    }
    result.tillTime = tillTime as string;
  }
  return result;
}

/** The optional `tillId`, `cardBefore`, `compensates` and `reference` of a movement. */
function parseOrigin(
  fields: Record<string, unknown>,
): Pick<MovementRequest, 'tillId' | 'cardBefore' | 'compensates' | 'reference'> {
  const invalid = ledgerErrors.invalidMovement;
  const { tillId, cardBefore, compensates, reference } = fields;
  const result: Pick<MovementRequest, 'tillId' | 'cardBefore' | 'compensates' | 'reference'> = {};
  if (reference !== undefined) {
    if (typeof reference !== 'string' || !REFERENCE_PATTERN.test(reference)) {
      throw invalid(REFERENCE_RULE);
    }
    result.reference = reference;
  }
  if (tillId !== undefined) {
    if (typeof tillId !== 'string' || !UUID.test(tillId)) throw invalid('tillId: must be a UUID');
    result.tillId = tillId;
  }
  if (cardBefore !== undefined) {
    if (typeof cardBefore !== 'string' || !CARD_BEFORE.test(cardBefore)) {
      throw invalid('cardBefore: must be 1 to 200 visible ASCII characters');
    }
    result.cardBefore = cardBefore;
  }
  if (compensates !== undefined) {
    if (typeof compensates !== 'string' || !UUID.test(compensates)) {
      throw invalid('compensates: must be a UUID');
    }
    if (compensates.toLowerCase() === String(fields.id).toLowerCase()) {
      throw invalid('compensates: must name another movement');
    }
    result.compensates = compensates;
  }
  return result;
}

/**
 * The optional body of a post or void: `tillId` (a UUID), `evidence` (1 to 500 characters) and
 * `occurredAt` (an ISO 8601 timestamp with its offset). No body, or an empty one, is `{}`.
 */
export function parseResolveRequest(body: unknown): ResolveRequest {
  const invalid = ledgerErrors.invalidMovement;
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('body: must be a JSON object');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter(
    (key) => key !== 'tillId' && key !== 'evidence' && key !== 'occurredAt',
  );
  if (unknown.length > 0) throw invalid(`${unknown.join(', ')}: unknown field`);
  const result: ResolveRequest = {};
  if (fields.tillId !== undefined) {
    if (typeof fields.tillId !== 'string' || !UUID.test(fields.tillId)) {
      throw invalid('tillId: must be a UUID');
    }
    result.tillId = fields.tillId;
  }
  if (fields.evidence !== undefined) {
    const evidence = fields.evidence;
    if (typeof evidence !== 'string' || evidence.trim() === '' || evidence.length > MAX_EVIDENCE) {
      throw invalid(`evidence: must be text of 1 to ${MAX_EVIDENCE} characters`);
    }
    result.evidence = evidence;
  }
  if (fields.occurredAt !== undefined) {
    if (parseTimestamp(fields.occurredAt) === undefined) {
      throw invalid(
        `occurredAt: must be an ISO 8601 timestamp with its offset, from ${TIMESTAMP_YEARS.from} to ${TIMESTAMP_YEARS.to}`,
      );
    }
    result.occurredAt = fields.occurredAt as string;
  }
  return result;
}

/** A JSON number that is a whole number of credits from `min` to the largest movement. */
function isIntegerFrom(min: number, value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= min &&
    value <= MAX_MOVEMENT_CREDITS
  );
}

/** The optional `cardCredits` and `refuseAboveAccount` of a recharge. */
function parseCardCredits(
  kind: 'recharge' | 'discharge',
  cardCredits: unknown,
  refuseAboveAccount: unknown,
): Pick<MovementRequest, 'cardCredits' | 'refuseAboveAccount'> {
  const invalid = ledgerErrors.invalidMovement;
  const result: Pick<MovementRequest, 'cardCredits' | 'refuseAboveAccount'> = {};
  if (cardCredits !== undefined) {
    if (kind !== 'recharge') throw invalid('cardCredits: only a recharge may give it');
    if (!isIntegerFrom(0, cardCredits)) {
      throw invalid(`cardCredits: must be an integer from 0 to ${MAX_MOVEMENT_CREDITS}`);
    }
    result.cardCredits = cardCredits;
  }
  if (refuseAboveAccount !== undefined) {
    if (typeof refuseAboveAccount !== 'boolean') {
      throw invalid('refuseAboveAccount: must be true or false');
    }
    if (result.cardCredits === undefined) {
      throw invalid('refuseAboveAccount: only with cardCredits');
    }
    result.refuseAboveAccount = refuseAboveAccount;
  }
  return result;
}

const MAX_RECORD_COUNTER = 4_294_967_295;
const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };
const RECORD_FIELDS = ['counter', 'movementId', 'valueAfter'];

/**
 * The optional `cardRecord`: the card's newest movement record, as the till read it (a record's
 * counter is a uint32, its value an int32, its movement 16 bytes shown as a UUID).
 */
function parseCardRecord(record: unknown): Pick<MovementRequest, 'cardRecord'> {
  if (record === undefined) return {};
  const invalid = ledgerErrors.invalidMovement;
  const shape = 'cardRecord: must be { counter, movementId, valueAfter }';
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw invalid(shape);
  const fields = record as Record<string, unknown>;
  const keys = Object.keys(fields);
  if (keys.length !== RECORD_FIELDS.length || !keys.every((key) => RECORD_FIELDS.includes(key))) {
    throw invalid(shape);
  }
  const { counter, movementId, valueAfter } = fields;
  if (!isInteger(counter, 0, MAX_RECORD_COUNTER)) {
    throw invalid(`cardRecord.counter: must be an integer from 0 to ${MAX_RECORD_COUNTER}`);
  }
  if (typeof movementId !== 'string' || !UUID.test(movementId)) {
    throw invalid('cardRecord.movementId: must be a UUID');
  }
  if (!isInteger(valueAfter, INT32.min, INT32.max)) {
    throw invalid(`cardRecord.valueAfter: must be an integer from ${INT32.min} to ${INT32.max}`);
  }
  const parsed: CardRecord = { counter, movementId, valueAfter };
  return { cardRecord: parsed };
}

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

export function parseMovementId(id: string): string {
  if (!UUID.test(id)) throw ledgerErrors.invalidMovement('id: must be a UUID');
  return id;
}

/**
 * `GET /v1/movements` query: `state` (optional), `till` (optional, a till's UUID),
 * `reference` (optional, a POS reference), `limit` (1..1000, default 100).
 */
export function parseListQuery(query: Record<string, unknown>): {
  state?: MovementState;
  tillId?: string;
  reference?: string;
  limit?: number;
} {
  const invalid = (detail: string) => ledgerErrors.invalidQuery(detail);
  const { state, till, reference, limit } = query;
  const result: { state?: MovementState; tillId?: string; reference?: string; limit?: number } = {};
  if (reference !== undefined) {
    if (typeof reference !== 'string' || !REFERENCE_PATTERN.test(reference)) {
      throw invalid(REFERENCE_RULE);
    }
    result.reference = reference;
  }
  if (till !== undefined) {
    if (typeof till !== 'string' || !UUID.test(till)) throw invalid('till: must be a UUID');
    result.tillId = till;
  }
  if (state !== undefined) {
    if (typeof state !== 'string' || !STATES.includes(state as MovementState)) {
      throw invalid('state: must be pending, posted or voided');
    }
    result.state = state as MovementState;
  }
  if (limit !== undefined) {
    const value = typeof limit === 'string' && /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(value >= 1 && value <= MAX_LIST_LIMIT)) {
      throw invalid(`limit: must be an integer from 1 to ${MAX_LIST_LIMIT}`);
    }
    result.limit = value;
  }
  return result;
}
