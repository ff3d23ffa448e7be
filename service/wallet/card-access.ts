import type { CardSession } from '../card/card-session.ts';

/** What the money use cases do with the card on the reader (a CardSession, or a simulated card). */
export type WalletCard = Pick<
  CardSession,
  'cardId' | 'readWallet' | 'readSlots' | 'writeSlot' | 'checkUid'
>;

/** How use cases reach the card: one operation at a time on the card on the reader. */
export interface CardAccess {
  withCard<T>(operation: (card: WalletCard) => Promise<T>): Promise<T>;
}
