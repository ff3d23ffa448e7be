/**
 * What a card and the ledger's list of its movements show of one write: the card read now, and
 * the card states later writes were planned from, which other tills read on it (`cardBefore`).
 */
import { balanceBefore, isKnownBefore, planWrite, stateAfter } from '../card/wallet-card.ts';
import type { WalletCard, WriteDecision } from '../card/card-face.ts';
import type { LedgerMovement } from '../cloud/ledger-client.ts';
import { balanceAfterWrite } from './movement-phases.ts';

/** GET /v1/cards/{id} lists at most this many of a card's movements (docs/cloud-api.md). */
const LISTED_AT_MOST = 100;

/**
 * What `card` shows of a ledger movement's write, planned again from the card state the
 * movement carries (`cardBefore`), with the evidence a till gives the ledger for it; undefined
 * when the movement carries no card state this till reads. A card that moved on shows neither
 * side of the write; then the ledger's list of the card (`listed`) may show it landed
 * (landedPerList).
 */
export async function writeShownBy(
  card: WalletCard,
  movement: LedgerMovement,
  tillId: string,
  listed: readonly LedgerMovement[] = [],
): Promise<{ outcome: WriteDecision['outcome']; evidence: string } | undefined> {
  const planned = plannedWrite(movement);
  if (planned === undefined) return undefined;
  const { before, after, intent } = planned;
  const { outcome } = await card.decide(intent);
  const readAfter = outcome === 'unknown' ? landedPerList(movement.id, listed) : undefined;
  const shows = readAfter
    ? `shows neither the balance before nor after the write, but ${readAfter}`
    : outcome === 'unknown'
      ? 'shows neither the balance before nor after the write'
      : `${outcome === 'committed' ? 'holds' : 'does not hold'} the write from ${before} to ${after} credits`;
  return {
    outcome: readAfter ? 'committed' : outcome,
    evidence: `card ${card.cardId} read at till ${tillId}: it ${shows}`,
  };
}

/**
 * Whether no write but movement `id`'s can leave its card in the state that write leaves: then
 * a card showing that state shows this write landed, whatever was written since. Only a write
 * that leaves the card at 0 (a payout, a block's clearing, a refund of all its credits): the
 * one write a till makes that the ledger may not list yet, a float recharge, leaves at least 1
 * (a till recharges no card below 0, and by 1 credit or more). Every other write is listed
 * (created at the ledger before it goes to the card), so none of them may leave that state:
 * none planned from a state it cannot read, and the list whole (not cut at its last 100).
 */
export function onlyWriteLeaving(id: string, listed: readonly LedgerMovement[]): boolean {
  return soleStateLeftBy(id, listed) !== undefined;
}

/**
 * The ledger's list as the card's word that movement `id`'s write landed, when the card has
 * moved on since: another movement was planned from the very state that write leaves (its till
 * read it on the card), and no other write leaves it (onlyWriteLeaving). Says which, or
 * undefined.
 */
export function landedPerList(id: string, listed: readonly LedgerMovement[]): string | undefined {
  const state = soleStateLeftBy(id, listed);
  const reader =
    state === undefined
      ? undefined
      : listed.find((other) => other.id !== id && other.cardBefore === state);
  return reader
    ? `movement ${reader.id} (till ${reader.tillId ?? '(none)'}) was planned from ${state}, the state only this write leaves`
    : undefined;
}

/** The state movement `id`'s write leaves, when no other write can leave it (onlyWriteLeaving). */
function soleStateLeftBy(id: string, listed: readonly LedgerMovement[]): string | undefined {
  const own = listed.find((movement) => movement.id === id);
  const planned = own && plannedWrite(own);
  const state = planned && stateAfter(planned.intent);
  if (!planned || state === undefined || planned.after !== 0) return undefined;
  if (listed.length >= LISTED_AT_MOST) return undefined;
  const alone = listed.every((other) => {
    if (other.id === id || other.compensates !== null) return true; // a compensation writes no card
    const theirs = plannedWrite(other);
    if (theirs === undefined) return other.kind === 'recharge' || other.kind === 'replacement';
    return stateAfter(theirs.intent) !== state;
  });
  return alone ? state : undefined;
}

/** A listed movement's write planned again from its `cardBefore`; undefined when unreadable. */
function plannedWrite(movement: LedgerMovement) {
  const before = movement.cardBefore;
  if (before === null || !isKnownBefore(before)) return undefined;
  const after = balanceAfterWrite(movement.kind, balanceBefore(before), movement.credits);
  return { before, after, intent: planWrite(before, after, movement.id) };
}
