import { hashApiKey } from './api-keys.ts';
import type { Database, Queryable } from './db/database.ts';
import { creditsForAmount, parseDecimal, parseStoredDecimal } from '../common/decimal.ts';
import type { CardFlagKind, MovementRequest, ResolveRequest } from '../common/ledger-contract.ts';
import type { LedgerError} from './errors.ts';
import { ledgerErrors } from './errors.ts';
import {
  changeCardAccount,
  flagCard,
  lockCardAccount,
  pendingCredits,
  readCardAccount,
  type CardAccount,
} from './card-accounts.ts';
import {
  changeBalance,
  findCustomer,
  MOVEMENT_COLUMNS,
  movementColumnsOf,
  readCustomerCredits,
  toCustomer,
  toMovement,
  type Customer,
  type Movement,
  type MovementRow,
  type MovementState,
} from './records.ts';

/** The largest credits of one movement (a PostgreSQL integer). */
export const MAX_MOVEMENT_CREDITS = 2_147_483_647;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** A refusal whose flag is committed with it (no movement is stored). */
type Refused = { refused: LedgerError };

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
  constructor(private readonly db: Database) {}

  /** The customer bound to an API key: 401 when missing, unknown or revoked; 403 unassigned. */
  async authenticate(apiKey: string | undefined): Promise<string> {
    if (!apiKey) throw ledgerErrors.missingApiKey();
    const { rows } = await this.db.query<{ customer_id: string | null; revoked: boolean }>(
      'SELECT customer_id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE key_hash = $1',
      [hashApiKey(apiKey)],
    );
    const key = rows[0];
    if (!key || key.revoked) throw ledgerErrors.invalidApiKey();
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

  async getCustomer(customerId: string): Promise<Customer> {
    const row = await findCustomer(this.db, customerId);
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    return toCustomer(row);
  }

  /**
   * Records a pending movement. A recharge reserves its credits from the pool (under the
   * customer's row lock) or fails with NoCredits, storing nothing. The same id with the same
   * request replays the stored movement; with anything else it is a MovementIdConflict.
   */
  async createMovement(customerId: string, request: MovementRequest): Promise<CreatedMovement> {
    const id = request.id.toLowerCase();
    const tillId = request.tillId?.toLowerCase() ?? null;
    const compensates = request.compensates?.toLowerCase() ?? null;
    const requestedAmount =
      request.amount === undefined ? undefined : parseDecimal(request.amount, { maxDecimals: 2 });
    if (request.amount !== undefined && requestedAmount === undefined) {
      throw ledgerErrors.invalidMovement(
        'amount: must be a decimal string with at most 2 decimals',
      );
    }
    const isReplayOf = (row: MovementRow): boolean =>
      row.customer_id === customerId &&
      row.kind === request.kind &&
      row.card_id === request.cardId &&
      row.till_id === tillId &&
      row.compensates === compensates &&
      (requestedAmount === undefined
        ? row.requested_amount === null && Number(row.credits) === request.credits
        : row.requested_amount !== null &&
          parseStoredDecimal(row.requested_amount) === requestedAmount);

    const outcome = await this.db.transaction(async (tx): Promise<CreatedMovement | Refused> => {
      // The id's lock first (a void of an unknown id takes it too, see resolveMovement): a
      // create and a tombstone of one id never both happen. Then a recharge locks the customer
      // row: the pool check, the reservation and the idempotency check below see no concurrent
      // change of this customer. Then the card's account. Always in this order, so they never
      // deadlock.
      await lockMovementId(tx, id);
      const customer = await findCustomer(tx, customerId, { lock: request.kind === 'recharge' });
      if (!customer) throw ledgerErrors.customerNotFound(customerId);
      const replay = (row: MovementRow): CreatedMovement => {
        if (!isReplayOf(row)) throw ledgerErrors.movementIdConflict();
        return { movement: toMovement(row, customer.credits), replayed: true };
      };

      const existing = await findMovement(tx, id);
      if (existing) return replay(existing);
      const tombstone = await findTombstone(tx, id);
      if (tombstone) {
        // Voided before it arrived: refused, and answered as voided, every time it comes.
        throw tombstone.customer_id === customerId
          ? ledgerErrors.movementAlreadyVoided()
          : ledgerErrors.movementIdConflict();
      }

      const creditCost = parseStoredDecimal(customer.credit_cost);
      const credits =
        requestedAmount === undefined
          ? BigInt(request.credits ?? 0)
          : creditsForAmount(requestedAmount, creditCost);
      if (credits < 1n) throw ledgerErrors.amountBelowOneCredit();
      if (credits > BigInt(MAX_MOVEMENT_CREDITS)) {
        throw ledgerErrors.invalidMovement(
          `amount: worth more than ${MAX_MOVEMENT_CREDITS} credits`,
        );
      }
      if (compensates !== null) await checkCompensated(tx, customerId, request.cardId, compensates);
      // What a refusal that is evidence leaves behind (committed, with no movement stored).
      const refuse = async (
        error: LedgerError,
        kind: CardFlagKind,
        requestedCredits: bigint,
        accountCredits: bigint,
      ): Promise<Refused> => {
        await flagCard(tx, {
          customerId,
          cardId: request.cardId,
          kind: compensates === null ? kind : 'compensation-refused',
          movementId: id,
          requestedCredits,
          accountCredits,
        });
        return { refused: error };
      };
      if (request.kind === 'recharge' && BigInt(customer.credits) < credits) {
        if (compensates === null) throw ledgerErrors.noCredits();
        // A refused compensation is a disagreement the shop must see.
        const account = await lockCardAccount(tx, customerId, request.cardId);
        return refuse(ledgerErrors.noCredits(), 'compensation-refused', credits, account);
      }

      // The card's account is locked before the id is looked up again: a same-id request that
      // changed it meanwhile is then seen, and answered as a replay.
      const checksCard =
        request.kind === 'discharge' ||
        (compensates === null && (tillId !== null || request.cardCredits !== undefined));
      const account = checksCard ? await lockCardAccount(tx, customerId, request.cardId) : 0n;
      if (checksCard) {
        const raced = await findMovement(tx, id);
        if (raced) return replay(raced);
      }
      if (tillId !== null && compensates === null) {
        // Another till's write to this card may still have to be decided on the card: a write
        // from this till now would destroy the evidence (docs/cloud-api.md, "Tills").
        const other = await findPendingOfOtherTill(tx, customerId, request.cardId, tillId);
        if (other) {
          throw ledgerErrors.cardMovementPending(
            `movement ${other.id} of till ${other.till_id ?? '(unnamed)'} is pending on card ${request.cardId}`,
          );
        }
      }
      if (
        request.kind === 'recharge' &&
        request.cardCredits !== undefined &&
        compensates === null
      ) {
        // A card may hold less than its account (spent offline), never more: credits on it that
        // no shop put there were written by someone else. Pending movements count: their
        // credits may be on the card (see pendingCredits).
        const allowed = account + (await pendingCredits(tx, customerId, request.cardId));
        if (BigInt(request.cardCredits) > allowed) {
          const flagged = await refuse(
            ledgerErrors.cardAccountExceeded(),
            'card-above-account',
            BigInt(request.cardCredits),
            allowed,
          );
          if (request.refuseAboveAccount) return flagged;
        }
      }
      if (request.kind === 'discharge' && account < credits) {
        return refuse(
          ledgerErrors.cardAccountExceeded(),
          'discharge-exceeds-account',
          credits,
          account,
        );
      }

      // ON CONFLICT: a concurrent insert of the same id (another customer, or a discharge that
      // takes no row lock) makes this wait for it, then yields no row: answer as a replay.
      const inserted = await tx.query<MovementRow>(
        `INSERT INTO movements (id, customer_id, kind, card_id, credits, credit_cost, requested_amount,
                                till_id, card_before, compensates)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${MOVEMENT_COLUMNS}`,
        [
          id,
          customerId,
          request.kind,
          request.cardId,
          credits.toString(),
          customer.credit_cost,
          requestedAmount === undefined ? null : request.amount,
          tillId,
          request.cardBefore ?? null,
          compensates,
        ],
      );
      const row = inserted.rows[0];
      if (!row) {
        const raced = await findMovement(tx, id);
        if (!raced) throw new Error(`movement ${id} conflicted but is not found`);
        return replay(raced);
      }
      if (request.kind === 'discharge') {
        await changeCardAccount(tx, customerId, request.cardId, -credits);
      }
      const pool =
        request.kind === 'recharge'
          ? await changeBalance(tx, customerId, -credits, 'reserve', id)
          : Number(customer.credits);
      return { movement: toMovement(row, pool), replayed: false };
    });
    if ('refused' in outcome) throw outcome.refused;
    return outcome;
  }

  /** What the customer has put on one card: its account, flags and latest movements. */
  getCardAccount(customerId: string, cardId: string): Promise<CardAccount> {
    return readCardAccount(this.db, customerId, cardId);
  }

  /** Finalises a pending movement; a discharge returns its credits to the pool. */
  postMovement(customerId: string, id: string, by: ResolveRequest = {}): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'posted', by);
  }

  /** Cancels a pending movement; a recharge releases its reservation to the pool. */
  voidMovement(customerId: string, id: string, by: ResolveRequest = {}): Promise<Movement> {
    return this.resolveMovement(customerId, id, 'voided', by);
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

  /** The customer's movements, newest first, optionally in one state and of one till. */
  async listMovements(
    customerId: string,
    {
      state,
      tillId,
      limit = DEFAULT_LIST_LIMIT,
    }: { state?: MovementState; tillId?: string; limit?: number } = {},
  ): Promise<Movement[]> {
    const params: unknown[] = [customerId, Math.min(Math.max(1, limit), MAX_LIST_LIMIT)];
    const conditions = ['m.customer_id = $1'];
    if (state) conditions.push(`m.state = $${params.push(state)}`);
    if (tillId) conditions.push(`m.till_id = $${params.push(tillId.toLowerCase())}`);
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
    rawId: string,
    target: 'posted' | 'voided',
    by: ResolveRequest,
  ): Promise<Movement> {
    const id = rawId.toLowerCase();
    const resolved = await this.db.transaction(async (tx) => {
      let current = await lockMovement(tx, id, customerId);
      if (!current && target === 'voided') {
        // A void of an id the ledger does not hold leaves a tombstone, so a create of that id
        // arriving later (a request that timed out on the worker's side but was still on its
        // way) is refused rather than reserving credits nobody will ever resolve. Under the
        // id's lock, a create of it has either committed (seen now) or waits for this.
        await lockMovementId(tx, id);
        current = await lockMovement(tx, id, customerId);
        if (!current) {
          await tx.query(
            `INSERT INTO void_tombstones (id, customer_id)
             SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM movements WHERE id = $1)
             ON CONFLICT (id) DO NOTHING`,
            [id, customerId],
          );
        }
      }
      // Answered outside the transaction: throwing here would roll the tombstone back.
      if (!current) return undefined;
      if (current.state === target) {
        return toMovement(current, await readCustomerCredits(tx, customerId));
      }
      if (current.state === 'voided') throw ledgerErrors.movementAlreadyVoided();
      if (current.state === 'posted') throw ledgerErrors.movementAlreadyPosted();
      const tillId = by.tillId?.toLowerCase() ?? null;
      if (
        current.till_id !== null &&
        tillId !== null &&
        tillId !== current.till_id &&
        by.evidence === undefined
      ) {
        // Only the till that made a movement knows what its card write did; anyone else needs
        // evidence (docs/cloud-api.md, "Tills").
        throw ledgerErrors.movementOfAnotherTill(
          `movement ${id} was made by till ${current.till_id}`,
        );
      }

      const updated = await tx.query<MovementRow>(
        `UPDATE movements SET state = $2, resolved_at = now(), resolved_by_till = $3, evidence = $4
         WHERE id = $1
         RETURNING ${MOVEMENT_COLUMNS}`,
        [id, target, tillId, by.evidence ?? null],
      );
      const row = updated.rows[0];
      if (!row) throw new Error(`movement ${id} vanished while locked`);
      // The pool changes back only when credits come home: a voided recharge releases its
      // reservation, a posted discharge returns the card's credits.
      const credits = BigInt(current.credits);
      let pool: number;
      if (current.kind === 'recharge' && target === 'voided') {
        pool = await changeBalance(tx, customerId, credits, 'release', id);
      } else if (current.kind === 'discharge' && target === 'posted') {
        pool = await changeBalance(tx, customerId, credits, 'return', id);
      } else {
        pool = await readCustomerCredits(tx, customerId);
      }
      // A card's account grows when a recharge is final, and gets back a voided discharge.
      if (
        (current.kind === 'recharge' && target === 'posted') ||
        (current.kind === 'discharge' && target === 'voided')
      ) {
        await changeCardAccount(tx, customerId, current.card_id, credits);
      }
      return toMovement(row, pool);
    });
    if (!resolved) throw ledgerErrors.movementNotFound();
    return resolved;
  }
}

