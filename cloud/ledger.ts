import { hashApiKey } from './api-keys.ts';
import type { Database } from './db/database.ts';
import { sqlState, violatedConstraint } from './db/database.ts';
import { parseDecimal } from '../common/decimal.ts';
import type { MovementRequest, ResolveRequest } from '../common/ledger-contract.ts';
import { contractRefusal, ledgerErrors } from './errors.ts';
import { readCardAccount, type CardAccount } from './card-accounts.ts';
import { Floats } from './floats.ts';
import { Cards } from './cards/cards.ts';
import {
  CUSTOMER_COLUMNS,
  movementColumnsOf,
  toCustomer,
  toMovement,
  type Customer,
  type CustomerRow,
  type Movement,
  type MovementRow,
  type MovementState,
} from './records.ts';

/** The kinds a card's own rules make: the ledger decides their credits. */
const CARD_RULE_KINDS: ReadonlySet<string> = new Set([
  'refund',
  'correction',
  'replacement',
  'block-clear',
]);

/** The largest credits of one movement (a PostgreSQL integer). */
export const MAX_MOVEMENT_CREDITS = 2_147_483_647;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export interface CreatedMovement {
  movement: Movement;
  /** True when the id already existed with this same request: the first answer, as of now. */
  replayed: boolean;
}

/**
 * The use cases of contract v1, for one authenticated customer each. Every change is one
 * transaction; a balance change and its ledger entry are written together.
 */
export class Ledger {
  /** The till floats (docs/cloud-api.md, "Till floats"). */
  readonly floats: Floats;
  /** Blocks, replacements, corrections, bonus quotes (docs/cloud-api.md, "Lost cards, ..."). */
  readonly cards: Cards;

  constructor(private readonly db: Database) {
    this.floats = new Floats(db);
    this.cards = new Cards(db);
  }

  /**
   * The customer bound to an API key: 401 when missing, unknown or revoked; 403 unassigned.
   * `allowRevoked`: a revoked key still names its customer (a float report: what its till sold
   * before it knew is on cards).
   */
  async authenticate(apiKey: string | undefined, allowRevoked = false): Promise<string> {
    if (!apiKey) throw ledgerErrors.missingApiKey();
    const { rows } = await this.db.query<{ customer_id: string | null; revoked: boolean }>(
      'SELECT customer_id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE key_hash = $1',
      [hashApiKey(apiKey)],
    );
    const key = rows[0];
    if (!key || (key.revoked && !allowRevoked)) throw ledgerErrors.invalidApiKey();
    if (!key.customer_id) throw ledgerErrors.keyNotAssigned();
    return key.customer_id;
  }

  /** Hashes of every key that is not revoked: what the authentication guard checks first. */
  async activeKeyHashes(): Promise<Set<string>> {
    const { rows } = await this.db.query<{ key_hash: string }>(
      'SELECT key_hash FROM api_keys WHERE revoked_at IS NULL',
    );
    return new Set(rows.map((row) => row.key_hash));
  }

  /** The shop: its pool, what its open floats hold, and its float settings. */
  async getCustomer(customerId: string): Promise<Customer> {
    const { rows } = await this.db.query<CustomerRow>(
      `SELECT ${CUSTOMER_COLUMNS},
         (SELECT COALESCE(sum(f.credits), 0) FROM floats f
          WHERE f.customer_id = customers.id AND f.state = 'open') AS float_credits
       FROM customers WHERE id = $1`,
      [customerId],
    );
    const row = rows[0];
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    return toCustomer(row);
  }

