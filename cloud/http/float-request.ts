import { parseDecimal } from '../../common/decimal.ts';
import {
  REFERENCE_PATTERN,
  type CloseFloatRequest,
  type FloatMovementReport,
  type FloatReportRequest,
  type FloatTopUpRequest,
  type OpenFloatRequest,
} from '../../common/ledger-contract.ts';
import { ledgerErrors } from '../errors.ts';
import { MAX_FLOAT_IDS, MAX_REPORT_MOVEMENTS } from '../floats.ts';
import { MAX_MOVEMENT_CREDITS } from '../ledger.ts';
import { CARD_BEFORE, CARD_ID, parseTimestamp, TIMESTAMP_YEARS, UUID } from './movement-request.ts';

type Invalid = (detail: string) => Error;
const WRITES = ['written', 'not-written', 'undecided'] as const;

/** The body as an object with only `allowed` fields, or `invalid`. */
function objectOf(body: unknown, allowed: readonly string[], invalid: Invalid, at = 'body') {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid(`${at}: must be a JSON object`);
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw invalid(
      unknown.map((key) => `${at === 'body' ? '' : `${at}.`}${key}`).join(', ') + ': unknown field',
    );
  }
  return fields;
}

function uuid(value: unknown, name: string, invalid: Invalid): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw invalid(`${name}: must be a UUID`);
  return value;
}

function count(value: unknown, name: string, min: number, max: number, invalid: Invalid): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name}: must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** `POST /v1/floats`: `{ tillId, requestId, ids? }`. */
export function parseOpenFloatRequest(body: unknown): OpenFloatRequest {
  const invalid = ledgerErrors.invalidRequest;
  const fields = objectOf(body, ['tillId', 'requestId', 'ids'], invalid);
  return {
    tillId: uuid(fields.tillId, 'tillId', invalid),
    requestId: uuid(fields.requestId, 'requestId', invalid),
    ...(fields.ids === undefined
      ? {}
      : { ids: count(fields.ids, 'ids', 1, MAX_FLOAT_IDS, invalid) }),
  };
}

/** `POST /v1/floats/{id}/topups`: `{ id, credits, ids?, tillId? }`. */
export function parseTopUpRequest(body: unknown): FloatTopUpRequest {
  const invalid = ledgerErrors.invalidRequest;
  const fields = objectOf(body, ['id', 'credits', 'ids', 'tillId'], invalid);
  return {
    id: uuid(fields.id, 'id', invalid),
    credits: count(fields.credits, 'credits', 0, MAX_MOVEMENT_CREDITS, invalid),
    ...(fields.ids === undefined
      ? {}
      : { ids: count(fields.ids, 'ids', 0, MAX_FLOAT_IDS, invalid) }),
    ...(fields.tillId === undefined ? {} : { tillId: uuid(fields.tillId, 'tillId', invalid) }),
  };
}

/**
 * `POST /v1/float-reports`: `{ tillId, movements: [...] }`, 1 to 500 movements. A malformed
 * report is refused whole (400 InvalidReport naming the movement and field): it is a till's
 * bug, not a sale. Whatever is well formed is answered movement by movement.
 */
export function parseFloatReport(body: unknown): FloatReportRequest {
  const invalid = ledgerErrors.invalidReport;
  const fields = objectOf(body, ['tillId', 'movements'], invalid);
  return {
    tillId: uuid(fields.tillId, 'tillId', invalid),
    movements: parseMovements(fields.movements, 1, invalid),
  };
}

/** `POST /v1/floats/{id}/close`: `{ tillId, movements? }` (the final report, 0 to 500). */
export function parseCloseFloatRequest(body: unknown): CloseFloatRequest {
  const invalid = ledgerErrors.invalidReport;
  const fields = objectOf(body, ['tillId', 'movements'], invalid);
  return {
    tillId: uuid(fields.tillId, 'tillId', invalid),
    movements: fields.movements === undefined ? [] : parseMovements(fields.movements, 0, invalid),
  };
}