/** The transaction's lock on one movement id (two-key advisory space: never the migrations'). */
async function lockMovementId(tx: Queryable, id: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(2, hashtext($1))', [id]);
}

async function lockMovement(
  tx: Queryable,
  id: string,
  customerId: string,
): Promise<MovementRow | undefined> {
  const { rows } = await tx.query<MovementRow>(
    `SELECT ${MOVEMENT_COLUMNS} FROM movements WHERE id = $1 AND customer_id = $2 FOR UPDATE`,
    [id, customerId],
  );
  return rows[0];
}

async function findTombstone(
  tx: Queryable,
  id: string,
): Promise<{ customer_id: string } | undefined> {
  const { rows } = await tx.query<{ customer_id: string }>(
    'SELECT customer_id FROM void_tombstones WHERE id = $1',
    [id],
  );
  return rows[0];
}

async function findMovement(tx: Queryable, id: string): Promise<MovementRow | undefined> {
  const { rows } = await tx.query<MovementRow>(
    `SELECT ${MOVEMENT_COLUMNS} FROM movements WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** The oldest pending movement of this card at this shop that another till made, if any. */
async function findPendingOfOtherTill(
  tx: Queryable,
  customerId: string,
  cardId: string,
  tillId: string,
): Promise<{ id: string; till_id: string | null } | undefined> {
  const { rows } = await tx.query<{ id: string; till_id: string | null }>(
    `SELECT id, till_id FROM movements
     WHERE customer_id = $1 AND card_id = $2 AND state = 'pending'
       AND till_id IS DISTINCT FROM $3 AND compensates IS NULL
     ORDER BY created_at, id LIMIT 1`,
    [customerId, cardId, tillId],
  );
  return rows[0];
}

/** A compensation names a resolved movement of the same shop and card. */
async function checkCompensated(
  tx: Queryable,
  customerId: string,
  cardId: string,
  compensates: string,
): Promise<void> {
  const original = await findMovement(tx, compensates);
  if (
    !original ||
    original.customer_id !== customerId ||
    original.card_id !== cardId ||
    original.state === 'pending'
  ) {
    throw ledgerErrors.invalidCompensation(
      `compensates: ${compensates} is no resolved movement of this shop and card`,
    );
  }
}
