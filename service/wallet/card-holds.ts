import type { CardList } from '../../common/ledger-contract.ts';
import { errors, type AppError } from '../errors.ts';

/** A movement an operator posted or voided without its card, which the ledger holds it for. */
export type HeldMovement = NonNullable<CardList['held']>[number];

/** What the use cases know of the cards the ledger holds (the till's card list). */
export interface CardHolds {
  /** The card's movements decided without it that wait for a till to read it. */
  heldFor(cardId: string): HeldMovement[];
  /** This till read the card online and the ledger took its word: held no more. */
  learntRead(cardId: string): void;
}

/**
 * `500 CardHeldAtLedger`: a float sale, offline, of a card the ledger holds (docs/integrators.md,
 * "When the internet drops"). Written over, the card could no longer tell whether the decided
 * write landed, and the books could not be set right; read online, the card settles it at once.
 */
export function cardHeldOffline(cardId: string, held: HeldMovement[]): AppError {
  const named = held.map((movement) => `${movement.movementId} (${movement.state})`).join(', ');
  return errors.cardHeldAtLedger(
    `card ${cardId} awaits a till that reads it online: an operator decided ${named} without it, and this till is offline, so its float does not recharge it; nothing moved. Retry once the till is online`,
  );
}
