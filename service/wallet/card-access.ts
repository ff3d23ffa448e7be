import type { CardSession } from '../card/card-session.ts';

/** How use cases reach the card: one operation at a time on the card on the reader. */
export interface CardAccess {
  withCard<T>(operation: (session: CardSession) => Promise<T>): Promise<T>;
}
