import { cardAccountRefusal, otherTillRefusal } from '../cloud/ledger-refusals.ts';
import { AppError, errors } from '../errors.ts';
import type { CardAccess } from './card-access.ts';
import type { DischargeAnswer, MovementEngine } from './movement-engine.ts';
import type { Idempotency } from './journal-entries.ts';

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
  return movements.idempotent(input.idempotency, (idempotency) =>
    cards.withCard(async (card) => {
      await movements.settle(card);
      const earlier = await movements.replay<DischargeAnswer>(idempotency, card.cardId);
      if (earlier) return earlier;

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
        .catch((error: unknown) => {
          // The ledger refused to pay out more than the shop put on this card (it flagged the
          // card), or another till's movement of the card is open; otherwise, spec: the
          // "before" record failed. Either way the card is untouched.
          const refusal = cardAccountRefusal(error);
          if (refusal) input.onFlagged?.(card.cardId, wallet.balance, refusal.code);
          throw (
            refusal ??
            otherTillRefusal(error) ??
            (error instanceof AppError && error.status < 500
              ? error
              : errors.errorTrackingDischargeMovement(error))
          );
        });
      return movements.commit<DischargeAnswer>(reservation, card);
    }),
  );
}
