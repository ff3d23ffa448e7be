import type { CardAccess } from './card-access.ts';

/** The card as the spec's card endpoints return it. */
export interface CardView {
  cardId: string;
  credits: number;
  rechargeAmount: null;
}

/** GET /readcard: what is on the card on the reader. The card is only read. */
export async function readCard(cards: CardAccess): Promise<CardView> {
  const wallet = await cards.withCard((session) => session.readWallet());
  return { cardId: wallet.cardId, credits: wallet.balance, rechargeAmount: null };
}
