import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../cloud/ledger-client.ts';
import { errors } from '../errors.ts';
import type { CardOnReader } from './card-access.ts';
import { blockedDetail, type CardBlocks } from './card-blocks.ts';
import type { MovementEngine } from './movement-engine.ts';

export interface BlockClearInput {
  blocks: CardBlocks | undefined;
  keyFingerprint: string;
}

/**
 * A card the shop blocked, presented in a POST (/writecard, /dischargecard): emptied in that
 * request, so machines cannot spend it either (docs/card-format.md, "Blocked cards"), and
 * answered `500 CardBlocked` all the same. The emptying is a movement of kind `block-clear`
 * through the same steps as a payout: journaled, created at the ledger with the card's state
 * and what it held (its evidence; it moves no credits: the account stays, for a replacement),
 * the card written to 0 and read back, then posted. A card at 0 is not written. Returns when
 * the card is not blocked; otherwise always throws.
 */
export async function clearBlockedCard(
  card: CardOnReader,
  movements: MovementEngine,
  input: BlockClearInput,
): Promise<void> {
  const block = input.blocks?.blockOf(card.cardId);
  if (!block) return;
  const refused = errors.cardBlocked(blockedDetail(card.cardId, block));
  const wallet = await movements.readWallet(card);
  // Another till's float recharge the card shows is reported before the card loses it.
  await movements.floats?.noteEvidence(wallet);
  if (wallet.balance <= 0) throw refused;
  let reservation;
  try {
    reservation = await movements.reserve(card, {
      kind: 'block-clear',
      keyFingerprint: input.keyFingerprint,
      idempotency: undefined,
      wallet,
      request: { cardCredits: wallet.balance },
      balanceAfter: () => 0,
    });
  } catch (error) {
    if (error instanceof LedgerRefusal && error.code === ledgerErrorCodes.cardNotBlocked.code) {
      // Unblocked meanwhile: the request goes on, and the list is fetched again.
      input.blocks?.learntUnblocked(card.cardId);
      return;
    }
    // Offline, or refused: the card keeps its credits until a till can record the emptying.
    throw errors.cardBlocked(
      `${blockedDetail(card.cardId, block)}; it could not be emptied now (${(error as Error).message})`,
    );
  }
  await movements.commit(reservation, card);
  throw errors.cardBlocked(
    `${blockedDetail(card.cardId, block)}; the ${wallet.balance} credits it held were cleared from it (movement ${reservation.movement.id})`,
  );
}
