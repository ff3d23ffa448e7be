/**
 * The cloud ledger's contract v1 as both sides see it: the JSON shapes of its answers and the
 * error codes a client acts on. The ledger (cloud/) produces them, the worker's ledger client
 * (service/cloud/) reads them; neither imports the other, both import this.
 */
/**
 * A till's recharge and payout; and the movements of a card's own rules (docs/cloud-api.md,
 * "Lost cards, refunds and bonuses"): a cashier's undo of a recharge (refund), an operator's
 * correction applied on the card, a replacement picked up onto a new card, and a blocked card
 * emptied at a till (block-clear).
 */
export type MovementKind =
  'recharge' | 'discharge' | 'refund' | 'correction' | 'replacement' | 'block-clear';

/** A till's own recharge or payout, as against a movement of a card's own rules. */
export function isRechargeOrPayout(kind: MovementKind): kind is 'recharge' | 'discharge' {
  return kind === 'recharge' || kind === 'discharge';
}
export type MovementState = 'pending' | 'posted' | 'voided';

/** `GET /v1/customer`. */
export interface Customer {
  customerId: string;
  name: string;
  /** The pool: what the shop can still put on cards or give its tills' floats. */
  credits: number;
  creditCost: string;
  /** What the shop's open floats hold (absent from a ledger before floats). */
  floatCredits?: number;
  /** The shop's float settings (absent from a ledger before floats: no float). */
  float?: FloatSettings;
  /** The shop's card rules: undo window and bonus tiers (absent from an older ledger). */
  cards?: CardRules;
}

/**
 * One bonus tier: a recharge by amount paying at least `minAmount` gets `bonusCredits`, or
 * `bonusPercent` of the credits paid for (rounded down); the highest tier reached counts.
 */
export interface BonusTier {
  /** Euros, a decimal string with at most 2 decimals. */
  minAmount: string;
  bonusCredits?: number;
  /** A decimal string, more than 0 and at most 100, at most 2 decimals. */
  bonusPercent?: string;
}

/** How a payout spends a card's bonus credits: before its paid credits (the default) or after. */
export type BonusSpend = 'bonus-first' | 'bonus-last';

/** A shop's card rules (docs/cloud-api.md, "Lost cards, refunds and bonuses"). */
export interface CardRules {
  /** How long after a recharge, by the till's clock, its cashier may undo it; 0: never. */
  undoWindowSeconds: number;
  /** The bonus tiers, lowest first; none: no bonus (the default). */
  bonusTiers: BonusTier[];
  bonusSpend: BonusSpend;
}

/** The card types a float may recharge (docs/card-format.md). */
export type CardType = 'classic' | 'desfire';

/** A shop's float settings, as its operator sets them (docs/cloud-api.md, "Till floats"). */
export interface FloatSettings {
  /** What a full float holds; 0: the shop gives its tills no float. */
  size: number;
  /** A till tops its float up when it holds less than this. */
  lowWater: number;
  /** The most one recharge may take from the float while its till is offline; null: any. */
  offlineCap: number | null;
  /** How long a till may sell from its float without reaching the ledger, in seconds. */
  offlineLimitSeconds: number;
  cardTypes: CardType[];
}