export function parseMovements(
  value: unknown,
  min: number,
  invalid: Invalid,
): FloatMovementReport[] {
  if (!Array.isArray(value) || value.length < min || value.length > MAX_REPORT_MOVEMENTS) {
    throw invalid(`movements: must be an array of ${min} to ${MAX_REPORT_MOVEMENTS} movements`);
  }
  const seen = new Set<string>();
  return value.map((item, index) => {
    const movement = parseMovement(item, `movements[${index}]`, invalid);
    const id = movement.id.toLowerCase();
    if (seen.has(id))
      throw invalid(`movements[${index}].id: ${movement.id} is in the report twice`);
    seen.add(id);
    return movement;
  });
}

function parseMovement(item: unknown, at: string, invalid: Invalid): FloatMovementReport {
  const fields = objectOf(
    item,
    [
      'id',
      'cardId',
      'credits',
      'card',
      'creditCost',
      'occurredAt',
      'cardBefore',
      'found',
      'reference',
      'bonusCredits',
    ],
    invalid,
    at,
  );
  const { cardId, card, creditCost, occurredAt, cardBefore, found, reference } = fields;
  const movement: FloatMovementReport = {
    id: uuid(fields.id, `${at}.id`, invalid),
    cardId: '',
    credits: count(fields.credits, `${at}.credits`, 1, MAX_MOVEMENT_CREDITS, invalid),
    card: 'written',
  };
  if (typeof cardId !== 'string' || !CARD_ID.test(cardId)) {
    throw invalid(`${at}.cardId: must be 8 or 14 uppercase hexadecimal characters`);
  }
  movement.cardId = cardId;
  if (!WRITES.includes(card as (typeof WRITES)[number])) {
    throw invalid(`${at}.card: must be "written", "not-written" or "undecided"`);
  }
  movement.card = card as FloatMovementReport['card'];
  if (creditCost !== undefined) {
    const cost =
      typeof creditCost === 'string'
        ? parseDecimal(creditCost, { maxIntegerDigits: 8 })
        : undefined;
    if (cost === undefined || cost <= 0n) {
      throw invalid(`${at}.creditCost: must be a decimal string > 0 with at most 4 decimals`);
    }
    movement.creditCost = creditCost as string;
  }
  if (occurredAt !== undefined) {
    if (parseTimestamp(occurredAt) === undefined) {
      throw invalid(
        `${at}.occurredAt: must be an ISO 8601 timestamp with its offset, from ${TIMESTAMP_YEARS.from} to ${TIMESTAMP_YEARS.to}`,
      );
    }
    movement.occurredAt = occurredAt as string;
  }
  if (cardBefore !== undefined) {
    if (typeof cardBefore !== 'string' || !CARD_BEFORE.test(cardBefore)) {
      throw invalid(`${at}.cardBefore: must be 1 to 200 visible ASCII characters`);
    }
    movement.cardBefore = cardBefore;
  }
  if (reference !== undefined) {
    if (typeof reference !== 'string' || !REFERENCE_PATTERN.test(reference)) {
      throw invalid(
        `${at}.reference: must be 1 to 80 printable ASCII characters, without a space at either end`,
      );
    }
    movement.reference = reference;
  }
  if (found !== undefined) {
    if (typeof found !== 'boolean') throw invalid(`${at}.found: must be true or false`);
    if (found && movement.card !== 'written') {
      throw invalid(`${at}.found: a movement found on a card is "written"`);
    }
    if (found) movement.found = true;
  }
  if (fields.bonusCredits !== undefined) {
    // Some of the credits, never all: a recharge pays for at least one.
    movement.bonusCredits = count(
      fields.bonusCredits,
      `${at}.bonusCredits`,
      0,
      movement.credits - 1,
      invalid,
    );
  }
  return movement;
}
