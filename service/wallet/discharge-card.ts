import { cardAccountRefusal, otherTillRefusal } from '../cloud/ledger-refusals.ts';
import { AppError, errors } from '../errors.ts';
import type { CardAccess, CardOnReader } from './card-access.ts';
import { onCardRequest } from './card-request.ts';
import { isChangeWaiting, withCardChanges, type CardChanges } from './card-changes.ts';
import { clearBlockedCard } from './block-clear.ts';
import { blockedRefusal, type CardBlocks } from './card-blocks.ts';
import type { DischargeAnswer, MovementEngine } from './movement-engine.ts';
import type { Idempotency } from './journal-entries.ts';
import { floatReportRefusal } from './till-floats.ts';

/** Why an offline payout is refused (docs/integrators.md, "When the internet drops"). */
const OFFLINE =
  'the ledger cannot be reached: a payout needs it (it checks what the shop put on the card); the card is untouched, pay it out once the ledger answers';

export interface DischargeInput {
  keyFingerprint: string;
  /** The POS's reference of the sale, kept with the movement. */
  reference?: string;
  idempotency?: Idempotency;
  /**
   * The ledger refused to pay the card out (CardAccountExceeded: it holds more than the shop
   * put on it; CardRecordMismatch: its movement records do not explain it) and flagged it
   * suspect: the host shows it to the operator, with the refusal's code.
   */
  onFlagged?: (cardId: string, credits: number, reason: string) => void;
  /** The shop's blocked cards: refused before anything is recorded (CardBlocked). */
  blocks?: CardBlocks;
  /** The changes waiting for cards: applied before the payout. */
  changes?: CardChanges;
}

/**
 * POST /dischargecard: pays the card out. The ledger records the movement before the card is
 * cleared (if it cannot, the card is untouched: ErrorTrackingDischargeMovement) and after (the
 * post, which returns the credits to the shop's pool). A card at 0 is answered with zeros and
 * nothing is written or recorded.
 */
export function dischargeCard(
  cards: CardAccess,
  movements: MovementEngine,
  input: DischargeInput,
): Promise<DischargeAnswer> {
  return onCardRequest(cards, movements, input, (card, idempotency) => {
    // A replacement or correction waiting for the card is applied first.
    const changes = { changes: input.changes, keyFingerprint: input.keyFingerprint };
    return withCardChanges(card, movements, changes, () =>
      dischargeOnCard(card, movements, input, idempotency),
    );
  });
}

/** The payout itself, once the card is known to be neither blocked nor awaited by a change. */
async function dischargeOnCard(
  card: CardOnReader,
  movements: MovementEngine,
  input: DischargeInput,
  idempotency: Idempotency | undefined,
): Promise<DischargeAnswer> {
  const { blocks, keyFingerprint } = input;
  const wallet = await movements.readWallet(card);
  if (wallet.balance === 0) {
    // Nothing moves, and the receipt says so.
    return {
      cardId: card.cardId,
      dischargedCredits: 0,
      dischargedAmount: 0,
      movementId: null,
      occurredAt: null,
      reference: input.reference ?? null,
    };
  }
  if (wallet.balance < 0) throw errors.negativeCredits();
  const floats = movements.floats;
  if (floats) {
    await floats.noteEvidence(wallet);
    // A payout needs the ledger: it checks the card's account (docs/integrators.md).
    if (!floats.keeper.online) throw errors.errorTrackingDischargeMovement(undefined, OFFLINE);
    await floats.reportBeforeLedger().catch((error: unknown) => {
      throw errors.errorTrackingDischargeMovement(error, (error as AppError).detail);
    });
  }

  // This till's own recharge of the card whose post is still on its way (answered just
  // before): posted first, or the ledger's check of the card's account would not count
  // it, refuse the payout and flag the card. Unposted, the ledger decides as before.
  await movements.postCard(card.cardId);

  const reservation = await movements
    .reserve(card, {
      kind: 'discharge',
      keyFingerprint: input.keyFingerprint,
      idempotency,
      wallet,
      request: {
        credits: wallet.balance,
        ...(input.reference === undefined ? {} : { reference: input.reference }),
      },
      balanceAfter: () => 0,
    })
    .catch(async (error: unknown) => {
      // The ledger refused to pay out more than the shop put on this card (it flagged the
      // card), or another till's movement of the card is open; otherwise, spec: the
      // "before" record failed. Either way the card is untouched.
      const refusal = cardAccountRefusal(error);
      if (refusal) input.onFlagged?.(card.cardId, wallet.balance, refusal.code);
      // Blocked since the till's list was fetched: emptied now, as the list would have.
      const blocked = blockedRefusal(error, card.cardId, blocks);
      if (blocked) await clearBlockedCard(card, movements, { blocks, keyFingerprint });
      // A change the till's list did not know waits for the card: applied, then tried again.
      if (isChangeWaiting(error)) throw error;
      throw (
        refusal ??
        blocked ??
        otherTillRefusal(error) ??
        floatReportRefusal(error) ??
        (error instanceof AppError && error.status < 500
          ? error
          : errors.errorTrackingDischargeMovement(error))
      );
    });
  return movements.commit<DischargeAnswer>(reservation, card);
}
