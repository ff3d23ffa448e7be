import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { otherTillRefusal } from '../cloud/ledger-refusals.ts';
import { AppError, errors } from '../errors.ts';
import type { CardAccess, CardOnReader } from './card-access.ts';
import { onCardRequest } from './card-request.ts';
import { clearBlockedCard } from './block-clear.ts';
import { blockedRefusal, type CardBlocks } from './card-blocks.ts';
import type { MovementEngine, UndoAnswer } from './movement-engine.ts';
import type { Idempotency } from './journal-entries.ts';
import { floatReportRefusal } from './till-floats.ts';

/** Why an undo is refused without the ledger (docs/integrators.md, "Undoing a recharge"). */
const OFFLINE =
  "the ledger cannot be reached: an undo needs it (it checks the recharge and decides what is taken back and refunded); the card is untouched, undo once the ledger answers, within the shop's undo window";

export interface UndoInput {
  /** The recharge to undo: its `movementId`, as `/writecard` answered it. */
  recharge: string;
  keyFingerprint: string;
  idempotency?: Idempotency;
  /** The shop's blocked cards: a blocked card is emptied and refused (CardBlocked). */
  blocks?: CardBlocks;
}

/**
 * POST /cards/undo: a cashier's undo of this till's recharge of the card on the reader
 * (docs/integrators.md, "Undoing a recharge"), online only. The ledger decides it: the recharge
 * must be this till's, posted, still the card's newest write and inside the shop's undo window
 * by this till's clock; it takes back at most what the recharge put on the card and the card
 * still holds, bonus first, and refunds the paid credits at the recharge's price. The worker
 * only writes the card down by the credits the ledger granted. It is a movement of kind
 * `refund` through the same steps as a payout (journaled before the ledger is asked, the card
 * written and read back, then posted), so a crash or a pulled card is decided on the card
 * later, exactly once. Every refusal leaves the card and the ledger as they were.
 */
export function undoRecharge(
  cards: CardAccess,
  movements: MovementEngine,
  input: UndoInput,
): Promise<UndoAnswer> {
  return onCardRequest(cards, movements, input, (card, idempotency) => {
    checkJournaled(card, movements, input.recharge);
    return undoOnCard(card, movements, input, idempotency);
  });
}

/**
 * What this till's journal knows of the recharge refuses an undo before the ledger is asked:
 * another card on the reader, a payout, a recharge whose write did not land. A recharge the
 * journal no longer keeps (or another till's) is the ledger's to judge.
 */
function checkJournaled(card: CardOnReader, movements: MovementEngine, id: string): void {
  const recharge = movements.journaled(id);
  if (!recharge || recharge.compensates !== undefined) return;
  if (recharge.cardId !== card.cardId) {
    throw errors.undoOfAnotherCard(
      `recharge ${recharge.id} was written to card ${recharge.cardId}; card ${card.cardId} is on the reader: nothing moved, present the recharged card`,
    );
  }
  if (recharge.kind !== 'recharge') {
    throw errors.undoRechargeNotFound(`${recharge.id} is a ${recharge.kind}, not a recharge`);
  }
  if (recharge.card === 'not-written' || (recharge.resolved && recharge.resolved !== 'posted')) {
    throw errors.undoRechargeNotFound(
      `recharge ${recharge.id} did not land on the card: there is nothing to undo`,
    );
  }
}

async function undoOnCard(
  card: CardOnReader,
  movements: MovementEngine,
  input: UndoInput,
  idempotency: Idempotency | undefined,
): Promise<UndoAnswer> {
  const { blocks, keyFingerprint } = input;
  const wallet = await movements.readWallet(card);
  if (wallet.balance < 0) throw errors.negativeCredits();
  const floats = movements.floats;
  if (floats) {
    await floats.noteEvidence(wallet);
    // Float recharges not reported yet may be on the card: the ledger counts them first.
    await floats.reportBeforeLedger().catch((error: unknown) => {
      throw errors.ledgerUnavailable(error, `${(error as AppError).detail ?? OFFLINE}`);
    });
  }
  // The recharge's post may still be on its way (it was answered a moment ago): posted first,
  // or the ledger would not know it as a posted recharge.
  await movements.postCard(card.cardId);

  const reservation = await movements
    .reserve(card, {
      kind: 'refund',
      keyFingerprint,
      idempotency,
      wallet,
      request: {
        refunds: input.recharge,
        cardCredits: wallet.balance,
        tillTime: new Date(movements.clock.now()).toISOString(),
      },
      balanceAfter: (credits) => {
        // The ledger takes back at most what the card holds (cardCredits).
        const after = wallet.balance - credits;
        if (after < 0) throw errors.negativeCredits();
        return after;
      },
    })
    .catch(async (error: unknown) => {
      // Blocked since the till's list was fetched: emptied now, as the list would have.
      const blocked = blockedRefusal(error, card.cardId, blocks);
      if (blocked) await clearBlockedCard(card, movements, { blocks, keyFingerprint });
      throw (
        blocked ??
        undoRefusal(error) ??
        otherTillRefusal(error) ??
        floatReportRefusal(error) ??
        (error instanceof LedgerRefusal
          ? errors.undoRefused(`${error.code}${error.detail ? `: ${error.detail}` : ''}`)
          : error instanceof AppError && error.code !== errors.ledgerUnavailable().code
            ? error
            : errors.ledgerUnavailable(error, OFFLINE))
      );
    });
  return movements.commit<UndoAnswer>(reservation, card);
}

/** The ledger's refusals of a refund, each as the worker's own 500 with the ledger's words. */
export function undoRefusal(error: unknown): AppError | undefined {
  if (!(error instanceof LedgerRefusal)) return undefined;
  const { detail } = error;
  switch (error.code) {
    case ledgerErrorCodes.invalidRefund.code:
      return errors.undoRechargeNotFound(detail ?? 'no such recharge of this card at the ledger');
    case ledgerErrorCodes.movementOfAnotherTill.code:
      return errors.undoOfAnotherTill(detail);
    case ledgerErrorCodes.alreadyRefunded.code:
      return errors.alreadyUndone(detail);
    case ledgerErrorCodes.undoNotNewest.code:
      return errors.undoNotNewest(detail);
    case ledgerErrorCodes.undoWindowPassed.code:
      return errors.undoWindowPassed(detail);
    case ledgerErrorCodes.nothingToRefund.code:
      return errors.nothingToUndo(detail);
    case ledgerErrorCodes.cardChangeWaiting.code:
      return errors.undoChangeWaiting(detail);
    default:
      return undefined;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** POST /cards/undo's body: `{ "movementId": the recharge's id }`, nothing else (400 InvalidBody). */
export function parseUndoRequest(body: unknown): { movementId: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidBody(
      'the body must be {"movementId": "<the recharge\'s movementId, as /writecard answered it>"}',
    );
  }
  const { movementId, ...others } = body as Record<string, unknown>;
  const unknown = Object.keys(others);
  if (unknown.length > 0) {
    const named = unknown.map((field) => JSON.stringify(field)).join(', ');
    throw errors.invalidBody(`${named}: not a field here; it takes movementId`);
  }
  if (typeof movementId !== 'string' || !UUID.test(movementId)) {
    throw errors.invalidBody(
      `movementId: required, the recharge's movementId as /writecard answered it (a UUID; got ${movementId === undefined ? 'none' : JSON.stringify(movementId)})`,
    );
  }
  return { movementId: movementId.toLowerCase() };
}
