import type { CardAccess, CardOnReader } from './card-access.ts';
import { clearBlockedCard } from './block-clear.ts';
import type { CardBlocks } from './card-blocks.ts';
import type { Idempotency } from './journal-entries.ts';
import type { MovementEngine } from './movement-engine.ts';

export interface CardRequestInput {
  keyFingerprint: string;
  idempotency?: Idempotency;
  /** The shop's blocked cards: a blocked card is emptied and refused (CardBlocked). */
  blocks?: CardBlocks;
}

/**
 * What every request that writes the card on the reader does before its own movement
 * (/writecard, /dischargecard, /cards/undo), in this order: one request per Idempotency-Key at
 * a time; the card's earlier undecided writes settled by what it holds; a key already answered
 * for this card answered again from the journal; a blocked card emptied and refused
 * (CardBlocked). Then `write` runs, with the card and the key.
 */
export function onCardRequest<T>(
  cards: CardAccess,
  movements: MovementEngine,
  input: CardRequestInput,
  write: (card: CardOnReader, idempotency: Idempotency | undefined) => Promise<T>,
): Promise<T> {
  return movements.idempotent(input.idempotency, (idempotency) =>
    cards.withCard(async (card) => {
      await movements.settle(card);
      const earlier = await movements.replay<T>(idempotency, card.cardId);
      if (earlier) return earlier;
      const { blocks, keyFingerprint } = input;
      await clearBlockedCard(card, movements, { blocks, keyFingerprint });
      return write(card, idempotency);
    }),
  );
}
