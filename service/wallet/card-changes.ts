import { ledgerErrorCodes, type CardList } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { otherTillRefusal } from '../cloud/ledger-refusals.ts';
import { errors } from '../errors.ts';
import type { CardOnReader } from './card-access.ts';
import type { MovementEngine } from './movement-engine.ts';
import { floatReportRefusal } from './till-floats.ts';

/** A change waiting for a card (a replacement onto it, a correction of it). */
export type WaitingChange = CardList['waiting'][number];

/** What the use cases know of the changes waiting for cards (the till's card list). */
export interface CardChanges {
  waitingFor(cardId: string): WaitingChange[];
  /** Fetches the card list now (the ledger said something waits, or was taken meanwhile). */
  refresh(): Promise<void>;
  /** This till applied the change: it waits no more (until the list says otherwise). */
  applied(changeId: string): void;
}

export interface CardChangesInput {
  changes: CardChanges | undefined;
  keyFingerprint: string;
}

/** A change the request applied on the card before its own movement. */
export interface AppliedChange {
  /** The movement that applied it. */
  movementId: string;
  kind: WaitingChange['kind'];
  /** The change applied (`applies`). */
  changeId: string;
  /** Credits put on the card (a replacement) or taken off it (a correction). */
  credits: number;
}

const isRefusal = (error: unknown, code: string) =>
  error instanceof LedgerRefusal && error.code === code;

/** The ledger refused a movement because a change waits for its card. */
export function isChangeWaiting(error: unknown): boolean {
  return isRefusal(error, ledgerErrorCodes.cardChangeWaiting.code);
}

/**
 * Applies the changes waiting for the card on the reader (docs/integrators.md, "Replacement
 * cards and corrections"), each with its own movement: a `replacement` puts the lost card's
 * account on it, a `correction` takes back what an operator corrected, as far as the card holds
 * it. Each goes through the engine's steps (journaled, created with `applies`, the card written
 * and read back, posted), so it is applied exactly once, by one till: a change another till
 * took meanwhile (CardChangeTaken), or cancelled, is skipped, and the request reads the card
 * again and goes on.
 */
export async function applyCardChanges(
  card: CardOnReader,
  movements: MovementEngine,
  input: CardChangesInput,
): Promise<AppliedChange[]> {
  const applied: AppliedChange[] = [];
  for (const change of input.changes?.waitingFor(card.cardId) ?? []) {
    const wallet = await movements.readWallet(card);
    if (wallet.balance < 0) throw errors.negativeCredits();
    let reservation;
    try {
      reservation = await movements.reserve(card, {
        kind: change.kind,
        keyFingerprint: input.keyFingerprint,
        idempotency: undefined,
        wallet,
        request: { applies: change.id, cardCredits: wallet.balance },
        balanceAfter: (credits) => {
          const after =
            change.kind === 'replacement' ? wallet.balance + credits : wallet.balance - credits;
          if (after < 0) throw errors.negativeCredits();
          return after;
        },
      });
    } catch (error) {
      const gone =
        isRefusal(error, ledgerErrorCodes.cardChangeTaken.code) ||
        isRefusal(error, ledgerErrorCodes.invalidCardChange.code);
      // Another till's movement of the card is open, or float sales on it are unreported.
      if (!gone) throw otherTillRefusal(error) ?? floatReportRefusal(error) ?? error;
      // Taken by another till, or cancelled: the list is fetched again, the card read again.
      await input.changes?.refresh();
      continue;
    }
    await movements.commit(reservation, card);
    input.changes?.applied(change.id);
    applied.push({
      movementId: reservation.movement.id,
      kind: change.kind,
      changeId: change.id,
      credits: reservation.ledger?.credits ?? 0,
    });
  }
  return applied;
}

/**
 * Runs a request's own movement after the changes waiting for its card. A change the till's
 * list did not know yet (the ledger refused the movement: CardChangeWaiting) is fetched and
 * applied, and the request runs once more, reading the card again. Still refused: `500
 * CardChangeWaiting` (nothing moved).
 */
export async function withCardChanges<T>(
  card: CardOnReader,
  movements: MovementEngine,
  input: CardChangesInput,
  run: () => Promise<T>,
): Promise<T> {
  await applyCardChanges(card, movements, input);
  try {
    return await run();
  } catch (error) {
    if (!isChangeWaiting(error)) throw error;
    if (input.changes) {
      await input.changes.refresh();
      if (input.changes.waitingFor(card.cardId).length > 0) {
        await applyCardChanges(card, movements, input);
        try {
          return await run();
        } catch (again) {
          if (!isChangeWaiting(again)) throw again;
        }
      }
    }
    throw errors.cardChangeWaiting((error as LedgerRefusal).detail);
  }
}