/** A movement as every `/v1/movements` call answers it. */
export interface Movement {
  id: string;
  kind: MovementKind;
  cardId: string;
  state: MovementState;
  credits: number;
  amount: string;
  creditCost: string;
  customerCredits: number;
  createdAt: string;
  resolvedAt: string | null;
  /** The till that made it (null: made before tills were named). */
  tillId: string | null;
  /** What the card held when its write was planned (the till's card format), or null. */
  cardBefore: string | null;
  /** The movement whose disagreement with its card this one sets right, or null. */
  compensates: string | null;
  /** The till that posted or voided it, when it said so. */
  resolvedByTill: string | null;
  /** The evidence an operator gave to resolve another till's movement, or null. */
  evidence: string | null;
  /**
   * True while an operator's post or void made without the card (no till) waits for a till to
   * read the card: the card is held (CardMovementPending) until a till confirms the operator's
   * word from the card or compensates it (docs/cloud-api.md, "Tills").
   */
  awaitsCard: boolean;
  /** What the card showed when a till confirmed an operator's word from it, or null. */
  cardEvidence: string | null;
  /**
   * When a posted movement happened by its till's clock (the card write proven: the post's
   * `occurredAt`, else the ledger's time of the post); null unless posted. Day reports count a
   * shop's local day of it; `resolvedAt` is the ledger's own time.
   */
  occurredAt: string | null;
  /** A float recharge's float (null: a movement of the pool; absent from older ledgers). */
  floatId?: string | null;
  /** How a float recharge came to the ledger: its till's report, found on its card, an operator's. */
  reportedAs?: 'till' | 'found' | 'operator' | null;
  /** What a float recharge's report was flagged with (FloatReportFlag). */
  reportFlags?: string[];
  /** The POS's reference of the sale (the worker's `Pos-Reference`), or null. */
  reference: string | null;
  /**
   * Of `credits`, the bonus: a recharge's bonus given, a payout's, refund's or correction's
   * bonus taken back (forfeited by a payout), a replacement's bonus carried. 0 without tiers.
   */
  bonusCredits?: number;
  /** A refund's or correction's recharge, or null. */
  refunds?: string | null;
  /** The card change a replacement or correction applies, or null. */
  applies?: string | null;
}

/**
 * `POST /v1/movements`: the caller picks the id (the idempotency key, so every call is safe to
 * repeat); exactly one of credits and amount.
 */
export interface MovementRequest {
  id: string;
  kind: MovementKind;
  cardId: string;
  credits?: number;
  /** Euros, a decimal string with at most 2 decimals; recharge only. */
  amount?: string;
  /**
   * Recharge only, optional: what the card held before this recharge, as the till read it. A
   * card holding more than its account plus its pending movements is flagged
   * `card-above-account`; with `refuseAboveAccount`, the recharge is then refused
   * (CardAccountExceeded) and nothing is reserved. Not part of the movement's identity.
   */
  cardCredits?: number;
  refuseAboveAccount?: boolean;
  /**
   * Optional: the card's newest movement record as the till read it (a MIFARE DESFire card;
   * none on a card without records). The ledger flags the card `card-above-record` when what
   * it holds (`cardCredits`; a discharge's `credits`) is above the record's `valueAfter`, and
   * `record-of-voided-movement` when the record names a movement of this shop and card that the
   * ledger voided with no compensation to explain the card; a discharge of such a card is
   * refused (CardRecordMismatch). Not part of the movement's identity; ignored by a
   * compensating movement.
   */
  cardRecord?: CardRecord;
  /**
   * The till making it (a UUID the till keeps for good). Part of the movement's identity. A
   * card with another till's movement pending at this shop is refused (CardMovementPending):
   * that movement's card write may still have to be decided on the card.
   */
  tillId?: string;
  /**
   * What the card held when the write was planned, in the till's card format (1 to 200
   * visible ASCII characters; opaque to the ledger): with the movement's kind and credits, any
   * till can tell from the card whether the write landed. Not part of the identity.
   */
  cardBefore?: string;
  /**
   * The id of an earlier movement of this shop and card that the ledger resolved against what
   * the card shows: this movement sets the books right (no card write goes with it). Refused
   * ones (NoCredits, CardAccountExceeded, CardChangeTaken) flag the card
   * `compensation-refused`. A refund, correction, replacement or block-clear is compensated by
   * one of its own kind, with `tillId` and no other field of its kind (`credits`, if given, its
   * own): the ledger redoes a voided one and undoes a posted one (docs/cloud-api.md, "Tills").
   */
  compensates?: string;
  /** A refund: this till's recharge it undoes (part of the identity). */
  refunds?: string;
  /** A replacement or correction: the card change it applies (part of the identity). */
  applies?: string;
  /** A refund: now, by the till's clock (the undo window counts by it). */
  tillTime?: string;
  /**
   * The POS's reference of the sale (1 to 80 printable ASCII characters, no space at either
   * end), kept with the movement and listed by `GET /v1/movements?reference=`. Not part of the
   * identity: a till sends the same one with every try of an id.
   */
  reference?: string;
}

