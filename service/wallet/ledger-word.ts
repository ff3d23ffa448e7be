import { isDesfireIntent } from '../card/card-face.ts';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import type { Compensations } from './compensations.ts';
import type { Movement } from './journal-entries.ts';
import type { MovementBook } from './movement-book.ts';
import { compensationOfWrite, phaseOf } from './movement-phases.ts';
import { onlyWriteLeaving } from './write-evidence.ts';

/** What the ledger's word needs of the resolver: resolving, and saying a movement is resolved. */
export interface Resolving {
  resolve(movement: Movement): Promise<boolean>;
  resolveOnEvidence(
    apiKey: string,
    id: string,
    action: 'post' | 'void',
    evidence: string,
  ): Promise<LedgerMovement>;
  /** A movement is resolved at the ledger: counted, told, its key perhaps free. */
  resolved(id: string): void;
}

/**
 * The ledger's word on this till's movements that their card could not decide, and the card's
 * answer to it: a movement another till or an operator decided on evidence is learnt from the
 * ledger, the card decides it again when it is seen, and where they disagree a compensating
 * movement sets the books right. Also a movement an operator decided without its card, read
 * now at this till (cardDecides).
 */
export class LedgerWord {
  readonly #book: MovementBook;
  readonly #ledger: Pick<LedgerClient, 'getMovement' | 'getCardAccount'>;
  readonly #resolving: Resolving;
  readonly #compensations: Compensations;

  constructor(
    book: MovementBook,
    ledger: Pick<LedgerClient, 'getMovement' | 'getCardAccount'>,
    resolving: Resolving,
    compensations: Compensations,
  ) {
    this.#book = book;
    this.#ledger = ledger;
    this.#resolving = resolving;
    this.#compensations = compensations;
  }

