/**
 * The card face: what the money engine needs of the card on the reader, whatever its type. The
 * wallet use cases read a balance, plan a write to another balance, write it and, when the
 * card left mid-write, decide later from the card what became of it. Everything that depends
 * on the card's format stays behind this face (MIFARE Classic: classic-wallet.ts; MIFARE DESFire:
 * desfire/desfire-wallet-session.ts and desfire/desfire-wallet-format.ts).
 *
 * A write is planned from `before`, the text a card's wallet reads as: it travels with the
 * movement to the ledger (`cardBefore`), so that any till can redo the plan from the ledger's
 * record and decide the write from the card alone (docs/cloud-api.md, "Tills").
 */
import type { CardRecord } from '../../common/ledger-contract.ts';
import type { AppError } from '../errors.ts';
import type { DesfireWriteIntent } from './desfire/desfire-wallet-format.ts';
import type { ClassicWriteIntent } from './wallet-format.ts';

/**
 * A planned write, JSON-serializable: the movement journal keeps it to decide the write on a
 * later tap. Every intent says the balance it writes (`value`) and what the card held
 * (`previousBalance`, null for a blank card).
 */
export type WriteIntent = ClassicWriteIntent | DesfireWriteIntent;

/** A float recharge a card shows (docs/card-format.md): its movement id and credits. */
export interface FloatEvidence {
  movementId: string;
  credits: number;
}

/** The wallet on a card as a movement starts from it. */
export interface CardWallet {
  cardId: string;
  balance: number;
  /** What the card holds, as text a movement carries (1 to 200 visible ASCII characters). */
  before: string;
  /**
   * Whether a float recharge can be written to this card with its evidence (MIFARE Classic: the
   * float reference; DESFire: a wallet with v2 movement records). Absent: it cannot.
   */
  carriesFloat?: boolean;
  /** The float recharges the card shows, newest first (absent or empty: none). */
  floatEvidence?: FloatEvidence[];
  /**
   * The card's newest movement record (a DESFire card that has one), which a movement carries
   * to the ledger (`cardRecord`) so that it can tell whether the record explains the card.
   */
  record?: CardRecord;
}

export type { CardRecord };

/**
 * Why a card read at a till is suspect (docs/card-security.md, DESFire): it holds more than
 * its newest movement record says (only a till raises a value, and each till write adds a
 * record), or its newest record names a movement that this till decided never landed (and
 * the ledger voided). The ledger flags both kinds too, and refuses such a card's payout.
 */
export type CardSuspicion = 'card-above-record' | 'record-of-voided-movement';

/** Whether the card holds more than its newest record says: credits no till wrote. */
export function isAboveRecord(wallet: CardWallet): boolean {
  return wallet.record !== undefined && wallet.balance > wallet.record.valueAfter;
}

/** How a card write ended: certainly on the card, certainly not, or not knowable now. */
export type WriteResult =
  | { outcome: 'committed' }
  | { outcome: 'not-written'; error: AppError }
  | { outcome: 'uncertain'; error: AppError };

/**
 * What a card shows of an earlier write. `torn` (not-written only): the card shows this very
 * write torn, which proves what it held before (Classic: a torn first write to a blank card).
 */
export type WriteDecision =
  { outcome: 'committed' } | { outcome: 'not-written'; torn?: boolean } | { outcome: 'unknown' };

export interface WalletCard {
  readonly cardId: string;
  /** Fails with NoCard unless the card on the reader is still this one. */
  checkUid(): Promise<void>;
  /**
   * The wallet on the card; CorruptCard when it cannot be read as one, unless `tornProof` (the
   * card's last write, which the journal saw torn) shows the card held nothing.
   */
  readWallet(tornProof?: WriteIntent): Promise<CardWallet>;
  /** Writes a planned write (the UID checked first) and reads it back. */
  write(intent: WriteIntent): Promise<WriteResult>;
  /** Reads the card and says what became of `intent`. */
  decide(intent: WriteIntent): Promise<WriteDecision>;
}

/** Whether a planned write is a DESFire card's (a Classic intent has no type, or 'classic'). */
export function isDesfireIntent(intent: WriteIntent): intent is DesfireWriteIntent {
  return intent.type === 'desfire';
}
