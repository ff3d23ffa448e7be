import { tornFirstWrite } from '../card/classic-wallet.ts';
import type { WriteResult } from '../card/card-face.ts';
import { decodeWallet, encodeValueBlock } from '../card/wallet-format.ts';
import { AppError, errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { CardAccess, CardOnReader } from './card-access.ts';
import type { MovementEngine } from './movement-engine.ts';
import type { MovementJournal } from './movement-journal.ts';
import type { PersonalizationStep } from './journal-entries.ts';

/** The answer of POST /cards/personalize. */
export interface PersonalizeAnswer {
  cardId: string;
  credits: number;
  /** True when the card already had its own keys and nothing was written now. */
  alreadyPersonalized: boolean;
}

export interface PersonalizerOptions {
  journal: MovementJournal;
  movements: MovementEngine;
  /** Whether cards have keys of their own (a card master key is configured). */
  perCardKeys: boolean;
  /** Whether a recharge personalizes a card still on the transport key first. */
  autoPersonalize: boolean;
  log: Logger;
}

const BLANK_SLOT = Buffer.alloc(16);
/** A card that left or stopped answering: what a pull in the middle of a personalization gives. */
const CARD_GONE = new Set(['NoCard', 'CardNotResponding']);
/** Slot 1 of a personalized card: value 0 at generation 0 (docs/card-format.md section 7). */
const PERSONALIZED_SLOT_1 = encodeValueBlock(0, 0);

/**
 * Personalization: a card on the transport key gets its own keys (docs/card-security.md). The
 * slots first (slot 0 blank, slot 1 = 0 at generation 0), so that a torn first write can never
 * leave the card unreadable; a card already holding a valid wallet keeps its slots and balance.
 * Then the trailer with the derived keys and access bits, then the new key B must open it.
 * Each step is journaled before it is done, so a card pulled half way is finished on its next
 * personalization, and a card whose trailer write tore is reported as such.
 */
export class CardPersonalizer {
  readonly #options: PersonalizerOptions;

  constructor(options: PersonalizerOptions) {
    this.#options = options;
  }

  /** POST /cards/personalize: the card on the reader gets its keys; idempotent. */
  async personalize(card: CardOnReader): Promise<PersonalizeAnswer> {
    if (!this.#options.perCardKeys) throw errors.cardMasterKeyNotSet();
    if (card.personalize) return this.#personalizeDesfire(card);
    const pending = this.#options.journal.personalizing.has(card.cardId);
    if ((await this.#open(card)) === 'transport') return this.#personalizeOpened(card);
    // Its own key opens it: personalized before, or now finished (its trailer landed).
    const wallet = await this.#options.movements.readWallet(card);
    if (pending) await this.#step(card, 'personalized');
    return { cardId: card.cardId, credits: wallet.balance, alreadyPersonalized: !pending };
  }

  /**
   * Before a recharge reserves anything at the ledger: a card still on the transport key is
   * personalized (autoPersonalize), so a torn personalization costs no money.
   */
  async beforeRecharge(card: CardOnReader): Promise<void> {
    const { perCardKeys, autoPersonalize } = this.#options;
    if (card.personalize) {
      // A DESFire card is written only in its wallet application: without a master key the
      // first recharge creates it (on the trial keys), as a blank MIFARE Classic card is written.
      // One this worker left half made (pulled between its application and its files: the
      // journal says so) is finished first; its trial keys open it, so openWallet cannot tell.
      if (perCardKeys && !autoPersonalize) return;
      const halfMade = this.#options.journal.personalizing.has(card.cardId);
      if (halfMade || (await card.openWallet?.()) === 'transport') {
        await this.#personalizeDesfire(card);
      }
      return;
    }
    if (!perCardKeys || !autoPersonalize) return;
    if ((await this.#open(card)) === 'transport') await this.#personalizeOpened(card);
  }

  /**
   * A DESFire card: its session personalizes it (docs/card-format.md section 9.7), each step
   * journaled before it is done; every step can be repeated, so a card pulled half way is
   * finished by the next personalization.
   */
  async #personalizeDesfire(card: CardOnReader): Promise<PersonalizeAnswer> {
    const { journal, movements, log } = this.#options;
    const pending = journal.personalizing.has(card.cardId);
    let started = false;
    let wrote: boolean;
    try {
      wrote = await card.personalize!(async (step) => {
        started = true;
        await this.#step(card, step);
      });
    } catch (error) {
      const gone = error instanceof AppError && CARD_GONE.has(error.code);
      throw started && gone ? errors.cardRemovedDuringPersonalization(error) : error;
    }
    const wallet = await movements.readWallet(card);
    if (wrote || pending) {
      await this.#step(card, 'personalized');
      log.info(`card ${card.cardId}: DESFire wallet personalized`);
    }
    return {
      cardId: card.cardId,
      credits: wallet.balance,
      alreadyPersonalized: !wrote && !pending,
    };
  }

  /** Opens the wallet sector; a card whose trailer write this worker left torn says so. */
  async #open(card: CardOnReader): Promise<'card' | 'transport'> {
    try {
      return await personalizable(card).openWallet();
    } catch (error) {
      const torn = this.#options.journal.personalizing.get(card.cardId)?.step === 'trailer';
      if (torn && error instanceof AppError && error.code === 'AuthenticationFail') {
        this.#options.log.error(
          `card ${card.cardId}: its trailer write was torn and no key opens its wallet sector`,
        );
        throw errors.personalizationTorn();
      }
      throw error;
    }
  }

  /** The card is open with the transport key. */
  async #personalizeOpened(card: CardOnReader): Promise<PersonalizeAnswer> {
    const session = personalizable(card);
    const { journal, movements, log } = this.#options;
    const slots = await session.readSlots();
    const state = decodeWallet(slots[0], slots[1]);
    // A corrupt card is rewritten only where this worker's journal proves it held nothing: its
    // own slot writes left torn, or its torn first write (the card face's torn proof).
    const proof = movements.tornProof(card.cardId);
    const writeSlots =
      state.kind === 'blank' ||
      (state.kind === 'corrupt' &&
        (journal.personalizing.get(card.cardId)?.step === 'slots' ||
          (proof !== undefined && tornFirstWrite(proof, slots))));
    if (state.kind === 'corrupt' && !writeSlots) throw errors.corruptCard();
    if (writeSlots) {
      await this.#step(card, 'slots');
      expectWritten(await session.writeSlotBlock(0, BLANK_SLOT));
      expectWritten(await session.writeSlotBlock(1, PERSONALIZED_SLOT_1));
    }
    await this.#step(card, 'trailer');
    expectWritten(await session.writeTrailer());
    // The proof: the card's own key B opens it now.
    if ((await session.openWallet()) !== 'card') throw errors.cardWriteUnverified();
    const wallet = await movements.readWallet(card);
    await this.#step(card, 'personalized');
    log.info(`card ${card.cardId}: personalized with its own keys`);
    return { cardId: card.cardId, credits: wallet.balance, alreadyPersonalized: false };
  }

  #step(card: CardOnReader, step: PersonalizationStep | 'personalized'): Promise<void> {
    const at = new Date().toISOString();
    return this.#options.journal.append(
      step === 'personalized'
        ? { type: 'personalized', cardId: card.cardId, at }
        : { type: 'personalizing', cardId: card.cardId, step, at },
    );
  }
}

/**
 * POST /cards/personalize and the tray window's button: the card on the reader, once an earlier
 * movement left undecided on it is settled.
 */
export function personalizeCard(
  cards: CardAccess,
  movements: MovementEngine,
  personalizer: CardPersonalizer,
): Promise<PersonalizeAnswer> {
  return cards.withCard(async (card) => {
    await movements.settle(card);
    return personalizer.personalize(card);
  });
}

type PersonalizableCard = Required<CardOnReader>;

function personalizable(card: CardOnReader): PersonalizableCard {
  if (!card.openWallet || !card.readSlots || !card.writeSlotBlock || !card.writeTrailer) {
    throw new Error(`card ${card.cardId} cannot be personalized by this reader`);
  }
  return card as PersonalizableCard;
}

/** A write that did not certainly land ends the personalization with the card's error. */
function expectWritten(result: WriteResult): void {
  if (result.outcome === 'committed') return;
  if (result.outcome === 'uncertain') throw errors.cardRemovedDuringPersonalization(result.error);
  throw result.error;
}
