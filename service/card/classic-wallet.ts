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
import { decodeFloatReference, encodeFloatReference } from './float-reference.ts';
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

/**
 * The format's one write from `before` to `balance`. The movement id plays no part, but in a
 * float recharge (`float`): its float reference, naming the movement and its credits, goes
 * with the write (written first, docs/card-format.md).
 */
export function planClassicWrite(
  before: string,
  balance: number,
  movementId: string,
  float = false,
): ClassicWriteIntent {
  const { slot, value, generation, previousBalance } = planWrite(parseBefore(before), balance);
  const intent: ClassicWriteIntent = { type: 'classic', slot, value, generation, previousBalance };
  if (!float) return intent;
  const credits = balance - classicBalanceBefore(before);
  const reference = encodeFloatReference({ generation, movementId, credits });
  return { ...intent, reference: reference.toString('hex') };
}

/** The text the wallet reads as once `intent` landed: its slot active, at its value and generation. */
export function classicStateAfter(intent: ClassicWriteIntent): string {
  const { value: balance, generation, slot: activeSlot } = intent;
  return classicBefore({ kind: 'valid', balance, generation, activeSlot, backup: 'valid' });
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
 * counts as blank. Any other corrupt card may have held money and is never taken for 0. With
 * the sector's spare block (`spare`), the card carries float recharges: its float reference
 * counts while the value block written with it is the active one.
 */
export function readClassicWallet(
  cardId: string,
  slots: [Buffer, Buffer],
  tornProof?: WriteIntent,
  spare?: Buffer,
): ClassicWallet {
  const decoded = decodeWallet(slots[0], slots[1]);
  const state: WritableWallet | undefined =
    decoded.kind !== 'corrupt'
      ? decoded
      : tornProof && tornFirstWrite(tornProof, slots)
        ? { kind: 'blank' }
        : undefined;
  if (!state) throw errors.corruptCard();
  const wallet: ClassicWallet = {
    cardId,
    state,
    balance: state.kind === 'valid' ? state.balance : 0,
    before: classicBefore(state),
    slots,
  };
  if (spare === undefined) return wallet;
  const reference = decodeFloatReference(spare);
  const shown =
    reference !== undefined && state.kind === 'valid' && reference.generation === state.generation;
  return {
    ...wallet,
    carriesFloat: true,
    floatEvidence: shown ? [{ movementId: reference.movementId, credits: reference.credits }] : [],
  };
}

/**
 * A planned write, block by block: a float recharge's reference first (its spare block: what
 * it names counts only once the slot written after it is active), then the slot, the commit
 * point. A reference that did not certainly land leaves the slot unwritten: not written. Any
 * other write whose generation the card's reference names (`spare`: the block as read before
 * the write was planned) clears it first, the same way: that reference is a float recharge's
 * whose slot never landed, and this write's slot would make it count (docs/card-format.md,
 * section 6a).
 */
export async function writeClassic(
  intent: WriteIntent,
  blocks: Pick<ClassicSlots, 'writeSlotBlock' | 'writeSpare'>,
  spare?: Buffer,
): Promise<WriteResult> {
  const slots = classicSlotWrite(intent);
  if ('error' in slots) return slots;
  const reference = referenceWrittenWith(intent, spare);
  if (reference !== undefined) {
    if (!blocks.writeSpare) {
      return {
        outcome: 'not-written',
        error: errors.cardOperationFailed(new Error('this card carries no float reference')),
      };
    }
    const written = await blocks.writeSpare(reference);
    if (written.outcome !== 'committed') return { outcome: 'not-written', error: written.error };
  }
  return blocks.writeSlotBlock(slots.slot, slots.block);
}

/**
 * The spare block a write puts before its slot: a float recharge's reference; 16 zero bytes
 * where the card's reference (`spare`) names the generation this write gives its slot; else
 * none.
 */
export function referenceWrittenWith(intent: WriteIntent, spare?: Buffer): Buffer | undefined {
  if (intent.type === 'desfire') return undefined;
  if (intent.reference !== undefined) return Buffer.from(intent.reference, 'hex');
  const named = spare && decodeFloatReference(spare);
  return named && named.generation === intent.generation ? Buffer.alloc(16) : undefined;
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

/**
 * What classicWalletCard needs: the card's id, its UID check and its two slot blocks, and (to
 * carry float recharges) the sector's spare block.
 */
export interface ClassicSlots {
  readonly cardId: string;
  checkUid(): Promise<void>;
  readSlots(): Promise<[Buffer, Buffer]>;
  /** Writes one slot block and reads it back (CardSession.writeSlotBlock). */
  writeSlotBlock(slot: 0 | 1, block: Buffer): Promise<WriteResult>;
  /** The slots and the spare block, in one read. */
  readSector?(): Promise<[Buffer, Buffer, Buffer]>;
  /** Writes the spare block (the float reference) and reads it back. */
  writeSpare?(block: Buffer): Promise<WriteResult>;
}

/**
 * The card face over a Classic card's slots (and its spare block, when it has one). The spare
 * block as last read or written (`spare`) goes with each write (writeClassic).
 */
export function classicWalletCard(card: ClassicSlots): WalletCard & ClassicSlots {
  const { readSector, writeSpare } = card;
  let spare: Buffer | undefined;
  const sector =
    readSector &&
    (async (): Promise<[Buffer, Buffer, Buffer]> => {
      const blocks = await readSector.call(card);
      spare = blocks[2];
      return blocks;
    });
  const spareWrite =
    writeSpare &&
    (async (block: Buffer): Promise<WriteResult> => {
      const written = await writeSpare.call(card, block);
      // Not certainly written either way: taken as written (a reference it left would count).
      if (written.outcome !== 'not-written') spare = block;
      return written;
    });
  const writeSlotBlock = (slot: 0 | 1, block: Buffer) => card.writeSlotBlock(slot, block);
  return {
    cardId: card.cardId,
    checkUid: () => card.checkUid(),
    readSlots: () => card.readSlots(),
    writeSlotBlock,
    ...(sector && { readSector: sector }),
    ...(spareWrite && { writeSpare: spareWrite }),
    readWallet: async (tornProof) => {
      if (!sector) return readClassicWallet(card.cardId, await card.readSlots(), tornProof);
      const [slot0, slot1, read] = await sector();
      return readClassicWallet(card.cardId, [slot0, slot1], tornProof, read);
    },
    write: (intent) =>
      writeClassic(
        intent,
        { writeSlotBlock, ...(spareWrite && { writeSpare: spareWrite }) },
        spare,
      ),
    decide: async (intent) => decideClassicWrite(intent, await card.readSlots()),
  };
}
