import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { errors, type AppError } from '../errors.ts';

/** A card's block as this till knows it. */
export interface KnownBlock {
  /** Since when (null: learnt from a refusal, before the card list said so). */
  since: string | null;
  /** The ledger's words for it, when a refusal said them (since when and why). */
  detail?: string;
}

/** What the use cases know of the shop's blocked cards (the till's card list). */
export interface CardBlocks {
  blockOf(cardId: string): KnownBlock | undefined;
  /** The ledger refused a movement of the card as blocked (its detail). */
  learntBlocked(cardId: string, detail?: string): void;
  /** The ledger said the card is not blocked (any more). */
  learntUnblocked(cardId: string): void;
}

const KEEP =
  'no till recharges or pays it out; keep it for the shop owner, who can move its account to a new card';

/** What `CardBlocked` says of a card's block. */
export function blockedDetail(cardId: string, block: KnownBlock): string {
  if (block.detail !== undefined) return `${block.detail}; ${KEEP}`;
  const since = block.since === null ? '' : ` since ${block.since}`;
  return `card ${cardId} is blocked by the shop${since}: ${KEEP}`;
}

/**
 * `500 CardBlocked` for a card the till's card list says is blocked (docs/integrators.md,
 * "Blocked cards"), before anything is reserved or written.
 */
export function refuseBlockedCard(blocks: CardBlocks | undefined, cardId: string): void {
  const block = blocks?.blockOf(cardId);
  if (block) throw errors.cardBlocked(blockedDetail(cardId, block));
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
  blocks?.learntBlocked(cardId, error.detail);
  return errors.cardBlocked(blockedDetail(cardId, { since: null, detail: error.detail }));
}