/** A POS reference's form, for both sides: 1 to 80 printable ASCII, no space at either end. */
export const REFERENCE_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,78}[\x21-\x7e])?$/;

/**
 * A card's newest movement record (docs/card-format.md section 9.4): every till write adds one
 * in the same transaction as the value change, so only a till's record explains a card's value.
 */
export interface CardRecord {
  /** The card's till write counter: 1 for the first till write, then one more each. */
  counter: number;
  /** The movement it names: its 16 bytes as a UUID (lowercase). */
  movementId: string;
  /** The value the till left on the card with it. */
  valueAfter: number;
}

/**
 * The optional body of `POST /v1/movements/{id}/post` and `/void`: the till resolving it, and
 * the evidence when that is not the till that made it (an operator's decision, from the card
 * or otherwise). Without evidence, another till's movement is refused (MovementOfAnotherTill).
 */
export interface ResolveRequest {
  tillId?: string;
  evidence?: string;
  /**
   * A post's time by the till's clock: when the card write was proven (an ISO 8601 timestamp).
   * Not part of the identity; ignored by a void.
   */
  occurredAt?: string;
}

/** How many movements, and their credits. */
export interface Tally {
  count: number;
  credits: number;
}

/**
 * A till's float (`/v1/floats`): a slice of the shop's pool the till recharges cards from
 * without asking the ledger, and the movement ids it hands out (docs/cloud-api.md, "Till floats").
 */
export interface Float {
  id: string;
  tillId: string;
  state: 'open' | 'closed';
  /** What the float holds as the ledger counts it (its till's unreported recharges not known). */
  credits: number;
  /** Moved into it from the pool, in all. */
  granted: number;
  /** The first 6 bytes of its movement ids (hex): see floatMovementId (common/float-ids.ts). */
  idPrefix: string;
  /** Its movement ids are the sequence numbers 1 to this. */
  idsIssued: number;
  openedAt: string;
  closedAt: string | null;
  closedBy: 'till' | 'operator' | null;
  /** Back to the pool at close. */
  returned: number;
  /** Written off at close (less what movements reported afterwards took back). */
  writtenOff: number;
  writeOffReason: string | null;
  /** What movements took beyond the float (an open float too low, a closed float's write-off spent). */
  overdrawn: number;
  /** When its till last reported. */
  lastReportAt: string | null;
  /** Its recharges on cards, told by its till (or an operator's final report). */
  reported: Tally;
  /** Its recharges found on cards by other tills. */
  found: Tally;
  /** Card writes its till could not prove, waiting for their card. */
  undecided: Tally;
  /** Ids its till used for writes that did not land. */
  notWritten: number;
  /** Ids handed out that nothing names yet: sold and unreported, or not used. */
  unaccountedIds: number;
}

/** `POST /v1/floats`: the till's float; the request id makes it idempotent. */
export interface OpenFloatRequest {
  tillId: string;
  requestId: string;
  /** Movement ids to hand out with it (default 100, at most 1000). */
  ids?: number;
}

/** `POST /v1/floats/{id}/topups`: idempotent by `id`. */
export interface FloatTopUpRequest {
  id: string;
  /** What the till asks for; the ledger grants at most what keeps the float within its size. */
  credits: number;
  /** More movement ids to hand out (default 0, at most 1000). */
  ids?: number;
  tillId?: string;
}

/** The answer of a top-up: what it granted, and the float as it is now. */
export interface FloatTopUpAnswer {
  topUp: { id: string; requested: number; granted: number; ids: number; at: string };
  float: Float;
}

