import { hashApiKey } from './api-keys.ts';
import { appendAudit, type AuditActor } from './audit/audit-log.ts';
import type { Database, Queryable } from './db/database.ts';
import { sqlState, violatedConstraint } from './db/database.ts';
import { parseDecimal } from '../common/decimal.ts';
import type { MovementRequest, ResolveRequest } from '../common/ledger-contract.ts';
import { LedgerError, contractRefusal, ledgerErrors } from './errors.ts';
import { readCardAccount, type CardAccount } from './card-accounts.ts';
import type { TillHeartbeat, TillState } from '../common/ledger-contract.ts';
import { dayReport, type DayReport } from './reports/day-report.ts';
import { readShop, shopToday } from './shops/shops.ts';
import { recordHeartbeat } from './tills/tills.ts';
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
    if (CARD_RULE_KINDS.has(request.kind) && request.compensates !== undefined) {
      return this.compensateCardMovement(customerId, request, keyHash);
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

  /**
   * A compensation of a refund, correction, replacement or block-clear: a movement of its kind
   * that sets right, as its card shows, the ledger's final word on it; the ledger takes its
   * credits from that movement (`ledger_compensate_card_movement`).
   */
  private async compensateCardMovement(
    customerId: string,
    request: MovementRequest,
    keyHash: string | undefined,
  ): Promise<CreatedMovement> {
    const answer = await this.call(
      'SELECT * FROM ledger_compensate_card_movement($1, $2, $3, $4, $5, $6, $7, $8)',
      [
        customerId,
        request.id.toLowerCase(),
        request.kind,
        request.cardId,
        request.credits ?? null,
        request.tillId?.toLowerCase() ?? null,
        request.compensates?.toLowerCase() ?? null,
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
    decidedBy?: AuditActor,
  ): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'posted', by, keyHash, decidedBy);
  }

  /** Cancels a pending movement; a recharge releases its reservation to the pool. */
  voidMovement(
    customerId: string,
    id: string,
    by: ResolveRequest = {},
    keyHash?: string,
    decidedBy?: AuditActor,
  ): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'voided', by, keyHash, decidedBy);
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

  /**
   * A till's heartbeat (docs/cloud-api.md, "Till heartbeats"): what it says of itself is kept
   * on its row of the shop's tills, and the answer is that row (its name, for the tray). With
   * `keyHash`, the key's validity is checked in the same statement.
   */
  async recordHeartbeat(
    customerId: string,
    tillId: string,
    heartbeat: TillHeartbeat,
    keyHash?: string,
  ): Promise<TillState> {
    const till = await recordHeartbeat(this.db, customerId, tillId, heartbeat, keyHash ?? null);
    if (!till) throw ledgerErrors.invalidApiKey();
    return till;
  }

  /** The shop's day report for its local `date` (default: today there). */
  async dayReport(customerId: string, date?: string): Promise<DayReport> {
    const shop = await readShop(this.db, customerId);
    return dayReport(this.db, shop, date ?? (await shopToday(this.db, shop)));
  }

  /** Resolves when the database answers. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /**
   * A post or void. One that names no till but gives evidence is an operator's word without
   * the card (`decidedBy` says whose: the key that sent it): it is decided together with its
   * audit log row, in one transaction; a till's own decision stays one statement.
   */
  private resolveMovement(
    customerId: string,
    id: string,
    target: 'posted' | 'voided',
    by: ResolveRequest,
    keyHash: string | undefined,
    decidedBy: AuditActor | undefined,
  ): Promise<Movement> {
    if (decidedBy && by.evidence !== undefined && by.tillId === undefined) {
      return decideWithoutTill(this.db, customerId, id, target, by.evidence, decidedBy, keyHash);
    }
    return resolveMovementIn(this.db, customerId, id, target, by, keyHash);
  }

  private call(sql: string, params: unknown[], customerId: string): Promise<Answer> {
    return callLedgerFunction(this.db, sql, params, customerId);
  }
}

/**
 * A post or void (ledger_resolve_movement), on the database or inside the caller's transaction
 * (an operator's decision and its audit row commit together).
 */
export async function resolveMovementIn(
  q: Queryable,
  customerId: string,
  id: string,
  target: 'posted' | 'voided',
  by: ResolveRequest,
  keyHash?: string,
): Promise<Movement> {
  const answer = await callLedgerFunction(
    q,
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
 * An operator's post or void without a till (the console, the admin CLI, or a key holder's
 * call with evidence), with its audit log row, in one transaction. A replay (the movement was
 * decided so already) is no new action and writes no row. A refusal commits what the contract
 * function wrote with it (a void's tombstone) and is thrown once the transaction is over.
 */
export async function decideWithoutTill(
  db: Database,
  customerId: string,
  id: string,
  target: 'posted' | 'voided',
  evidence: string,
  actor: AuditActor,
  keyHash?: string,
): Promise<Movement> {
  const outcome = await db.transaction(async (tx) => {
    const before = await tx.query<{ state: MovementState }>(
      'SELECT state FROM movements WHERE customer_id = $1 AND id = $2 FOR NO KEY UPDATE',
      [customerId, id.toLowerCase()],
    );
    let movement: Movement;
    try {
      movement = await resolveMovementIn(tx, customerId, id, target, { evidence }, keyHash);
    } catch (error) {
      if (error instanceof LedgerError) return { refused: error };
      throw error;
    }
    if (before.rows[0]?.state === 'pending') {
      await appendAudit(tx, {
        actor,
        customerId,
        action: target === 'posted' ? 'movement.post' : 'movement.void',
        subject: movement.id,
        reason: evidence,
        detail: { kind: movement.kind, cardId: movement.cardId, credits: movement.credits },
      });
    }
    return { movement };
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome.movement;
}

/**
 * One contract call: one statement, its own transaction (a function of cloud/db/routines/). Its
 * refusals come back as answers, so that a flag written for a refused movement is committed.
 */
async function callLedgerFunction(
  q: Queryable,
  sql: string,
  params: unknown[],
  customerId: string,
): Promise<Answer> {
  let answer: AnswerRow | undefined;
  try {
    answer = (await q.query<AnswerRow>(sql, params)).rows[0];
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
