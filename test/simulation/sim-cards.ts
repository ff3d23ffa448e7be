/**
 * Cards, till readers and vending machines for the deterministic simulation.
 *
 * A card is a MIFARE Classic card (two 16-byte wallet slots and the sector's spare block, which
 * holds a float recharge's reference, docs/card-format.md sections 2 and 6a) or a MIFARE DESFire
 * card (the virtual DESFire card with its real cryptography, section 9). A till's reader
 * puts the worker's card face on it: the Classic codec over the slots, or the production
 * DesfireWalletSession whose APDUs the virtual card executes. Each APDU takes virtual time. A
 * Classic block write (a slot, or the spare block: a float recharge's reference, or its
 * clearing), once sent, lands as an event of the outside world: whole, not at all, half (8 of 16
 * bytes, as the rig's virtual card tears) or garbled, even after the till that sent it crashed.
 * A DESFire CommitTransaction, once sent, lands the same way, but all or nothing (the card's
 * anti-tearing): the card leaves before it (the transaction is dropped) or after it (committed,
 * the answer lost). Any other APDU may find the card gone.
 *
 * A vending machine spends offline. From a Classic card with key A: DECREMENT and TRANSFER on
 * the active slot, in place, so the generation (the value block's address byte) stays. From a
 * DESFire card with the machines' key 2: Debit and CommitTransaction (section 9.6), which adds
 * no record. The ledger never hears of either.
 *
 * The simulation reads cards with its own decoder (truthOf), written from the format's
 * documentation, so that a defect in the worker's codec cannot hide from the invariants.
 */
import { isRechargeOrPayout, type MovementKind } from '../../common/ledger-contract.ts';
import {
  classicWalletCard,
  readClassicWallet,
  tornFirstWrite,
} from '../../service/card/classic-wallet.ts';
import { DesfireClient } from '../../service/card/desfire/desfire-client.ts';
import { DesfireWalletSession } from '../../service/card/desfire/desfire-wallet-session.ts';
import type { WalletCard, WriteResult } from '../../service/card/card-face.ts';
import type { DesfireWalletKeys } from '../../service/card/wallet-keys.ts';
import {
  powerOn,
  type DesfireVolatile,
  type VirtualDesfireCard,
} from '../../service/card/simulator/virtual-desfire-card.ts';
import type { AppError } from '../../service/errors.ts';
import { errors } from '../../service/errors.ts';
import type { CardAccess, CardOnReader } from '../../service/wallet/card-access.ts';
import type { Life, Scheduler } from './scheduler.ts';

type Slot = { kind: 'value'; value: number; generation: number } | { kind: 'blank' | 'invalid' };

/** A value block: value, ~value, value (int32 LE), then g, ~g, g, ~g. */
function slotOf(block: Buffer): Slot {
  if (block.every((byte) => byte === 0)) return { kind: 'blank' };
  const value = block.readInt32LE(0);
  const g = block[12] as number;
  const valid =
    block.readInt32LE(4) === ~value &&
    block.readInt32LE(8) === value &&
    block[13] === (~g & 0xff) &&
    block[14] === g &&
    block[15] === (~g & 0xff);
  return valid ? { kind: 'value', value, generation: g } : { kind: 'invalid' };
}

export type CardTruth =
  | { kind: 'blank' }
  | { kind: 'valid'; balance: number; generation: number; active: 0 | 1 }
  /** A DESFire wallet: its value file, and the newest record's counter (0: no record). */
  | { kind: 'desfire'; balance: number; counter: number }
  | { kind: 'corrupt' };

/** What a card holds, by the format's rules (section 4): the newer of two values is active. */
export function cardTruth(slots: readonly [Buffer, Buffer]): CardTruth {
  const [a, b] = [slotOf(slots[0]), slotOf(slots[1])];
  if (a.kind === 'blank' && b.kind === 'blank') return { kind: 'blank' };
  const valid = (s: Slot, active: 0 | 1): CardTruth =>
    s.kind === 'value'
      ? { kind: 'valid', balance: s.value, generation: s.generation, active }
      : { kind: 'corrupt' };
  if (a.kind === 'value' && b.kind === 'value') {
    const ahead = (a.generation - b.generation + 256) % 256;
    if (ahead >= 1 && ahead <= 127) return valid(a, 0);
    if (ahead >= 129) return valid(b, 1);
    return { kind: 'corrupt' };
  }
  if (a.kind === 'value') return valid(a, 0);
  return valid(b, 1);
}