/** What a till knows of a float movement's card write. */
export type FloatCardWrite = 'written' | 'not-written' | 'undecided';

/** One movement of a float report (`POST /v1/float-reports`). */
export interface FloatMovementReport {
  /** A movement id its float handed out. */
  id: string;
  cardId: string;
  credits: number;
  card: FloatCardWrite;
  /** The credit cost the till sold at (absent when found on a card: today's is taken). */
  creditCost?: string;
  /** When the card write was proven, by the till's clock. */
  occurredAt?: string;
  /** What the card held when the write was planned (as `MovementRequest.cardBefore`). */
  cardBefore?: string;
  /** Found on the card by a till that is not the float's (`card` is then 'written'). */
  found?: boolean;
  /** Of `credits`, the bonus the till gave by the tiers it last learnt (default 0). */
  bonusCredits?: number;
  /** The POS's reference of the sale (as `MovementRequest.reference`), kept with the movement. */
  reference?: string;
}

export interface FloatReportRequest {
  /** The reporting till. */
  tillId: string;
  movements: FloatMovementReport[];
}

export type FloatReportFlag =
  | 'forged-id'
  | 'conflict'
  | 'other-till'
  | 'other-shop'
  | 'float-closed'
  | 'beyond-float'
  | 'key-revoked'
  | 'cost-estimated'
  /** The card was blocked when reported (sold offline before the till learnt of the block). */
  | 'card-blocked'
  /** More bonus than the shop's tiers give now (they may have changed since the sale). */
  | 'bonus-above-tiers';

/** Each movement's answer: recorded now, known already, or refused (nothing recorded). */
export interface FloatReportResult {
  id: string;
  outcome: 'recorded' | 'known' | 'refused';
  state?: MovementState;
  flags: FloatReportFlag[];
  detail?: string;
}

export interface FloatReportAnswer {
  results: FloatReportResult[];
}

/** `POST /v1/floats/{id}/close` by its till: the final report, then the rest to the pool. */
export interface CloseFloatRequest {
  tillId: string;
  movements?: FloatMovementReport[];
}

export interface FloatClosing {
  /** False when it was closed already (nothing changed now). */
  closed: boolean;
  results: FloatReportResult[];
  float: Float;
}

/** `GET /v1/tills`, `GET /v1/tills/{tillId}`: a till the shop has heard from, and its float. */
export interface Till {
  tillId: string;
  firstSeenAt: string;
  lastReportAt: string | null;
  /** Its open float, or null. */
  float: Float | null;
}

/**
 * Why a card is suspect: each refused overdraw, each recharge of a card that held more than its
 * account, each movement of a card its newest record does not explain, and legacy overdraws
 * found by migration 3.
 */
export type CardFlagKind =
  | 'discharge-exceeds-account'
  | 'card-above-account'
  | 'overdrawn-before-accounts'
  /** A compensating movement the ledger refused: the card and the books disagree. */
  | 'compensation-refused'
  /** The card held more than its newest movement record says: credits no till wrote. */
  | 'card-above-record'
  /**
   * The card's newest record names a movement the ledger voided, and nothing (no compensation,
   * no operator's word awaiting the card) explains the card holding it: credits nobody paid for.
   */
  | 'record-of-voided-movement'
  /** A float recharge reported with an id no float of the shop handed out. */
  | 'forged-float-movement';

export interface CardFlag {
  kind: CardFlagKind;
  /** The discharge or recharge that raised it. */
  movementId: string | null;
  /** The credits the discharge asked for; for `card-above-account`, what the card held. */
  requestedCredits: number | null;
  /** What the card's account held then (negative: the overdraw written off by migration 3). */
  accountCredits: number | null;
  /** For the two record flags: the card's newest record as the till read it; else null. */
  record: CardRecord | null;
  createdAt: string;
}

