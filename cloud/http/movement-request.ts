import { ledgerErrors } from '../errors.ts';
import type { MovementRequest } from '../../common/ledger-contract.ts';
import { MAX_LIST_LIMIT, MAX_MOVEMENT_CREDITS } from '../ledger.ts';
import type { MovementState } from '../records.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CARD_ID = /^(?:[0-9A-F]{8}|[0-9A-F]{14})$/;
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
]);
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
  if (kind !== 'recharge' && kind !== 'discharge') {
    throw invalid('kind: must be "recharge" or "discharge"');
  }
  if (typeof cardId !== 'string' || !CARD_ID.test(cardId)) {
    throw invalid('cardId: must be 8 or 14 uppercase hexadecimal characters');
  }
  const card = parseCardCredits(kind, cardCredits, refuseAboveAccount);
  const hasCredits = credits !== undefined && credits !== null;
  const hasAmount = amount !== undefined && amount !== null;
  if (hasCredits === hasAmount) throw invalid('credits, amount: give exactly one of the two');
  if (hasCredits) {
    if (!isIntegerFrom(1, credits)) {
      throw invalid(`credits: must be an integer from 1 to ${MAX_MOVEMENT_CREDITS}`);
    }
    return { id, kind, cardId, credits, ...card };
  }
  if (kind !== 'recharge') throw invalid('amount: only a recharge may give an amount');
  if (typeof amount !== 'string' || !AMOUNT.test(amount) || !/[1-9]/.test(amount)) {
    throw invalid('amount: must be a decimal string > 0 with at most 2 decimals, like "12.50"');
  }
  return { id, kind, cardId, amount, ...card };
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

export function parseMovementId(id: string): string {
  if (!UUID.test(id)) throw ledgerErrors.invalidMovement('id: must be a UUID');
  return id;
}

/** `GET /v1/movements` query: `state` (optional), `limit` (1..1000, default 100). */
export function parseListQuery(query: Record<string, unknown>): {
  state?: MovementState;
  limit?: number;
} {
  const invalid = (detail: string) => ledgerErrors.invalidQuery(detail);
  const { state, limit } = query;
  const result: { state?: MovementState; limit?: number } = {};
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