  /**
   * Records a pending movement. A recharge reserves its credits from the pool (under the
   * customer's row lock) or fails with NoCredits, storing nothing. The same id with the same
   * request replays the stored movement; with anything else it is a MovementIdConflict. One
   * round trip: `ledger_create_movement` (cloud/db/routines/) holds the whole transaction. With
   * `keyHash`, the call itself checks that this key of the customer is still valid (else
   * InvalidApiKey), and nothing else needs to look the key up.
   */
  async createMovement(
    customerId: string,
    request: MovementRequest,
    keyHash?: string,
  ): Promise<CreatedMovement> {
    if (
      request.amount !== undefined &&
      parseDecimal(request.amount, { maxDecimals: 2 }) === undefined
    ) {
      throw ledgerErrors.invalidMovement(
        'amount: must be a decimal string with at most 2 decimals',
      );
    }
    if (CARD_RULE_KINDS.has(request.kind)) {
      return this.createCardMovement(customerId, request, keyHash);
    }
    const answer = await this.call(
      'SELECT * FROM ledger_create_movement($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)',
      [
        customerId,
        request.id.toLowerCase(),
        request.kind,
        request.cardId,
        request.amount === undefined ? (request.credits ?? null) : null,
        request.amount ?? null,
        request.cardCredits ?? null,
        request.refuseAboveAccount ?? null,
        request.tillId?.toLowerCase() ?? null,
        request.cardBefore ?? null,
        request.compensates?.toLowerCase() ?? null,
        keyHash ?? null,
        request.reference ?? null,
        request.cardRecord?.counter ?? null,
        request.cardRecord?.movementId.toLowerCase() ?? null,
        request.cardRecord?.valueAfter ?? null,
      ],
      customerId,
    );
    return { movement: toMovement(answer, answer.customer_credits), replayed: answer.replayed };
  }

  /**
   * A movement of a card's own rules (refund, correction, replacement, block-clear): the
   * ledger decides its credits (`ledger_create_card_movement`).
   */
  private async createCardMovement(
    customerId: string,
    request: MovementRequest,
    keyHash: string | undefined,
  ): Promise<CreatedMovement> {
    const answer = await this.call(
      'SELECT * FROM ledger_create_card_movement($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [
        customerId,
        request.id.toLowerCase(),
        request.kind,
        request.cardId,
        request.tillId?.toLowerCase() ?? null,
        request.cardBefore ?? null,
        request.cardCredits ?? null,
        request.refunds?.toLowerCase() ?? null,
        request.applies?.toLowerCase() ?? null,
        request.tillTime ?? null,
        keyHash ?? null,
      ],
      customerId,
    );
    return { movement: toMovement(answer, answer.customer_credits), replayed: answer.replayed };
  }

  /** What the customer has put on one card: its account, flags and latest movements. */
  getCardAccount(customerId: string, cardId: string): Promise<CardAccount> {
    return readCardAccount(this.db, customerId, cardId);
  }

  /** Finalises a pending movement; a discharge returns its credits to the pool. */
  postMovement(
    customerId: string,
    id: string,
    by: ResolveRequest = {},
    keyHash?: string,
  ): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'posted', by, keyHash);
  }

  /** Cancels a pending movement; a recharge releases its reservation to the pool. */
  voidMovement(
    customerId: string,
    id: string,
    by: ResolveRequest = {},
    keyHash?: string,
  ): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'voided', by, keyHash);
  }

  async getMovement(customerId: string, id: string): Promise<Movement> {
    const { rows } = await this.db.query<MovementRow & { customer_credits: number | string }>(
      `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
       FROM movements m JOIN customers c ON c.id = m.customer_id
       WHERE m.id = $1 AND m.customer_id = $2`,
      [id.toLowerCase(), customerId],
    );
    const row = rows[0];
    if (!row) throw ledgerErrors.movementNotFound();
    return toMovement(row, row.customer_credits);
  }

  /**
   * The customer's movements, newest first, optionally in one state, of one till, or with one
   * POS reference.
   */
  async listMovements(
    customerId: string,
    {
      state,
      tillId,
      reference,
      limit = DEFAULT_LIST_LIMIT,
    }: { state?: MovementState; tillId?: string; reference?: string; limit?: number } = {},
  ): Promise<Movement[]> {
    const params: unknown[] = [customerId, Math.min(Math.max(1, limit), MAX_LIST_LIMIT)];
    const conditions = ['m.customer_id = $1'];
    if (state) conditions.push(`m.state = $${params.push(state)}`);
    if (tillId) conditions.push(`m.till_id = $${params.push(tillId.toLowerCase())}`);
    if (reference !== undefined) conditions.push(`m.reference = $${params.push(reference)}`);
    const { rows } = await this.db.query<MovementRow & { customer_credits: number | string }>(
      `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
       FROM movements m JOIN customers c ON c.id = m.customer_id
       WHERE ${conditions.join(' AND ')}
       ORDER BY m.created_at DESC, m.id DESC
       LIMIT $2`,
      params,
    );
    return rows.map((row) => toMovement(row, row.customer_credits));
  }

  /** Resolves when the database answers. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  private async resolveMovement(
    customerId: string,
    id: string,
    target: 'posted' | 'voided',
    by: ResolveRequest,
    keyHash: string | undefined,
  ): Promise<Movement> {
    const answer = await this.call(
      'SELECT * FROM ledger_resolve_movement($1, $2, $3, $4, $5, $6, $7)',
      [
        customerId,
        id.toLowerCase(),
        target,
        by.tillId?.toLowerCase() ?? null,
        by.evidence ?? null,
        by.occurredAt ?? null,
        keyHash ?? null,
      ],
      customerId,
    );
    return toMovement(answer, answer.customer_credits);
  }

  /**
   * One contract call: one statement, its own transaction (a function of cloud/db/routines/). Its
   * refusals come back as answers, so that a flag written for a refused movement is committed.
   */
  private async call(sql: string, params: unknown[], customerId: string): Promise<Answer> {
    let answer: AnswerRow | undefined;
    try {
      answer = (await this.db.query<AnswerRow>(sql, params)).rows[0];
    } catch (error) {
      // The CHECK behind the pool (a reservation that raced past the row lock's check).
      if (
        sqlState(error) === '23514' &&
        violatedConstraint(error) === 'customers_credits_non_negative'
      ) {
        throw ledgerErrors.noCredits();
      }
      throw error;
    }
    if (!answer) throw new Error('a ledger function answered no row');
    if (answer.error !== null) throw refusal(answer.error, answer.detail, customerId);
    return answer as Answer;
  }
}

