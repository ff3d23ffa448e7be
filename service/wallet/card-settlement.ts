import {
  isAboveRecord,
  type CardSuspicion,
  type CardWallet,
  type WalletCard,
  type WriteDecision,
  type WriteIntent,
} from '../card/card-face.ts';
import type { LedgerClient, LedgerMovement } from '../cloud/ledger-client.ts';
import { errors } from '../errors.ts';
import type { AnswerStore } from './answer-store.ts';
import type { MovementBook } from './movement-book.ts';
import type { Movement } from './journal-entries.ts';
import { phaseOf } from './movement-phases.ts';
import type { MovementResolver } from './movement-resolver.ts';
import { landedPerList, writeShownBy } from './write-evidence.ts';

/**
 * The card's word on this till's earlier writes: a write left undecided (the card was pulled
 * in the middle of it) or decided at the ledger while the card was away is settled by what the
 * card holds, before any new write to it and whenever it is presented.
 */
export class CardSettlement {
  readonly #book: MovementBook;
  readonly #resolver: MovementResolver;
  readonly #answers: AnswerStore;
  readonly #ledger: Pick<LedgerClient, 'getCardAccount'>;

  constructor(
    book: MovementBook,
    resolver: MovementResolver,
    answers: AnswerStore,
    ledger: Pick<LedgerClient, 'getCardAccount'>,
  ) {
    this.#book = book;
    this.#resolver = resolver;
    this.#answers = answers;
    this.#ledger = ledger;
  }

  /** Cards holding a write whose outcome is not known yet, or only from the ledger. */
  get uncertainCards(): Set<string> {
    const cards = new Set<string>();
    for (const movement of this.#book.movements.values()) {
      if (
        movement.learnt ||
        (phaseOf(movement) === 'uncertain' && !this.#book.owned.has(movement.id))
      )
        cards.add(movement.cardId);
    }
    return cards;
  }

  /**
   * Decides every earlier uncertain write on `card` by what it holds, then posts or voids it.
   * Called before any new movement on a card, and when a card with an uncertain write is
   * presented. The UID is checked first, as before every write. A write the card cannot decide
   * is asked of the ledger (an operator may have decided it on evidence); if it is still open
   * there, no new write goes to the card.
   */
  async settle(card: WalletCard): Promise<void> {
    const ofCard = [...this.#book.movements.values()].filter(
      (movement) => movement.cardId === card.cardId && !this.#book.owned.has(movement.id),
    );
    const uncertain = ofCard.filter((movement) => phaseOf(movement) === 'uncertain');
    const learnt = ofCard.filter((movement) => movement.learnt);
    if (uncertain.length === 0 && learnt.length === 0) return;
    await card.checkUid();
    // Outcomes learnt from the ledger while the card was away: the card has the last word, as
    // long as nothing may have written it since.
    for (const movement of learnt) {
      if (!(await this.#resolver.cardMayDecide(movement))) {
        await this.#resolver.ledgerWordStands(movement);
        continue;
      }
      const intent = movement.reserved?.intent;
      const { outcome } = intent ? await card.decide(intent) : { outcome: 'unknown' as const };
      const landed = outcome === 'unknown' && (await this.#landedPerLedger(movement));
      await this.#resolver.seen(
        movement,
        landed ? 'committed' : outcome === 'unknown' ? undefined : outcome,
      );
    }
    for (const movement of uncertain) {
      const intent = movement.reserved?.intent;
      if (!intent) continue;
      let decision: WriteDecision = this.#sameWriteLanded(movement, intent)
        ? { outcome: 'not-written' }
        : await card.decide(intent);
      if (decision.outcome === 'unknown' && (await this.#landedPerLedger(movement))) {
        decision = { outcome: 'committed' };
      }
      if (decision.outcome === 'unknown') {
        if (await this.#resolver.learn(movement, { cardSeen: true })) continue;
        this.#book.log.error(
          `movement ${movement.id} on card ${movement.cardId}: the card shows neither the old nor the new balance; left for the operator`,
        );
        throw errors.movementUnsettled();
      }
      // The card shows this write, but another till may have put the very same block there:
      // an operator decided this movement (the card reported lost), which freed the card, and
      // another till wrote it from the same state. Then the ledger lists that till's movement
      // after this one, and the ledger's word on this one stands.
      if (
        decision.outcome === 'committed' &&
        !(await this.#resolver.cardMayDecide(movement)) &&
        (await this.#resolver.learn(movement, { cardSeen: true }))
      ) {
        continue;
      }
      const written = decision.outcome === 'committed';
      await this.#book.append({
        type: 'card',
        id: movement.id,
        outcome: decision.outcome,
        ...(decision.outcome === 'not-written' && decision.torn ? { torn: true } : {}),
      });
      this.#book.log.info(
        `movement ${movement.id}: card shows it ${written ? 'landed' : 'did not land'}`,
      );
      if (written) await this.#answers.record(movement);
      await this.#resolver.resolve(movement);
    }
  }

  /**
   * Decides, from `card`, every movement of it an operator posted or voided without the card,
   * which holds the card at the ledger (`awaitsCard`; docs/cloud-api.md, "Tills"): a create
   * refused as CardMovementPending may be one. True when one was decided (a create may then be
   * tried again); false when none holds it, or the ledger did not answer.
   */
  async freeHeld(card: WalletCard, keyFingerprint: string): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(keyFingerprint);
    // Lent until the compensations it may make are journaled (MovementBook.lendKey).
    const release = this.#book.lendKey(keyFingerprint);
    if (apiKey === undefined || !release) return false;
    try {
      const account = await this.#ledger.getCardAccount(apiKey, card.cardId);
      const held = account.movements.filter(awaitsCard);
      for (const movement of held) {
        await this.decideHeld(card, apiKey, movement, account.movements);
      }
      return held.length > 0;
    } catch (error) {
      this.#book.log.warn(
        `card ${card.cardId}: could not decide what an operator decided without it: ${(error as Error).message}`,
      );
      return false;
    } finally {
      release();
    }
  }

