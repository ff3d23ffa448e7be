import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { errors, type AppError } from '../errors.ts';
import { LedgerRefusal } from './ledger-client.ts';

/**
 * What the worker answers when the ledger refuses a movement because the card holds more than
 * the shop put on it (forged, restored, or loaded at another shop): a discharge for more than
 * the card's account, or a recharge asked to refuse such a card (refuseAboveAccount), is
 * `500 CardAccountExceeded`; a discharge of a card its newest movement record does not explain
 * (docs/cloud-api.md, "Card records") is `500 CardRecordMismatch`. The ledger stored nothing and
 * flagged the card; the card must not be written. Anything else is undefined, for the caller's
 * own mapping.
 */
export function cardAccountRefusal(error: unknown): AppError | undefined {
  if (!(error instanceof LedgerRefusal)) return undefined;
  if (error.code === ledgerErrorCodes.cardAccountExceeded.code) return errors.cardAccountExceeded();
  if (error.code === ledgerErrorCodes.cardRecordMismatch.code) return errors.cardRecordMismatch();
  return undefined;
}

/**
 * A movement refused because the card has another till's movement pending at the shop
 * (docs/cloud-api.md, "Tills"): that movement's card write may still have to be decided from the
 * card, so no other till writes it. 500 `MovementPendingAtOtherTill`, saying which.
 */
export function otherTillRefusal(error: unknown): AppError | undefined {
  if (error instanceof LedgerRefusal && error.code === ledgerErrorCodes.cardMovementPending.code) {
    return errors.movementPendingAtOtherTill(
      error.detail &&
        `${error.detail}; present the card at that till, or settle it here (POST /cards/settle)`,
    );
  }
  return undefined;
}