/**
 * `GET /v1/cards/{cardId}`: what the key's shop has put on one card. `credits` is what a
 * discharge may still take: imported + posted recharges - posted discharges - pending
 * discharges. A card the shop never moved has an account of 0.
 */
export interface CardAccount {
  cardId: string;
  credits: number;
  /** Of `credits`, bonus credits (absent from an older ledger: 0). */
  bonusCredits?: number;
  /** The euros paid for the other credits, a decimal string. */
  paidAmount?: string;
  /** The card's open block, or null. */
  blocked?: CardBlock | null;
  /** Card changes of this card (waiting for it, made from it, done), newest first. */
  changes?: CardChange[];
  /** The card's holder label (a name or phone number the shop put on it), or null. */
  holderLabel?: string | null;
  /** The balance imported for this card (`card-wallet-cloud card import`), or null. */
  importedCredits: number | null;
  /** True once any flag was raised; the flags say why. */
  suspect: boolean;
  flags: CardFlag[];
  /** This shop's movements of this card, newest first (at most 100). */
  movements: Movement[];
}

/** A till's card reader as the tray reports it (the heartbeat's `reader`). */
export interface TillReader {
  /**
   * `ready`: a reader is attached and PC/SC answers; `no-reader`: PC/SC answers, no contactless
   * reader is attached; `unavailable`: PC/SC cannot be used (`problem` says why); `stopped`:
   * the till's reader manager is not running (starting or stopping).
   */
  state: 'ready' | 'no-reader' | 'unavailable' | 'stopped';
  /** The reader in use, as PC/SC names it, or null. */
  name: string | null;
  /** Why PC/SC cannot be used, as the tray's codes say it (`service-stopped`, ...), or null. */
  problem: string | null;
}

/**
 * What a till's float holds by its own journal, in a heartbeat. Optional: the till float
 * (pool -> float, recharges paid from it and reported later) fills it; a till without a float
 * leaves it out or sends null.
 */
export interface TillFloatReport {
  /** Credits left in the float by the till's journal. */
  credits: number;
  /** Float recharges the till has sold and not yet reported to the ledger, and their credits. */
  unreportedMovements: number;
  unreportedCredits: number;
  /** Since when the till sells offline (its last ledger call failed), or null. */
  offlineSince: string | null;
}

/** `POST /v1/tills/{tillId}/heartbeat`: a till's state, every minute and on each change. */
export interface TillHeartbeat {
  /** The worker's version. */
  version: string;
  reader: TillReader;
  /** This till's movements the ledger has not confirmed yet (its outbox and undecided writes). */
  pendingMovements: number;
  /** Movements pending at the ledger until their card is presented again. */
  waitingMovements: number;
  float?: TillFloatReport | null;
}

/** A till as the ledger knows it: the heartbeat's answer, and the back office's tills. */
export interface TillState {
  tillId: string;
  /** The name the shop's owner gave it ("front counter"), or null. */
  name: string | null;
  firstSeenAt: string;
  /** Its last heartbeat, or null when it never sent one. */
  lastSeenAt: string | null;
  version: string | null;
  reader: TillReader | null;
  pendingMovements: number | null;
  waitingMovements: number | null;
  float: TillFloatReport | null;
}

/** A card's block: since when, by whom (`key:`, `cli:`, an operator) and why. */
export interface CardBlock {
  since: string;
  by: string;
  reason: string;
}

/**
 * What waits for a card until a till's next POST with it applies it (docs/cloud-api.md,
 * "Replacements"): a replacement (`fromCard`'s account onto `cardId`) or an operator's
 * correction (up to `credits` of recharge `corrects` taken back).
 */
export interface CardChange {
  id: string;
  kind: 'replacement' | 'correction';
  cardId: string;
  fromCard: string | null;
  corrects: string | null;
  credits: number;
  bonusCredits: number;
  paidAmount: string;
  state: 'waiting' | 'applied' | 'cancelled';
  reason: string;
  by: string;
  createdAt: string;
  resolvedAt: string | null;
  cancelledBy: string | null;
  cancelReason: string | null;
  /** The movement that applied it, or is applying it (pending), or null. */
  movementId: string | null;
}

