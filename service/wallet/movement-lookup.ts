import {
  isRechargeOrPayout,
  type Movement as LedgerMovement,
} from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { errors } from '../errors.ts';
import { occurredAtOf, type Movement } from './journal-entries.ts';
import type { MovementEngine } from './movement-engine.ts';

/** A movement as `GET /movements` answers it: a receipt the POS can look up again. */
export interface MovementRecord {
  movementId: string;
  kind: 'recharge' | 'discharge';
  cardId: string;
  credits: number;
  /** Euros. */
  amount: number;
  reference: string | null;
  tillId: string | null;
  /** The ledger's state, or, until the ledger has it, the journal's. */
  state: 'pending' | 'posted' | 'voided';
  /** When its card write was proven, by its till's clock; null while it has not been. */
  occurredAt: string | null;
  /** The movement that set right its disagreement with its card, if any. */
  compensatedBy: string | null;
  /** Whether the ledger has it: false until it is reported (or if it never got there), null when the ledger could not be asked. */
  atLedger: boolean | null;
}

/** What the lookups need of the ledger client (the caller's key). */
export interface LookupLedger {
  getMovement(apiKey: string, id: string): Promise<LedgerMovement>;
  listMovementsByReference(apiKey: string, reference: string): Promise<LedgerMovement[]>;
  getCardAccount(apiKey: string, cardId: string): Promise<{ movements: LedgerMovement[] }>;
}

interface Caller {
  apiKey: string;
  keyFingerprint: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `GET /movements/{id}`: the ledger's record of a movement of the caller's shop, or, until the
 * ledger has it (a movement not reported yet, a ledger out of reach), this till's journal's
 * (only of movements made with the caller's key).
 */
export async function movementById(
  movements: MovementEngine,
  ledger: LookupLedger,
  caller: Caller,
  id: string,
): Promise<MovementRecord> {
  if (!UUID.test(id)) throw errors.movementNotFound(`${id}: not a movement id (a UUID)`);
  const journaled = ownJournaled(caller, movements.journaled(id));
  let atLedger: LedgerMovement;
  try {
    atLedger = await ledger.getMovement(caller.apiKey, id);
  } catch (error) {
    const absent = error instanceof LedgerRefusal && error.code === 'MovementNotFound';
    if (journaled) return fromJournal(movements, journaled, absent ? false : null);
    if (absent) throw errors.movementNotFound(`no movement ${id} at this till or the ledger`);
    throw error;
  }
  if (!isTillMovement(atLedger)) {
    // A refund, correction, replacement or block-clear of the card's own rules: not one of the
    // recharges and payouts this API shows.
    throw errors.movementNotFound(
      `${id}: a ${atLedger.kind} at the ledger, not a recharge or payout`,
    );
  }
  return fromLedger(movements, ledger, caller, atLedger, journaled);
}

type TillMovement = LedgerMovement & { kind: 'recharge' | 'discharge' };

function isTillMovement(movement: LedgerMovement): movement is TillMovement {
  return isRechargeOrPayout(movement.kind);
}

/**
 * `GET /movements?reference=`: every movement of the caller's shop with the POS's reference,
 * newest first: the ledger's, and this till's that the ledger does not have yet.
 */
export async function movementsByReference(
  movements: MovementEngine,
  ledger: LookupLedger,
  caller: Caller,
  reference: string,
): Promise<MovementRecord[]> {
  const journaled = [...movements.journal]
    .filter((movement) => movement.reference === reference)
    .map((movement) => ownJournaled(caller, movement))
    .filter((movement) => movement !== undefined);
  let atLedger: LedgerMovement[] | undefined;
  try {
    atLedger = await ledger.listMovementsByReference(caller.apiKey, reference);
  } catch (error) {
    if (journaled.length === 0) throw error;
  }
  const known = new Set(atLedger?.map((movement) => movement.id.toLowerCase()));
  const records = await Promise.all([
    ...(atLedger ?? [])
      .filter(isTillMovement)
      .map((movement) =>
        fromLedger(movements, ledger, caller, movement, movements.journaled(movement.id)),
      ),
    ...journaled
      .filter((movement) => !known.has(movement.id))
      .map((movement) => fromJournal(movements, movement, atLedger ? false : null)),
  ]);
  const started = new Map(journaled.map((movement) => [movement.id, movement.startedAt]));
  const createdAt = new Map(atLedger?.map((movement) => [movement.id, movement.createdAt]));
  const when = (record: MovementRecord) =>
    Date.parse(createdAt.get(record.movementId) ?? started.get(record.movementId) ?? '');
  return records.sort((a, b) => when(b) - when(a));
}

type TillJournaled = Movement & { kind: 'recharge' | 'discharge' };

/**
 * A journaled movement the caller may see: made with its key (never another shop's), and a
 * recharge or payout (a block-clear, pickup or undo is not one of this API's receipts).
 */
function ownJournaled(caller: Caller, movement: Movement | undefined): TillJournaled | undefined {
  return movement?.keyFingerprint === caller.keyFingerprint && isRechargeOrPayout(movement.kind)
    ? (movement as TillJournaled)
    : undefined;
}

function fromJournal(
  movements: MovementEngine,
  movement: TillJournaled,
  atLedger: boolean | null,
): MovementRecord {
  const { resolved } = movement;
  return {
    movementId: movement.id,
    kind: movement.kind,
    cardId: movement.cardId,
    credits: movement.reserved?.credits ?? movement.credits ?? 0,
    amount: Number(movement.reserved?.amount ?? 0),
    reference: movement.reference ?? null,
    tillId: movements.tillId,
    state: resolved === 'posted' ? 'posted' : resolved === undefined ? 'pending' : 'voided',
    occurredAt: movement.card === 'committed' ? occurredAtOf(movement) : null,
    compensatedBy: movements.compensationOf(movement.id)?.id ?? null,
    atLedger,
  };
}

async function fromLedger(
  movements: MovementEngine,
  ledger: LookupLedger,
  caller: Caller,
  movement: TillMovement,
  journaled: Movement | undefined,
): Promise<MovementRecord> {
  let compensatedBy = movements.compensationOf(movement.id)?.id ?? null;
  if (compensatedBy === null && movement.state !== 'pending' && movement.compensates === null) {
    // Another till (or the provider's) may have set it right: the card's movements say.
    const account = await ledger
      .getCardAccount(caller.apiKey, movement.cardId)
      .catch(() => undefined);
    compensatedBy =
      account?.movements.find((other) => other.compensates?.toLowerCase() === movement.id)?.id ??
      null;
  }
  const proven = journaled?.card === 'committed' ? occurredAtOf(journaled) : null;
  return {
    movementId: movement.id,
    kind: movement.kind,
    cardId: movement.cardId,
    credits: movement.credits,
    amount: Number(movement.amount),
    reference: movement.reference ?? journaled?.reference ?? null,
    tillId: movement.tillId,
    state: movement.state,
    occurredAt: movement.occurredAt ?? proven,
    compensatedBy,
    atLedger: true,
  };
}
