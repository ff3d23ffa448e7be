import type { CardAccess } from './card-access.ts';
import { refuseBlockedCard, type CardBlocks } from './card-blocks.ts';
import type { MovementEngine } from './movement-engine.ts';

/** The card as the spec's card endpoints return it. */
export interface CardView {
  cardId: string;
  credits: number;
  rechargeAmount: null;
}

/**
 * GET /readcard: what is on the card on the reader. The card is only read: with per-card keys,
 * with its own key, or with the transport key while it is not personalized yet. A card the shop
 * blocked is `500 CardBlocked` (read, never written: a GET changes nothing; the next POST with
 * it empties it).
 */
export async function readCard(
  cards: CardAccess,
  movements: MovementEngine,
  blocks?: CardBlocks,
): Promise<CardView> {
  const wallet = await cards.withCard(async (card) => {
    await card.openWallet?.();
    const read = await movements.readWallet(card);
    // Another till's float recharge on the card, unreported: told to the ledger as found.
    await movements.floats?.noteEvidence(read);
    refuseBlockedCard(blocks, read.cardId);
    return read;
  });
  return { cardId: wallet.cardId, credits: wallet.balance, rechargeAmount: null };
}
