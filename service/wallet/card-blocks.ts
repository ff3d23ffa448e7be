import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { errors, type AppError } from '../errors.ts';

/** What the use cases know of the shop's blocked cards (the till's card list). */
export interface CardBlocks {
  /** The card's block, when the shop blocked it: since when (null: known from a refusal). */
  blockOf(cardId: string): { since: string | null } | undefined;
  /** The ledger refused a movement of the card as blocked. */
  learntBlocked(cardId: string): void;
}

const KEEP =
  'no till recharges or pays it out; keep it for the shop owner, who can move its account to a new card';

/**
 * `500 CardBlocked` for a card the till's card list says is blocked (docs/integrators.md,
 * "Blocked cards"), before anything is reserved or written.
 */
export function refuseBlockedCard(blocks: CardBlocks | undefined, cardId: string): void {
  const block = blocks?.blockOf(cardId);
  if (!block) return;
  const since = block.since === null ? '' : ` since ${block.since}`;
  throw errors.cardBlocked(`card ${cardId} is blocked by the shop${since}: ${KEEP}`);
}

/**
 * The ledger's 409 CardBlocked on a reservation or payout (the till's list did not know the
 * block yet): `500 CardBlocked` with the ledger's detail, and the block noted for the next
 * request. Nothing was reserved, so the card is not written.
 */
export function blockedRefusal(
  error: unknown,
  cardId: string,
  blocks: CardBlocks | undefined,
): AppError | undefined {
  if (!(error instanceof LedgerRefusal) || error.code !== ledgerErrorCodes.cardBlocked.code) {
    return undefined;
  }
  blocks?.learntBlocked(cardId);
  // The ledger's detail names the card, since when and why.
  return errors.cardBlocked(`${error.detail ?? `card ${cardId} is blocked by the shop`}; ${KEEP}`);
}