/** The balance a till may pay out: a blank card holds 0; a corrupt one, nothing readable. */
export function balanceOf(truth: CardTruth): number {
  return truth.kind === 'valid' || truth.kind === 'desfire' ? truth.balance : 0;
}

/** A float reference (docs/card-format.md section 6a), as this file reads it. */
export interface ShownReference {
  generation: number;
  movementId: string;
  credits: number;
}

/** CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection (section 6a). */
function crc16(bytes: Buffer): number {
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = ((crc << 1) ^ (crc & 0x8000 ? 0x1021 : 0)) & 0xffff;
  }
  return crc;
}

/**
 * The float reference a spare block holds, by the table of section 6a: tag F1, the generation,
 * the float's 6-byte id prefix, the sequence number and the credits (uint24 big-endian each), a
 * CRC of bytes 0-13. Anything else (zeros, a torn or garbled write) names nothing.
 */
export function referenceIn(spare: Buffer): ShownReference | undefined {
  if (spare.length !== 16 || spare[0] !== 0xf1) return undefined;
  if (spare.readUInt16BE(14) !== crc16(spare.subarray(0, 14))) return undefined;
  const prefix = spare.subarray(2, 8).toString('hex');
  const seq = spare.readUIntBE(8, 3);
  const credits = spare.readUIntBE(11, 3);
  if (seq === 0 || credits === 0) return undefined;
  const id = `${prefix.slice(0, 8)}-${prefix.slice(8)}-8000-8000-000000${seq.toString(16).padStart(6, '0')}`;
  return { generation: spare[1] as number, movementId: id, credits };
}

/**
 * The float recharges a card shows (its evidence, for any till that reads it): a Classic card's
 * reference while its generation is the active slot's (section 6a: only the newest); a DESFire
 * card's records naming a float movement (section 9.4, the ids of section 6a's layout).
 */