/** What ledger_create_movement and ledger_resolve_movement answer (type ledger_answer). */
type AnswerRow = {
  error: string | null;
  detail: string | null;
  replayed: boolean | null;
  customer_credits: number | string | null;
} & { [column in keyof MovementRow]: MovementRow[column] | null };

type Answer = MovementRow & {
  error: null;
  replayed: boolean;
  customer_credits: number | string;
};

/** The LedgerError of a refusal a ledger function answered (an unknown one is a bug: a 500). */
function refusal(code: string, detail: string | null, customerId: string): Error {
  switch (code) {
    case 'InvalidApiKey':
      return ledgerErrors.invalidApiKey();
    case 'CustomerNotFound':
      return ledgerErrors.customerNotFound(customerId);
    case 'NoCredits':
      return ledgerErrors.noCredits();
    case 'AmountBelowOneCredit':
      return ledgerErrors.amountBelowOneCredit();
    case 'CardAccountExceeded':
      return ledgerErrors.cardAccountExceeded();
    case 'CardRecordMismatch':
      return ledgerErrors.cardRecordMismatch();
    case 'MovementIdConflict':
      return ledgerErrors.movementIdConflict();
    case 'MovementNotFound':
      return ledgerErrors.movementNotFound();
    case 'MovementAlreadyVoided':
      return ledgerErrors.movementAlreadyVoided();
    case 'MovementAlreadyPosted':
      return ledgerErrors.movementAlreadyPosted();
    case 'InvalidMovement':
      return ledgerErrors.invalidMovement(detail ?? '');
    case 'CardMovementPending':
      return ledgerErrors.cardMovementPending(detail ?? '');
    case 'MovementOfAnotherTill':
      return ledgerErrors.movementOfAnotherTill(detail ?? '');
    case 'InvalidCompensation':
      return ledgerErrors.invalidCompensation(detail ?? '');
    case 'MovementCompensated':
      return ledgerErrors.movementCompensated(detail ?? '');
    case 'CardStateMovedOn':
      return ledgerErrors.cardStateMovedOn(detail ?? '');
    case 'FloatReportPending':
      return ledgerErrors.floatReportPending(detail ?? '');
    default:
      return (
        contractRefusal(code, detail) ??
        new Error(`a ledger function answered an unknown refusal ${code}`)
      );
  }
}
