import type { LedgerClient, LedgerMovement } from '../cloud/ledger-client.ts';
import type { CardAccess } from './card-access.ts';
import { applyCardChanges, type AppliedChange, type CardChangesInput } from './card-changes.ts';
import { awaitsCard } from './card-settlement.ts';
import type { MovementEngine } from './movement-engine.ts';
import { writeShownBy } from './write-evidence.ts';

/** A pending movement of the card on the reader, as POST /cards/settle reports it. */
export interface SettledMovement {
  id: string;
  /** The till that made it (null: a worker that named none). */
  tillId: string | null;
  kind: LedgerMovement['kind'];
  credits: number;
}

/** The answer of POST /cards/settle. */
export interface SettleAnswer {
  cardId: string;
  /**
   * Movements the card decided now, and how: other tills' pending ones, and any an operator
   * posted or voided without the card (their state stays the operator's; `compensatedBy`
   * names the compensating movement made when the card disagrees).
   */
  settled: (SettledMovement & { state: 'posted' | 'voided'; compensatedBy?: string })[];
  /** Pending movements of the card that the card cannot decide here, and why. */
  undecided: (SettledMovement & { reason: string })[];
  /**
   * Replacements and corrections that waited for the card, applied on it now (each its own
   * movement); absent when none waited.
   */
  cardChanges?: AppliedChange[];
}

/**
 * POST /cards/settle, an operator's action: the card on the reader decides the shop's pending
 * movements of it that other tills made (a till gone for good, or far away), from the card
 * state each movement carries to the ledger (`cardBefore`). Each is posted or voided with the
 * evidence (this till, the card, what it showed), which the ledger keeps. A movement an
 * operator decided without the card (`awaitsCard`, any till's) is confirmed from the card or
 * compensated. This till's own are settled first, as before any movement. Then the changes
 * waiting for the card (a replacement, a correction) are applied on it, each with its own
 * movement; nothing else is written to the card.
 */
export function settleCard(
  cards: CardAccess,
  movements: MovementEngine,
  ledger: Pick<LedgerClient, 'getCardAccount'>,
  apiKey: string,
  changes?: CardChangesInput,
): Promise<SettleAnswer> {
  return cards.withCard(async (card) => {
    await movements.settle(card);
    const account = await ledger.getCardAccount(apiKey, card.cardId);
    const answer: SettleAnswer = { cardId: card.cardId, settled: [], undecided: [] };
    for (const movement of account.movements) {
      const held = awaitsCard(movement);
      if (!held && (movement.state !== 'pending' || movement.tillId === movements.tillId)) {
        continue;
      }
      const about: SettledMovement = {
        id: movement.id,
        tillId: movement.tillId,
        kind: movement.kind,
        credits: movement.credits,
      };
      if (movement.compensates !== null) {
        // Another till's compensation, created but never posted (that till crashed, perhaps
        // lost for good): it records what a card already showed, so its truth needs no card.
        // Posting it is what its till would do; one compensation per movement, so never twice.
        await movements.resolveOnEvidence(
          apiKey,
          movement.id,
          'post',
          `compensation of ${movement.compensates} made by till ${movement.tillId ?? '(none)'}, left pending; posted at till ${movements.tillId}, as that till would have`,
        );
        answer.settled.push({ ...about, state: 'posted' });
        continue;
      }
      if (held) {
        const { compensation } = await movements.decideHeld(
          card,
          apiKey,
          movement,
          account.movements,
        );
        const state = movement.state === 'posted' ? 'posted' : 'voided';
        answer.settled.push({
          ...about,
          state,
          ...(compensation ? { compensatedBy: compensation.id } : {}),
        });
        continue;
      }
      const shown = await writeShownBy(card, movement, movements.tillId, account.movements);
      if (!shown) {
        answer.undecided.push({
          ...about,
          reason: 'the movement carries no card state to decide it by',
        });
        continue;
      }
      if (shown.outcome === 'unknown') {
        answer.undecided.push({
          ...about,
          reason: 'the card shows neither the balance before nor after it',
        });
        continue;
      }
      const landed = shown.outcome === 'committed';
      const resolved = await movements.resolveOnEvidence(
        apiKey,
        movement.id,
        landed ? 'post' : 'void',
        shown.evidence,
      );
      answer.settled.push({ ...about, state: resolved.state === 'posted' ? 'posted' : 'voided' });
    }
    const applied = changes ? await applyCardChanges(card, movements, changes) : [];
    if (applied.length > 0) answer.cardChanges = applied;
    return answer;
  });
}