  /**
   * The ledger's word on a movement this till left undecided, asked when its card cannot
   * decide it (or it is no longer pending): one another till or an operator decided with
   * evidence is taken as decided. A compensating movement another till made and posted (it
   * read the card, which disagreed) is part of that word: the write landed when exactly one of
   * the two is posted, and the compensation is journaled as done. Unless its card was seen
   * (`cardSeen`: it cannot decide it), the outcome is journaled as learnt, and the card decides
   * it when seen again (settle()). True when the journal now has it resolved.
   */
  async learn(movement: Movement, { cardSeen }: { cardSeen: boolean }): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined || phaseOf(movement) !== 'uncertain') return false;
    let atLedger: LedgerMovement;
    try {
      atLedger = await this.#ledger.getMovement(apiKey, movement.id);
    } catch {
      return false;
    }
    if (atLedger.state === 'pending' || phaseOf(movement) !== 'uncertain') return false;
    let compensation: LedgerMovement | undefined;
    try {
      const { movements } = await this.#ledger.getCardAccount(apiKey, movement.cardId);
      compensation = movements.find(
        (other) => other.compensates === movement.id && other.state === 'posted',
      );
    } catch {
      return false;
    }
    if (phaseOf(movement) !== 'uncertain') return false;
    const landed = (atLedger.state === 'posted') !== (compensation !== undefined);
    // An operator's word given without the card holds the card until a till reads it: this
    // one did, and the card cannot tell, so the operator's word stands.
    if (
      cardSeen &&
      atLedger.awaitsCard === true &&
      !(await this.#tellCardAgrees(apiKey, movement, atLedger.state, undefined))
    ) {
      return false;
    }
    this.#book.log.warn(
      `movement ${movement.id}: ${atLedger.state} at the ledger by ${atLedger.resolvedByTill ? `till ${atLedger.resolvedByTill}` : 'an operator'} (${atLedger.evidence ?? 'no evidence given'})${compensation ? `, compensated by ${compensation.id}` : ''}; taken as decided`,
    );
    await this.#book.append({
      type: 'card',
      id: movement.id,
      outcome: landed ? 'committed' : 'not-written',
      // Seen, the card cannot tell: an operator's word (not a till's, on evidence) is all there is.
      ...(cardSeen ? (atLedger.resolvedByTill ? {} : { byLedger: true }) : { learnt: true }),
    });
    await this.#book.append({ type: 'resolved', id: movement.id, state: atLedger.state });
    if (compensation && !this.#book.movements.has(compensation.id)) {
      // Another till's: done, so that this till neither compensates again nor resolves it.
      const { id, kind, cardId, credits } = compensation;
      const keyFingerprint = movement.keyFingerprint;
      await this.#book.append({
        type: 'started',
        id,
        kind,
        cardId,
        keyFingerprint,
        credits,
        compensates: movement.id,
      });
      await this.#book.append({ type: 'resolved', id, state: 'posted' });
    }
    this.#resolving.resolved(movement.id);
    return true;
  }

  /**
   * What the card shows of a movement whose outcome was learnt from the ledger: journaled as
   * seen, and where it disagrees with the ledger's word, the compensating movement that sets
   * the books right (outcome undefined: the card cannot tell, the ledger's word stands).
   */
  async seen(movement: Movement, outcome: 'committed' | 'not-written' | undefined): Promise<void> {
    const seen = outcome ?? movement.card;
    const resolved = movement.resolved;
    if (!seen || resolved === undefined) return;
    if (seen !== movement.card) {
      this.#book.log.error(
        `movement ${movement.id}: its card ${seen === 'committed' ? 'holds' : 'does not hold'} it, though the ledger's final word is ${resolved}`,
      );
    } else if (resolved !== 'absent' && !this.#book.compensationOf(movement.id)) {
      // The ledger may hold the card for it (an operator decided without the card): told the
      // card agrees, it frees the card. Until it answers, the card decides it again when seen.
      // (A compensation, another till's, freed it already.)
      const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
      // What the card showed, as evidence: nothing, when it could not tell (the learnt outcome
      // is the ledger's, not the card's).
      if (
        apiKey !== undefined &&
        !(await this.#tellCardAgrees(apiKey, movement, resolved, outcome))
      )
        return;
    }
    // The compensation first: a crash between the two lines then leaves the movement learnt,
    // its card to be seen again, never done without the compensation its card called for.
    await this.#compensations.compensate(movement, resolved, seen);
    await this.#book.append({
      type: 'card',
      id: movement.id,
      outcome: seen,
      ...(outcome === undefined ? { byLedger: true } : {}),
    });
    const compensation = this.#book.compensationOf(movement.id);
    if (compensation) await this.#resolving.resolve(compensation);
  }

  /**
   * Whether the card may still decide a movement whose outcome was learnt from the ledger: not
   * once another write may have reached the card since, by this till or, as the ledger's list
   * of the card's movements shows, by another (one made after this one, not voided). A balance
   * and generation the card shows may then be that write's, equal by chance to this movement's
   * planned one (a recharge of the same credits from the same balance): taking it for this
   * write would compensate a write that never landed. Not so for a state no other write can
   * leave (a payout's, write-evidence.ts): the card showing it shows this write. When the
   * ledger cannot be asked (unreachable, the key gone), the card decides, as before a later
   * write ends its say. A DESFire write always may: the card decides it from the record of its
   * counter, which names the movement (no other write puts that record there), while the record
   * is in the file.
   */
  async cardMayDecide(movement: Movement): Promise<boolean> {
    const intent = movement.reserved?.intent;
    if (intent !== undefined && isDesfireIntent(intent)) return true;
    if (this.#writtenSince(movement)) return false;
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) return true;
    let movements: LedgerMovement[];
    try {
      ({ movements } = await this.#ledger.getCardAccount(apiKey, movement.cardId));
    } catch {
      return true;
    }
    const own = movements.findIndex((other) => other.id === movement.id);
    // The list holds the card's newest movements only: without this one, newer ones filled it.
    if (own === -1) return movements.length === 0;
    // Newest first: those listed before it were made after it. Not their times: two movements
    // of a card can share a millisecond (createdAt's precision) and then neither looks later.
    const writtenAfter = movements
      .slice(0, own)
      .some((other) => other.compensates !== movement.id && other.state !== 'voided');
    return !writtenAfter || onlyWriteLeaving(movement.id, movements);
  }

  /** A learnt movement its card can no longer decide (cardMayDecide): the ledger's word stands. */
  async ledgerWordStands(movement: Movement): Promise<void> {
    if (!movement.learnt || movement.card === undefined) return;
    this.#book.log.info(
      `movement ${movement.id}: its card was settled or written since the ledger's word (${movement.resolved}); that word stands`,
    );
    await this.#book.append({
      type: 'card',
      id: movement.id,
      outcome: movement.card,
      byLedger: true,
    });
  }

  /** Whether this till wrote `movement`'s card after it, or may have (a later write not known to have failed). */
  #writtenSince(movement: Movement): boolean {
    let after = false;
    for (const other of this.#book.movements.values()) {
      if (other === movement) after = true;
      else if (
        after &&
        other.cardId === movement.cardId &&
        (other.card === 'committed' || other.learnt === true || phaseOf(other) === 'uncertain')
      )
        return true;
    }
    return false;
  }

  /**
   * A movement an operator posted or voided without its card (`awaitsCard`), whatever till
   * made it, read now at this one (POST /cards/settle): the ledger is told the card agrees with
   * its word, or a compensating movement of this till sets the books right, which frees the
   * card as well. Resolves with the compensation, if one was needed; throws when the ledger
   * did not take the card's word.
   */
  async cardDecides(
    apiKey: string,
    atLedger: LedgerMovement,
    shows: 'committed' | 'not-written' | undefined,
    evidence: string,
  ): Promise<Movement | undefined> {
    const state = atLedger.state === 'posted' ? 'posted' : 'voided';
    const compensation = compensationOfWrite(
      { kind: atLedger.kind, credits: atLedger.credits, card: shows },
      state,
    );
    if (!compensation) {
      await this.#resolving.resolveOnEvidence(
        apiKey,
        atLedger.id,
        state === 'posted' ? 'post' : 'void',
        evidence,
      );
      return undefined;
    }
    const made =
      this.#book.compensationOf(atLedger.id) ??
      (await this.#compensations.start(
        {
          id: atLedger.id,
          cardId: atLedger.cardId,
          keyFingerprint: this.#book.keys.fingerprintOf(apiKey),
          shows,
        },
        state,
        compensation,
      ));
    await this.#resolving.resolve(made);
    return made;
  }

  /** Tells the ledger the card agrees with its word on `movement`; false when it did not answer. */
  async #tellCardAgrees(
    apiKey: string,
    movement: Movement,
    state: 'posted' | 'voided',
    shows: 'committed' | 'not-written' | undefined,
  ): Promise<boolean> {
    const what =
      shows === undefined
        ? "shows neither the balance before nor after it: the ledger's word stands"
        : `${shows === 'committed' ? 'holds' : 'does not hold'} it`;
    const evidence = `card ${movement.cardId} read at till ${this.#book.tillId}: it ${what}`;
    try {
      await this.#resolving.resolveOnEvidence(
        apiKey,
        movement.id,
        state === 'posted' ? 'post' : 'void',
        evidence,
      );
      return true;
    } catch (error) {
      if (!(error instanceof LedgerRefusal)) return false;
      // The ledger's word changed since it was learnt: nothing a retry would change.
      this.#book.log.error(
        `movement ${movement.id}: the ledger refused the card's word (${error.code})`,
      );
      return true;
    }
  }
}