/** `GET /v1/card-list`: what a till polls (with its ETag) to learn blocks and waiting changes. */
export interface CardList {
  /** Moves on with every block, unblock and card change: the ETag. */
  seq: number;
  changedAt: string | null;
  blocked: { cardId: string; since: string }[];
  waiting: Pick<CardChange, 'id' | 'kind' | 'cardId' | 'credits' | 'bonusCredits'>[];
  /**
   * Cards the ledger holds for a movement an operator posted or voided without them
   * (`awaitsCard`): a till reads such a card online before it writes it (its float does not sell
   * to it). A ledger before it sends none.
   */
  held?: { cardId: string; movementId: string; state: 'posted' | 'voided' }[];
}

/** `PUT` and `DELETE /v1/cards/{cardId}/holder`: the card's holder label after the call. */
export interface HolderLabelAnswer {
  changed: boolean;
  cardId: string;
  holderLabel: string | null;
}

/** `POST /v1/cards/{cardId}/block` and `/unblock`: the card's block after the call. */
export interface CardBlockAnswer {
  /** False when it was blocked (or not) already: nothing changed. */
  changed: boolean;
  cardId: string;
  blocked: CardBlock | null;
  seq: number;
}

/** `POST /v1/cards/{cardId}/replace`, `/corrections`, `POST /v1/card-changes/{id}/cancel`. */
export interface CardChangeAnswer {
  /** False when the same request was answered before (or the change was cancelled already). */
  changed: boolean;
  change: CardChange;
}

/** `GET /v1/bonus-quote?amount=`: what an amount buys now, before paying. */
export interface BonusQuote {
  amount: string;
  /** The credits paid for: floor(amount / creditCost). */
  paidCredits: number;
  bonusCredits: number;
  /** What a recharge by this amount charges: paidCredits x creditCost. */
  rechargeAmount: string;
  creditCost: string;
}