export function floatsShown(card: SimCard): string[] {
  if (card.chip.type === 'classic') {
    const truth = cardTruth(card.chip.slots);
    const reference = referenceIn(card.chip.spare);
    const shown = reference && truth.kind === 'valid' && truth.generation === reference.generation;
    return shown ? [reference.movementId] : [];
  }
  const float = /^[0-9a-f]{8}-[0-9a-f]{4}-8000-8000-000000[0-9a-f]{6}$/;
  return (recordsOf(card.chip.card) ?? [])
    .map(({ movementId: id }) => {
      const hex = id.toString('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    })
    .filter((id) => float.test(id));
}

/** The wallet application's AID (section 9.2: "CW" and 1) and its files. */
export const DESFIRE_AID = 0x435701;
const VALUE_FILE = 0x01;
const RECORD_FILE = 0x02;
const KEY_MACHINE = 2;

/** A DESFire movement record (section 9.4): counter (uint32 LE), movement id, value after. */
interface MovementRecord {
  counter: number;
  movementId: Buffer;
  valueAfter: number;
}

function recordsOf(card: VirtualDesfireCard): MovementRecord[] | undefined {
  const file = card.application(DESFIRE_AID)?.files.get(RECORD_FILE);
  if (file?.type !== 'cyclic-record') return undefined;
  return file.records.map((bytes) => ({
    counter: bytes.readUInt32LE(0),
    movementId: Buffer.from(bytes.subarray(4, 20)),
    valueAfter: bytes.readInt32LE(20),
  }));
}

/** What a DESFire card holds: no application is blank; missing files, corrupt. */
function desfireTruth(card: VirtualDesfireCard): CardTruth {
  const app = card.application(DESFIRE_AID);
  if (!app) return { kind: 'blank' };
  const value = app.files.get(VALUE_FILE);
  const records = recordsOf(card);
  if (value?.type !== 'value' || !records) return { kind: 'corrupt' };
  return { kind: 'desfire', balance: value.value, counter: records.at(-1)?.counter ?? 0 };
}

/** What a card holds, whatever its type. */
export function truthOf(card: SimCard): CardTruth {
  return card.chip.type === 'classic' ? cardTruth(card.chip.slots) : desfireTruth(card.chip.card);
}

/**
 * What a card shows of a movement's write, planned again from the ledger's record of it
 * (`cardBefore`: `classic:v1:blank` or `classic:v1:<balance>:<generation>:<active slot>`), by
 * the rules of docs/card-format.md section 6 read with this file's decoder: committed, not
 * written, or unknown (no card can tell). The simulation's operator decides only what this says
 * no card can, whatever the worker's own decideWrite says.
 */
export function writeShown(
  movement: {
    id: string;
    kind: MovementKind;
    credits: number;
    cardBefore: string | null;
  },
  card: SimCard,
): 'committed' | 'not-written' | 'unknown' {
  // The simulation's tills make only recharges and payouts so far.
  if (!isRechargeOrPayout(movement.kind)) return 'unknown';
  if (card.chip.type === 'desfire') return desfireWriteShown(movement, card.chip.card);
  const slots = card.chip.slots;
  const match = /^classic:v1:(?:blank|(-?\d+):(\d+):([01]))$/.exec(movement.cardBefore ?? '');
  if (!match) return 'unknown';
  const previous =
    match[1] === undefined
      ? null
      : { balance: Number(match[1]), generation: Number(match[2]), active: Number(match[3]) };
  // The write goes to the slot that is not active, one generation on; a blank card's to slot 0
  // at generation 1.
  const slot = previous ? 1 - previous.active : 0;
  const generation = previous ? (previous.generation + 1) % 256 : 1;
  const value = movement.kind === 'recharge' ? (previous?.balance ?? 0) + movement.credits : 0;
  const truth = cardTruth(slots);
  if (
    truth.kind === 'valid' &&
    truth.active === slot &&
    truth.balance === value &&
    truth.generation === generation
  ) {
    return 'committed';
  }
  if (!previous) {
    const [first, second] = [slotOf(slots[0]), slotOf(slots[1])];
    return second.kind === 'blank' && first.kind !== 'value' ? 'not-written' : 'unknown';
  }
  // The previous state still active, perhaps lowered by a machine since (in place: same
  // generation).
  return truth.kind === 'valid' &&
    truth.active !== slot &&
    truth.generation === previous.generation &&
    truth.balance <= previous.balance
    ? 'not-written'
    : 'unknown';
}

/**
 * What a DESFire card shows of a movement's write (section 9.5), planned again from the ledger's
 * record (`cardBefore`: `desfire:v1:blank` or `desfire:v1:<balance>:<counter>`): the record of
 * the planned counter naming this movement and value, committed; naming another movement, or no
 * record reaching the counter, not written; anything else, unknown.
 */
function desfireWriteShown(
  movement: {
    id: string;
    kind: MovementKind;
    credits: number;
    cardBefore: string | null;
  },
  card: VirtualDesfireCard,
): 'committed' | 'not-written' | 'unknown' {
  const match = /^desfire:v1:(?:blank|(\d+):(\d+))$/.exec(movement.cardBefore ?? '');
  const records = recordsOf(card);
  if (!match || !records) return 'unknown';
  const counter = Number(match[2] ?? 0) + 1;
  const value = movement.kind === 'recharge' ? Number(match[1] ?? 0) + movement.credits : 0;
  const own = records.find((record) => record.counter === counter);
  if (own) {
    // The simulation's movement ids are UUIDs: the record holds their 16 bytes.
    if (!own.movementId.equals(Buffer.from(movement.id.replaceAll('-', ''), 'hex'))) {
      return 'not-written';
    }
    return own.valueAfter === value ? 'committed' : 'unknown';
  }
  const newest = records.at(-1);
  return !newest || newest.counter < counter ? 'not-written' : 'unknown';
}

export function valueBlock(value: number, generation: number): Buffer {
  const block = Buffer.alloc(16);
  block.writeInt32LE(value, 0);
  block.writeInt32LE(~value, 4);
  block.writeInt32LE(value, 8);
  block[12] = generation;
  block[13] = ~generation & 0xff;
  block[14] = generation;
  block[15] = ~generation & 0xff;
  return block;
}

/**
 * A card's memory: a Classic card's wallet slots and spare block (16 zero bytes until a float
 * recharge's reference is written), or a DESFire card and what it holds while powered.
 */
export type Chip =
  | { type: 'classic'; slots: [Buffer, Buffer]; spare: Buffer }
  | { type: 'desfire'; card: VirtualDesfireCard; powered: DesfireVolatile };

export interface SimCard {
  uid: string;
  chip: Chip;
  /** The shop that sold it (its balance imported there). */
  home: number;
  /** Where it is: a till's or a machine's name, or null (with its customer). */
  at: string | null;
  /** What machines took from it, offline. */
  spentOffline: number;
  /**
   * Shops whose movements wrote it: the shop of the key each request came with, not the till's
   * shop when the write landed (an operator may give the till another shop's key meanwhile).
   */
  writtenAt: Set<number>;
  /** Reported lost (an operator decided its movements without it): found at the end. */
  lost: boolean;
}

/** One block write that reached a card, as the outside world saw it. */
export interface LandedWrite {
  till: string;
  cardId: string;
  /** The movement whose write it is (from the request that sent it). */
  movementId: string | undefined;
  how: 'whole' | 'half' | 'garbled';
  before: CardTruth;
  after: CardTruth;
  at: number;
}

/**
 * A spare-block write that reached a Classic card (a float recharge's reference, or 16 zero
 * bytes clearing one), as the outside world saw it: what the block names now (`names`).
 */
export interface ReferenceWrite {
  till: string;
  cardId: string;
  movementId: string | undefined;
  how: 'whole' | 'half' | 'garbled';
  names: ShownReference | undefined;
  clears: boolean;
  at: number;
}

/** What one request did to cards: the movement it wrote for, and the writes that landed. */
export interface RequestTrace {
  movementId?: string;
  /** The card on the reader when the request took it. */
  cardSeen?: string;
  /** The shop whose key the request came with (its movement's shop). */
  shop?: number;
  writes: LandedWrite[];
}

export interface ReaderFaults {
  /** Per block write: the card leaves before the block is written. */
  pullBefore: number;
  /** Per block write: the block is written, the card leaves before answering. */
  pullAfter: number;
  /** Per block write: the card leaves halfway: 8 of the 16 bytes are written. */
  tear: number;
  /** Per block write: the card leaves while programming: the block is garbled. */
  garble: number;
  /** Per block write: the card answers, but the block reads back garbled. */
  unverified: number;
  /** Per other APDU: the card leaves (NoCard). */
  pullOnApdu: number;
}

/** APDUs the simulated reader looks at: its own GET UID, DESFire's CommitTransaction. */
const GET_UID = 0xff;
const COMMIT_TRANSACTION = 0xc7;

export const NO_READER_FAULTS: ReaderFaults = {
  pullBefore: 0,
  pullAfter: 0,
  tear: 0,
  garble: 0,
  unverified: 0,
  pullOnApdu: 0,
};

/** Paths of the card code a run reached (a path never reached is not tested by it). */
export type CardPath =
  | 'decided-committed'
  | 'decided-not-written'
  | 'decided-torn-first-write'
  | 'decided-unknown'
  | 'read-corrupt'
  | 'read-torn-proof-as-blank'
  | 'wrote-generation-wrap'
  | 'landed-after-crash'
  | 'classic-reference-landed'
  | 'classic-reference-torn'
  | 'classic-reference-cleared'
  | 'desfire-decided-committed'
  | 'desfire-decided-not-written'
  | 'desfire-decided-unknown'
  | 'desfire-pulled-at-command'
  | 'desfire-commit-pulled-before'
  | 'desfire-commit-pulled-after'
  | 'desfire-committed'
  | 'desfire-landed-after-crash'
  | 'desfire-refused-other-keys';

/**
 * A till's reader: one card operation at a time, APDUs in virtual time. A card operation holds
 * the card as it was presented: once it left the field, the card lost its authentication, and
 * the operation's further APDUs fail (NoCard) even when the card is back.
 */
export class SimReader implements CardAccess {
  #card: SimCard | null = null;
  /** Counts presentations: an operation belongs to one. */
  #presence = 0;
  faults: ReaderFaults = NO_READER_FAULTS;
  /** The till process now using the reader (a new one gets a new PC/SC context). */
  life: Life | null = null;
  /** The card left the reader in the customer's hand. */
  onPulled: (card: SimCard) => void = () => undefined;
  onLanded: (write: LandedWrite) => void = () => undefined;
  /** A spare-block write reached a Classic card (a float reference, or its clearing). */
  onReference: (write: ReferenceWrite) => void = () => undefined;
  /** A Classic card read here showed a float recharge (its reference counts). */
  onReferenceRead: (movementId: string) => void = () => undefined;
  onPath: (path: CardPath) => void = () => undefined;
  /** A block write was sent (the world may crash the till before it lands). */
  onWriteSent: () => void = () => undefined;
  /** Whether the till's card keys open this card (another shop's cards have other keys). */
  opens: (card: SimCard) => boolean = () => true;
  /** The DESFire keys the till's configuration gives a card (its shop's master key). */
  desfireKeys: (cardId: string) => DesfireWalletKeys = () => {
    throw new Error('no DESFire keys configured');
  };
  readonly name: string;
  readonly #shop: () => number;
  readonly #sched: Scheduler;
  #tail: Promise<void> = Promise.resolve();

  constructor(sched: Scheduler, name: string, shop: () => number) {
    this.#sched = sched;
    this.name = name;
    this.#shop = shop;
  }

  /** A new worker process: the crashed one's lock is gone with its PC/SC context. */
  reset(life: Life): void {
    this.life = life;
    this.#tail = Promise.resolve();
  }

  withCard<T>(operation: (card: CardOnReader) => Promise<T>, trace?: RequestTrace): Promise<T> {
    const run = this.#tail.then(async () => {
      const card = this.#card;
      if (!card) throw errors.noCard();
      if (trace) trace.cardSeen = card.uid;
      return operation(this.#face(card, trace ?? { writes: [] }) as CardOnReader);
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  get card(): SimCard | null {
    return this.#card;
  }

  /** A card put on the reader (the one there before, if any, is taken off first). */
  place(card: SimCard): void {
    // Put in the field, a DESFire card powers up: what it held only while powered is gone.
    if (card.chip.type === 'desfire' && this.#card !== card) card.chip.powered = powerOn();
    this.#card = card;
    this.#presence += 1;
    card.at = this.name;
  }

  /** The card taken off the reader. */
  remove(): void {
    if (this.#card) this.#card.at = null;
    this.#card = null;
  }

  /** The card leaves the reader in the middle of an operation (its customer holds it). */
  pull(): void {
    const card = this.#card;
    if (!card) return;
    this.remove();
    this.onPulled(card);
  }

  #face(card: SimCard, trace: RequestTrace): WalletCard {
    if (card.chip.type === 'desfire') return this.#desfireFace(card, card.chip, trace);
    const chip = card.chip;
    const { rng } = this.#sched;
    const life = this.life;
    const presence = this.#presence;
    const here = () => this.#card === card && this.#presence === presence;
    const apdu = async () => {
      await this.#sched.sleep(rng.between(1, 15), life);
      if (here() && rng.chance(this.faults.pullOnApdu)) this.pull();
      if (!here()) throw errors.noCard();
    };
    // The UID answers without a key; the wallet sector needs one.
    const sector = async () => {
      await apdu();
      if (!this.opens(card)) throw errors.authenticationFail();
    };
    /**
     * One block written and read back, as CardSession's: its fate drawn when sent, where it
     * lands an event of the outside world (whatever becomes of the till meanwhile).
     */
    const writeBlock = async (target: 0 | 1 | 'spare', block: Buffer): Promise<WriteResult> => {
      try {
        await sector();
      } catch (error) {
        return { outcome: 'not-written', error: error as AppError };
      }
      const f = this.faults;
      const fate = rng.chance(f.pullBefore)
        ? 'pull-before'
        : rng.chance(f.pullAfter)
          ? 'pull-after'
          : rng.chance(f.tear)
            ? 'tear'
            : rng.chance(f.garble)
              ? 'garble'
              : rng.chance(f.unverified)
                ? 'unverified'
                : 'whole';
      // Sent: the block lands (or not) whatever becomes of the till meanwhile.
      this.onWriteSent();
      const answered = await new Promise<boolean>((resolve) => {
        this.#sched.at(
          rng.between(1, 10),
          () => {
            const present = here();
            if (present && fate !== 'pull-before') {
              if (target === 'spare') this.#landSpare(card, chip, block, fate, trace);
              else this.#land(card, chip, target, block, fate, trace);
              if (!life?.alive) this.onPath('landed-after-crash');
            }
            if (present && fate !== 'whole' && fate !== 'unverified') this.pull();
            const ok = present && (fate === 'whole' || fate === 'unverified');
            this.#sched.at(rng.between(1, 10), () => resolve(ok), life);
          },
          null,
        );
      });
      if (!answered) return { outcome: 'uncertain', error: errors.cardNotResponding() };
      try {
        await apdu();
      } catch (error) {
        return { outcome: 'uncertain', error: error as AppError };
      }
      const now = target === 'spare' ? chip.spare : chip.slots[target];
      return Buffer.compare(now, block) === 0
        ? { outcome: 'committed' }
        : { outcome: 'uncertain', error: errors.cardWriteUnverified() };
    };
    const face = classicWalletCard({
      cardId: card.uid,
      checkUid: apdu,
      readSlots: async () => {
        await sector();
        return [Buffer.from(chip.slots[0]), Buffer.from(chip.slots[1])];
      },
      // Both slots and the spare block in one read (CardSession reads the three blocks at once).
      readSector: async () => {
        await sector();
        return [Buffer.from(chip.slots[0]), Buffer.from(chip.slots[1]), Buffer.from(chip.spare)];
      },
      writeSlotBlock: (slot, block) => writeBlock(slot, block),
      writeSpare: (block) => writeBlock('spare', block),
    });
    const readSector = face.readSector as NonNullable<typeof face.readSector>;
    return {
      ...face,
      readWallet: async (tornProof) => {
        const [slot0, slot1, spare] = await readSector();
        const slots: [Buffer, Buffer] = [slot0, slot1];
        if (cardTruth(slots).kind === 'corrupt') {
          this.onPath(
            tornProof && tornFirstWrite(tornProof, slots)
              ? 'read-torn-proof-as-blank'
              : 'read-corrupt',
          );
        }
        const wallet = readClassicWallet(card.uid, slots, tornProof, spare);
        for (const shown of wallet.floatEvidence ?? []) this.onReferenceRead(shown.movementId);
        return wallet;
      },
      decide: async (intent) => {
        const decision = await face.decide(intent);
        this.onPath(
          decision.outcome === 'unknown'
            ? 'decided-unknown'
            : decision.outcome === 'committed'
              ? 'decided-committed'
              : decision.torn
                ? 'decided-torn-first-write'
                : 'decided-not-written',
        );
        return decision;
      },
    };
  }

  /**
   * A DESFire card's face: the production session, its APDUs executed by the virtual card after
   * virtual time. The reader answers GET UID itself. Any APDU may find the card gone; a
   * CommitTransaction is sent and lands (or not) as an event of the outside world.
   */
  #desfireFace(
    card: SimCard,
    chip: Extract<Chip, { type: 'desfire' }>,
    trace: RequestTrace,
  ): WalletCard {
    const { rng } = this.#sched;
    const life = this.life;
    const presence = this.#presence;
    const here = () => this.#card === card && this.#presence === presence;
    const transmit = async (apdu: Buffer): Promise<Buffer> => {
      await this.#sched.sleep(rng.between(1, 15), life);
      if (here() && rng.chance(this.faults.pullOnApdu)) {
        this.pull();
        this.onPath('desfire-pulled-at-command');
      }
      if (!here()) throw errors.noCard();
      if (apdu[0] === GET_UID) return Buffer.concat([chip.card.uid, Buffer.from([0x90, 0x00])]);
      if (apdu[1] === COMMIT_TRANSACTION) return this.#commit(card, chip, apdu, trace, here);
      const answer = chip.card.execute(chip.powered, apdu);
      // AUTHENTICATION_ERROR: the till's keys are not the card's (another shop's card).
      if (answer.readUInt16BE(answer.length - 2) === 0x91ae) {
        this.onPath('desfire-refused-other-keys');
      }
      return answer;
    };
    const session = new DesfireWalletSession(card.uid, transmit, this.desfireKeys(card.uid));
    return {
      cardId: session.cardId,
      checkUid: () => session.checkUid(),
      readWallet: () => session.readWallet(),
      write: (intent) => session.write(intent),
      decide: async (intent) => {
        const decision = await session.decide(intent);
        this.onPath(
          decision.outcome === 'unknown'
            ? 'desfire-decided-unknown'
            : decision.outcome === 'committed'
              ? 'desfire-decided-committed'
              : 'desfire-decided-not-written',
        );
        return decision;
      },
    };
  }

  /**
   * A CommitTransaction, once sent: the card leaves before it (the transaction is dropped with
   * the power), takes it and leaves before answering, or takes it and answers. A torn commit is
   * one of the first two (the card's anti-tearing makes it all or nothing).
   */
  async #commit(
    card: SimCard,
    chip: Extract<Chip, { type: 'desfire' }>,
    apdu: Buffer,
    trace: RequestTrace,
    here: () => boolean,
  ): Promise<Buffer> {
    const { rng } = this.#sched;
    const life = this.life;
    const f = this.faults;
    const torn = rng.chance(f.tear + f.garble);
    const fate =
      rng.chance(f.pullBefore) || (torn && rng.chance(0.5))
        ? 'pull-before'
        : rng.chance(f.pullAfter) || torn
          ? 'pull-after'
          : 'whole';
    this.onWriteSent();
    const answer = await new Promise<Buffer | undefined>((resolve) => {
      this.#sched.at(
        rng.between(1, 10),
        () => {
          const present = here();
          let answer: Buffer | undefined;
          if (present && fate !== 'pull-before') {
            const before = desfireTruth(chip.card);
            const pending = chip.powered.transaction.size > 0;
            answer = chip.card.execute(chip.powered, apdu);
            if (pending && answer.readUInt16BE(answer.length - 2) === 0x9100) {
              this.#landed(card, before, trace);
              this.onPath(life?.alive ? 'desfire-committed' : 'desfire-landed-after-crash');
            }
          }
          if (present && fate !== 'whole') {
            this.onPath(
              fate === 'pull-before'
                ? 'desfire-commit-pulled-before'
                : 'desfire-commit-pulled-after',
            );
            this.pull();
          }
          this.#sched.at(
            rng.between(1, 10),
            () => resolve(fate === 'whole' ? answer : undefined),
            life,
          );
        },
        null,
      );
    });
    if (!answer) throw errors.noCard();
    return answer;
  }

  /** A DESFire transaction committed: one whole write, as the outside world saw it. */
  #landed(card: SimCard, before: CardTruth, trace: RequestTrace): void {
    card.writtenAt.add(trace.shop ?? this.#shop());
    const write: LandedWrite = {
      till: this.name,
      cardId: card.uid,
      movementId: trace.movementId,
      how: 'whole',
      before,
      after: truthOf(card),
      at: this.#sched.time,
    };
    trace.writes.push(write);
    this.onLanded(write);
  }

  #land(
    card: SimCard,
    chip: Extract<Chip, { type: 'classic' }>,
    slot: 0 | 1,
    block: Buffer,
    fate: 'pull-after' | 'tear' | 'garble' | 'unverified' | 'whole',
    trace: RequestTrace,
  ): void {
    const { rng } = this.#sched;
    const before = cardTruth(chip.slots);
    const old = chip.slots[slot];
    chip.slots[slot] =
      fate === 'tear'
        ? Buffer.concat([block.subarray(0, 8), old.subarray(8)])
        : fate === 'garble' || fate === 'unverified'
          ? // Bits left partly erased or partly programmed.
            Buffer.from(
              block.map((byte, i) => (rng.chance(0.5) ? byte : byte & (old[i] as number))),
            )
          : Buffer.from(block);
    // What the card holds decides: a torn write may still have left the whole block.
    const how = chip.slots[slot].equals(block) ? 'whole' : fate === 'tear' ? 'half' : 'garbled';
    const after = cardTruth(chip.slots);
    card.writtenAt.add(trace.shop ?? this.#shop());
    if (
      how === 'whole' &&
      after.kind === 'valid' &&
      after.generation === 0 &&
      before.kind === 'valid' &&
      before.generation === 255
    ) {
      this.onPath('wrote-generation-wrap');
    }
    const write: LandedWrite = {
      till: this.name,
      cardId: card.uid,
      movementId: trace.movementId,
      how,
      before,
      after,
      at: this.#sched.time,
    };
    trace.writes.push(write);
    this.onLanded(write);
  }

  /**
   * A spare-block write that reached the card: a float recharge's reference, or 16 zero bytes
   * clearing one (docs/card-format.md section 6a). It moves no money, so it is no LandedWrite
   * (those are the slots' writes, whose before and after the invariants read): it is noted
   * (onReference), and what the card shows of float recharges is read from the card itself
   * (floatsShown).
   */
  #landSpare(
    card: SimCard,
    chip: Extract<Chip, { type: 'classic' }>,
    block: Buffer,
    fate: 'pull-after' | 'tear' | 'garble' | 'unverified' | 'whole',
    trace: RequestTrace,
  ): void {
    const { rng } = this.#sched;
    const old = chip.spare;
    chip.spare =
      fate === 'tear'
        ? Buffer.concat([block.subarray(0, 8), old.subarray(8)])
        : fate === 'garble' || fate === 'unverified'
          ? Buffer.from(
              block.map((byte, i) => (rng.chance(0.5) ? byte : byte & (old[i] as number))),
            )
          : Buffer.from(block);
    const how = chip.spare.equals(block) ? 'whole' : fate === 'tear' ? 'half' : 'garbled';
    const clears = block.every((byte) => byte === 0);
    this.onPath(
      how !== 'whole'
        ? 'classic-reference-torn'
        : clears
          ? 'classic-reference-cleared'
          : 'classic-reference-landed',
    );
    this.onReference({
      till: this.name,
      cardId: card.uid,
      movementId: trace.movementId,
      how,
      names: referenceIn(chip.spare),
      clears,
      at: this.#sched.time,
    });
  }
}

