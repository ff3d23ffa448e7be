import type { CardSession } from '../card/card-session.ts';

/**
 * What the money use cases do with the card on the reader (a CardSession, or a simulated card).
 * Personalization (writing a card's own keys) needs the rest of a CardSession; the
 * simulation's cards leave it out.
 */
export type WalletCard = Pick<
  CardSession,
  'cardId' | 'readWallet' | 'readSlots' | 'writeSlot' | 'checkUid'
> &
  Partial<Pick<CardSession, 'openWallet' | 'writeSlotBlock' | 'writeTrailer'>>;

/** How use cases reach the card: one operation at a time on the card on the reader. */
export interface CardAccess {
  withCard<T>(operation: (card: WalletCard) => Promise<T>): Promise<T>;
}
