import type { ReaderCard } from '../card/reader-manager.ts';

export type { WalletCard } from '../card/card-face.ts';

/**
 * What the use cases do with the card on the reader: the card face (any card type), and what
 * personalizing it takes: for MIFARE Classic (writing a card's own keys) the rest of a
 * CardSession, for DESFire its session's personalize; the simulation's cards leave them out.
 */
export type CardOnReader = ReaderCard;

/** How use cases reach the card: one operation at a time on the card on the reader. */
export interface CardAccess {
  withCard<T>(operation: (card: CardOnReader) => Promise<T>): Promise<T>;
}