/**
 * A vending machine spends `price` offline. From a Classic card with key A: DECREMENT and
 * TRANSFER on the active slot (docs/card-security.md); the address byte, and so the generation,
 * stays. From a DESFire card with the card's key 2 (`machineKey`, section 9.6): GetValue, Debit,
 * CommitTransaction, the card leaving before the commit (`pulled`) keeping its value. A card that
 * holds less, or cannot be read, is refused. The price taken, or 0.
 */
export async function spendOffline(
  card: SimCard,
  price: number,
  machineKey: () => DesfireWalletKeys,
  pulled = false,
): Promise<number> {
  if (card.chip.type === 'desfire') {
    const chip = card.chip;
    // A machine's own field: the card powers up in it.
    chip.powered = powerOn();
    const machine = new DesfireClient({
      transmit: async (apdu) => {
        if (pulled && apdu[1] === COMMIT_TRANSACTION) throw errors.noCard();
        return chip.card.execute(chip.powered, apdu);
      },
    });
    try {
      await machine.selectApplication(DESFIRE_AID);
      await machine.authenticate(KEY_MACHINE, machineKey().own.machine);
      if ((await machine.getValue(VALUE_FILE, 'enciphered')) < price) return 0;
      await machine.debit(VALUE_FILE, price, 'enciphered');
      await machine.commitTransaction();
    } catch {
      return 0;
    } finally {
      chip.powered = powerOn();
    }
    card.spentOffline += price;
    return price;
  }
  const slots = card.chip.slots;
  const truth = cardTruth(slots);
  if (truth.kind !== 'valid' || truth.balance < price) return 0;
  const block = Buffer.from(slots[truth.active]);
  const value = truth.balance - price;
  block.writeInt32LE(value, 0);
  block.writeInt32LE(~value, 4);
  block.writeInt32LE(value, 8);
  slots[truth.active] = block;
  card.spentOffline += price;
  return price;
}