  /**
   * A movement an operator decided without its card (any till's), decided now from `card`:
   * what it shows (nothing, when it shows neither side of the write or the movement's card
   * state is not this till's format; when it moved on, what the card's movements at the ledger,
   * `listed`, show: write-evidence.ts) confirms the operator's word at the ledger, or a
   * compensating movement sets the books right. Nothing is written to the card; throws when the
   * ledger did not take the card's word.
   */
  async decideHeld(
    card: WalletCard,
    apiKey: string,
    movement: LedgerMovement,
    listed: readonly LedgerMovement[],
  ): Promise<{ compensation: Movement | undefined }> {
    const shown = await writeShownBy(card, movement, this.#book.tillId, listed);
    const shows = shown?.outcome === 'unknown' ? undefined : shown?.outcome;
    const evidence =
      shows && shown
        ? shown.evidence
        : `card ${card.cardId} read at till ${this.#book.tillId}: it shows neither the balance before nor after the write: the ledger's word stands`;
    return { compensation: await this.#resolver.cardDecides(apiKey, movement, shows, evidence) };
  }

  /**
   * Whether the card's movements at the ledger show that this till's write of `movement` landed,
   * when the card has moved on since and cannot show it (write-evidence.ts, landedPerList): a
   * payout voided by an operator while the card was away, say, and a float recharge another
   * till sold over it. False when the ledger cannot be asked.
   */
  async #landedPerLedger(movement: Movement): Promise<boolean> {
    const apiKey = this.#book.keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) return false;
    let readAfter: string | undefined;
    try {
      const { movements } = await this.#ledger.getCardAccount(apiKey, movement.cardId);
      readAfter = landedPerList(movement.id, movements);
    } catch {
      return false;
    }
    if (readAfter === undefined) return false;
    this.#book.log.info(`movement ${movement.id}: the card moved on since, but ${readAfter}`);
    return true;
  }

  /**
   * Whether another movement of the card, whose write landed, planned the very same write (a
   * MIFARE Classic write is its slot, value and generation: nothing names the movement). Then
   * they were planned from the same card state, so this one had not landed when the other read
   * the card, and landing later it would put the same block there: the card's state is the
   * other's, and this one is not written. It happens to a till that lost its journal: its
   * unknown movement, adopted from the ledger, and the retry it made meanwhile.
   */
  #sameWriteLanded(movement: Movement, intent: WriteIntent): boolean {
    const planned = JSON.stringify(intent);
    return [...this.#book.movements.values()].some(
      (other) =>
        other.id !== movement.id &&
        other.cardId === movement.cardId &&
        other.card === 'committed' &&
        JSON.stringify(other.reserved?.intent) === planned,
    );
  }

  /**
   * The wallet on `card`. A card whose last write from this till was seen torn is read with that
   * write as proof: a torn first write to a blank card still counts as blank (card face). A card
   * its newest movement record does not explain is `suspect`, and said so in the log.
   */
  async readWallet(card: WalletCard): Promise<SuspectWallet> {
    const wallet = await card.readWallet(this.tornProof(card.cardId));
    const suspect = this.#suspicionOf(wallet);
    if (suspect === undefined) return wallet;
    this.#book.log.error(
      `card ${wallet.cardId} holding ${wallet.balance} is suspect: ${SUSPICIONS[suspect]}; do not pay it out`,
    );
    return { ...wallet, suspect };
  }

  /**
   * What the card alone shows (more than its newest record), or, with this till's journal, a
   * newest record naming a movement this till decided from the card never landed: the
   * transaction was committed afterwards by someone else (docs/card-security.md, DESFire). A
   * decision learnt from the ledger with the card away is the card's to confirm first.
   */
  #suspicionOf(wallet: CardWallet): CardSuspicion | undefined {
    if (isAboveRecord(wallet)) return 'card-above-record';
    const named = wallet.record && this.#book.movements.get(wallet.record.movementId);
    return named?.card === 'not-written' && !named.learnt ? 'record-of-voided-movement' : undefined;
  }

  /** The card's last write, when the journal saw it torn (what it proves: see the card face). */
  tornProof(cardId: string): WriteIntent | undefined {
    const latest = this.#book.latestOfCard(cardId);
    return latest?.torn === true && latest.card === 'not-written'
      ? latest.reserved?.intent
      : undefined;
  }
}

/** A wallet as the engine reads it: `suspect` when its newest record does not explain it. */
export type SuspectWallet = CardWallet & { suspect?: CardSuspicion };

const SUSPICIONS: Record<CardSuspicion, string> = {
  'card-above-record': 'it holds more than its newest movement record says (credits no till wrote)',
  'record-of-voided-movement':
    'its newest movement record names a movement this till found not written and voided (committed after the till gave up on it)',
};

/** An operator's post or void, made without the card, that holds the card at the ledger. */
export function awaitsCard(movement: LedgerMovement): boolean {
  return (
    movement.state !== 'pending' && movement.awaitsCard === true && movement.compensates === null
  );
}
