import type { CardSession } from '../card/card-session.ts';
import type { WalletCard } from '../card/wallet-card.ts';

export type { WalletCard } from '../card/wallet-card.ts';

/**
 * What the use cases do with the card on the reader: the card face (any card type), and for
 * MIFARE Classic personalization (writing a card's own keys) the rest of a CardSession, which
 * the simulation's cards leave out.
 */
export type CardOnReader = WalletCard &
  Partial<Pick<CardSession, 'openWallet' | 'readSlots' | 'writeSlotBlock' | 'writeTrailer'>>;

/** How use cases reach the card: one operation at a time on the card on the reader. */
export interface CardAccess {
  withCard<T>(operation: (card: CardOnReader) => Promise<T>): Promise<T>;
}
