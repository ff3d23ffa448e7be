/**
 * The card face (wallet-card.ts) of a MIFARE Classic card with the wallet format v1
 * (docs/card-format.md): its wallet state as text, its writes, and deciding them from the two
 * slots. Pure but for classicWalletCard, which puts the face on anything that reads and writes
 * the two slot blocks (the PC/SC card session, the simulation's card).
 */
import { errors } from '../errors.ts';
import type {
  CardWallet,
  WalletCard,
  WriteDecision,
  WriteIntent,
  WriteResult,
} from './card-face.ts';
import {
  decideWrite,
  decodeSlot,
  decodeWallet,
  encodeValueBlock,
  planWrite,
  type ClassicWriteIntent,
  type WritableWallet,
} from './wallet-format.ts';

const PREFIX = 'classic:v1:';
const BLANK = `${PREFIX}blank`;
/** `classic:v1:<balance>:<generation>:<active slot>` or `classic:v1:blank`. */
const VALID = /^classic:v1:(-?\d{1,10}):(\d{1,3}):([01])$/;

export function isClassicBefore(before: string): boolean {
  return before === BLANK || VALID.test(before);
}

/** The text a Classic wallet reads as (wallet-card.ts, `before`). */
export function classicBefore(state: WritableWallet): string {
  return state.kind === 'blank'
    ? BLANK
    : `${PREFIX}${state.balance}:${state.generation}:${state.activeSlot}`;
}

function parseBefore(before: string): WritableWallet {
  if (before === BLANK) return { kind: 'blank' };
  const match = VALID.exec(before);
  if (!match) throw new RangeError(`not a Classic wallet state: "${before}"`);
  const [, balance, generation, slot] = match;
  return {
    kind: 'valid',
    balance: Number(balance),
    generation: Number(generation),
    activeSlot: slot === '0' ? 0 : 1,
    // The backup slot plays no part in planning a write.
    backup: 'valid',
  };
}

export function classicBalanceBefore(before: string): number {
  const state = parseBefore(before);
  return state.kind === 'valid' ? state.balance : 0;
}

/** The format's one write from `before` to `balance` (the movement id plays no part). */
export function planClassicWrite(
  before: string,
  balance: number,
  _movementId: string,
): ClassicWriteIntent {
  const { slot, value, generation, previousBalance } = planWrite(parseBefore(before), balance);
  return { type: 'classic', slot, value, generation, previousBalance };
}

/** What the slots show of `intent` (docs/card-format.md section 6); another card type's: unknown. */
export function decideClassicWrite(
  intent: WriteIntent,
  [slot0, slot1]: [Buffer, Buffer],
): WriteDecision {
  if (intent.type === 'desfire') return { outcome: 'unknown' };
  switch (decideWrite(intent, slot0, slot1)) {
    case 'committed':
      return { outcome: 'committed' };
    case 'not-committed':
      return tornFirstWrite(intent, [slot0, slot1])
        ? { outcome: 'not-written', torn: true }
        : { outcome: 'not-written' };
    case 'unknown':
      return { outcome: 'unknown' };
  }
}

/**
 * A write planned from a blank card (previousBalance null: slot 0) that the card shows torn:
 * slot 0 invalid, slot 1 still blank. Nothing else of the format writes slot 0 while slot 1 is
 * blank, and a torn card is refused by every writer, so the card was blank before it.
 */
export function tornFirstWrite(intent: WriteIntent, [slot0, slot1]: [Buffer, Buffer]) {
  return (
    intent.type !== 'desfire' &&
    intent.previousBalance === null &&
    intent.slot === 0 &&
    decodeSlot(slot0).kind === 'invalid' &&
    decodeSlot(slot1).kind === 'blank'
  );
}

/** A Classic wallet as read, with what it was read from. */
export interface ClassicWallet extends CardWallet {
  state: WritableWallet;
  slots: [Buffer, Buffer];
}

/**
 * The wallet in two slots. A corrupt card is CorruptCard, except one whose last write
 * (`tornProof`) the journal saw torn as a first write to a blank card: it held nothing, so it
 * counts as blank. Any other corrupt card may have held money and is never taken for 0.
 */
export function readClassicWallet(
  cardId: string,
  slots: [Buffer, Buffer],
  tornProof?: WriteIntent,
): ClassicWallet {
  const decoded = decodeWallet(slots[0], slots[1]);
  const state: WritableWallet | undefined =
    decoded.kind !== 'corrupt'
      ? decoded
      : tornProof && tornFirstWrite(tornProof, slots)
        ? { kind: 'blank' }
        : undefined;
  if (!state) throw errors.corruptCard();
  return {
    cardId,
    state,
    balance: state.kind === 'valid' ? state.balance : 0,
    before: classicBefore(state),
    slots,
  };
}

/**
 * The slot block a planned write puts, or (a write planned for another card type, which never
 * touches a Classic card) a write certainly not done.
 */
export function classicSlotWrite(
  intent: WriteIntent,
): { slot: 0 | 1; block: Buffer } | Extract<WriteResult, { outcome: 'not-written' }> {
  if (intent.type === 'desfire') {
    return {
      outcome: 'not-written',
      error: errors.cardOperationFailed(new Error('a DESFire write for a MIFARE Classic card')),
    };
  }
  return { slot: intent.slot, block: encodeValueBlock(intent.value, intent.generation) };
}

/** What classicWalletCard needs: the card's id, its UID check and its two slot blocks. */
export interface ClassicSlots {
  readonly cardId: string;
  checkUid(): Promise<void>;
  readSlots(): Promise<[Buffer, Buffer]>;
  /** Writes one slot block and reads it back (CardSession.writeSlotBlock). */
  writeSlotBlock(slot: 0 | 1, block: Buffer): Promise<WriteResult>;
}

/** The card face over a Classic card's slots. */
export function classicWalletCard(card: ClassicSlots): WalletCard & ClassicSlots {
  return {
    cardId: card.cardId,
    checkUid: () => card.checkUid(),
    readSlots: () => card.readSlots(),
    writeSlotBlock: (slot, block) => card.writeSlotBlock(slot, block),
    readWallet: async (tornProof) =>
      readClassicWallet(card.cardId, await card.readSlots(), tornProof),
    write: async (intent) => {
      const slots = classicSlotWrite(intent);
      return 'error' in slots ? slots : card.writeSlotBlock(slots.slot, slots.block);
    },
    decide: async (intent) => decideClassicWrite(intent, await card.readSlots()),
  };
}