/** The error codes of contract v1 (`{ "error": code }`) with their HTTP statuses. */
export const ledgerErrorCodes = {
  missingApiKey: { code: 'Unauthorized: missing api key', status: 401 },
  invalidApiKey: { code: 'Unauthorized: invalid api key', status: 401 },
  keyNotAssigned: { code: 'KeyNotAssigned', status: 403 },
  invalidMovement: { code: 'InvalidMovement', status: 400 },
  amountBelowOneCredit: { code: 'AmountBelowOneCredit', status: 422 },
  noCredits: { code: 'NoCredits', status: 422 },
  /** A discharge for more than the card's account at this shop; the card is flagged suspect. */
  cardAccountExceeded: { code: 'CardAccountExceeded', status: 422 },
  /**
   * A discharge of a card whose newest movement record does not explain it (`cardRecord`:
   * above the record, or the record names a voided movement); the card is flagged suspect.
   */
  cardRecordMismatch: { code: 'CardRecordMismatch', status: 422 },
  invalidCardId: { code: 'InvalidCardId', status: 400 },
  movementIdConflict: { code: 'MovementIdConflict', status: 409 },
  movementNotFound: { code: 'MovementNotFound', status: 404 },
  movementAlreadyVoided: { code: 'MovementAlreadyVoided', status: 409 },
  movementAlreadyPosted: { code: 'MovementAlreadyPosted', status: 409 },
  /** Another till's movement of this card is pending: decide it first (at that till). */
  cardMovementPending: { code: 'CardMovementPending', status: 409 },
  /** A till resolving a movement another till made, without evidence. */
  movementOfAnotherTill: { code: 'MovementOfAnotherTill', status: 409 },
  /** `compensates` names no resolved movement of this shop and card. */
  invalidCompensation: { code: 'InvalidCompensation', status: 422 },
  /**
   * The create was planned from the card state its card's latest posted movement was planned
   * from: that write landed, so the card left the state (a create that came late).
   */
  cardStateMovedOn: { code: 'CardStateMovedOn', status: 409 },
  /** `compensates` names a movement another compensation already set right. */
  movementCompensated: { code: 'MovementCompensated', status: 409 },
  /**
   * The card may carry float recharges that are not all reported (a till sold them offline):
   * nothing is decided on it until they are, or the float is closed.
   */
  floatReportPending: { code: 'FloatReportPending', status: 409 },
  /** The shop's float size is 0: its tills get no float. */
  floatsOff: { code: 'FloatsOff', status: 409 },
  /** The till holds an open float already (another open request made it). */
  floatOpen: { code: 'FloatOpen', status: 409 },
  floatNotFound: { code: 'FloatNotFound', status: 404 },
  floatClosed: { code: 'FloatClosed', status: 409 },
  /** A till topping up or closing another till's float. */
  floatOfAnotherTill: { code: 'FloatOfAnotherTill', status: 409 },
  /** An open request or top-up id used again for something else. */
  floatRequestConflict: { code: 'FloatRequestConflict', status: 409 },
  topUpConflict: { code: 'TopUpConflict', status: 409 },
  invalidReport: { code: 'InvalidReport', status: 400 },
  /** The card is blocked at this shop: it moves no credits (a block-clear empties it). */
  cardBlocked: { code: 'CardBlocked', status: 409 },
  /** A block-clear or a replacement of a card that is not blocked. */
  cardNotBlocked: { code: 'CardNotBlocked', status: 409 },
  /** A card change waits for the card: the till applies it first. */
  cardChangeWaiting: { code: 'CardChangeWaiting', status: 409 },
  /** The card change is applied (or being applied) by another movement, or was cancelled. */
  cardChangeTaken: { code: 'CardChangeTaken', status: 409 },
  /** A card change's id used again for another change. */
  cardChangeConflict: { code: 'CardChangeConflict', status: 409 },
  cardChangeNotFound: { code: 'CardChangeNotFound', status: 404 },
  /** `applies` names no change of this kind waiting for this card. */
  invalidCardChange: { code: 'InvalidCardChange', status: 422 },
  /** `refunds` (or a correction's recharge) is no posted recharge of this shop and card. */
  invalidRefund: { code: 'InvalidRefund', status: 422 },
  /** The recharge was undone already. */
  alreadyRefunded: { code: 'AlreadyRefunded', status: 409 },
  /** The recharge is no longer its card's newest write. */
  undoNotNewest: { code: 'UndoNotNewest', status: 409 },
  /** The recharge is older than the shop's undo window by the till's clock (or undo is off). */
  undoWindowPassed: { code: 'UndoWindowPassed', status: 409 },
  /** The card holds nothing of the recharge, or a correction asks for more than is left. */
  nothingToRefund: { code: 'NothingToRefund', status: 422 },
  /** A replacement of a card whose account is 0. */
  nothingToReplace: { code: 'NothingToReplace', status: 422 },
  notFound: { code: 'NotFound', status: 404 },
  invalidRequest: { code: 'InvalidRequest', status: 400 },
  invalidQuery: { code: 'InvalidQuery', status: 400 },
  /** A till heartbeat's body is not one (`detail` names the field). */
  invalidHeartbeat: { code: 'InvalidHeartbeat', status: 400 },
  payloadTooLarge: { code: 'PayloadTooLarge', status: 413 },
  unsupportedMediaType: { code: 'UnsupportedMediaType', status: 415 },
  tooManyRequests: { code: 'TooManyRequests', status: 429 },
  databaseUnavailable: { code: 'DatabaseUnavailable', status: 503 },
} as const;

export type LedgerErrorCode = (typeof ledgerErrorCodes)[keyof typeof ledgerErrorCodes]['code'];
