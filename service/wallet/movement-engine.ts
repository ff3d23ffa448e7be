import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import type { WalletRead } from '../card/card-session.ts';
import {
  decideWrite,
  decodeSlot,
  decodeWallet,
  type PlannedWrite,
  type WriteIntent,
} from '../card/wallet-format.ts';
import {
  LedgerRefusal,
  type LedgerClient,
  type LedgerMovement,
  type NewMovement,
} from '../cloud/ledger-client.ts';
import { AppError, errors } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { WalletCard } from './card-access.ts';
import { systemClock, type Clock } from './clock.ts';
import type { KeyRing } from './key-ring.ts';
import type { MovementJournal } from './movement-journal.ts';
import {
  ANSWER_RETENTION_MS,
  phaseOf,
  type Idempotency,
  type Movement,
  type MovementKind,
} from './movement-journal.ts';
import { Outbox } from './outbox.ts';
import {
  decidePending,
  ReconcileSchedule,
  RECONCILE_EVERY_MS,
  UNKNOWN_PENDING_GRACE_MS,
} from './reconciliation.ts';

/** The ledger calls the engine makes (the LedgerClient, or the simulation's ledger). */
export type MovementLedger = Pick<
  LedgerClient,
  'createMovement' | 'postMovement' | 'voidMovement' | 'listPendingMovements'
>;

export interface MovementEngineOptions {
  journal: MovementJournal;
  ledger: MovementLedger;
  /** The keys movements are made and resolved with (each with the key that made it). */
  keys: KeyRing;
  log: Logger;
  clock?: Clock;
  newId?: () => string;
  /** First retry delay of the outbox; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  reconcileEveryMs?: number;
  unknownPendingGraceMs?: number;
  /**
   * Whether the caller's answer waits for the ledger's post (true), or comes once the card's
   * read-back proves the write (default), the post following in the background, and through
   * the outbox if the ledger does not acknowledge it.
   */
  postBeforeAnswer?: boolean;
}

export interface MovementEngineEvents {
  /** The number of movements the ledger has not yet confirmed changed. */
  unconfirmed: [number];
  /** Reconciliation found other movements pending at the ledger until their card is seen. */
  waitingForCard: [readonly WaitingMovement[]];
}

/** The spec's 200 bodies of the two card-writing endpoints. */
export type RechargeAnswer = { cardId: string; credits: number; rechargeAmount: number };
export type DischargeAnswer = {
  cardId: string;
  dischargedCredits: number;
  dischargedAmount: number;
};

/** What the caller is told for a movement that landed on the card. */
export function answerOf(movement: Movement): RechargeAnswer | DischargeAnswer {
  const reserved = movement.reserved;
  if (!reserved) throw new Error(`movement ${movement.id} has no reservation`);
  // The ledger's amounts are exact decimal strings; JSON carries them as numbers (spec).
  const amount = Number(reserved.amount);
  return movement.kind === 'recharge'
    ? { cardId: movement.cardId, credits: reserved.intent.value, rechargeAmount: amount }
    : { cardId: movement.cardId, dischargedCredits: reserved.credits, dischargedAmount: amount };
}

/** A movement reserved at the ledger and owned by the running request, ready to commit. */
export interface Reservation {
  readonly movement: Movement;
  readonly ledger: LedgerMovement;
  readonly plan: PlannedWrite;
}

export interface ReserveInput {
  kind: MovementKind;
  keyFingerprint: string;
  idempotency: Idempotency | undefined;
  request: Omit<NewMovement, 'id' | 'kind' | 'cardId'>;
  /** Plans the card write for the credits the ledger granted (throws to refuse them). */
  planFor: (credits: number) => PlannedWrite;
}

/** A movement waiting for its card, for operators (the status and a log line). */
export interface WaitingMovement {
  id: string;
  kind: MovementKind;
  cardId: string;
  credits: number;
  since: string;
}

/**
 * The two-phase money movement (docs/integrators.md, "Recharge" and "Discharge"). Its face is
 * the protocol: reserve() journals the start and asks the ledger for the pending movement;
 * commit() writes the card, records the answer and posts. Each step is journaled durably before
 * the next happens; whatever a crash, a pulled card or a silent ledger leaves half done is
 * finished later, exactly once: a write that certainly did not happen is voided; one that did
 * is posted; one that may have is decided by the card itself the next time it is seen.
 *
 * A movement a running request owns (from reserve() to the end of commit()) is resolved by
 * that request only: the outbox and reconciliation leave it alone. Every movement is resolved
 * with the key of the shop that made it.
 */
export class MovementEngine extends EventEmitter<MovementEngineEvents> {
  readonly #journal: MovementJournal;
  readonly #ledger: MovementLedger;
  readonly #keys: KeyRing;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #graceMs: number;
  readonly #postBeforeAnswer: boolean;
  /** Idempotency-Key scopes of running requests. */
  readonly #runningScopes = new Set<string>();
  /** Movement ids owned by running requests, with the fingerprint of the key each is made with. */
  readonly #owned = new Map<string, string>();
  /** Movement ids whose post or void is on its way to the ledger (one call at a time). */
  readonly #resolving = new Set<string>();
  /** Unknown pending movements at the ledger, by id: when this worker first saw each. */
  readonly #unknownSeen = new Map<string, number>();
  readonly #outbox: Outbox;
  readonly #reconcile: ReconcileSchedule;
  #waiting: WaitingMovement[] = [];

  constructor(options: MovementEngineOptions) {
    super();
    this.#journal = options.journal;
    this.#ledger = options.ledger;
    this.#keys = options.keys;
    this.#log = options.log;
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? randomUUID;
    this.#graceMs = options.unknownPendingGraceMs ?? UNKNOWN_PENDING_GRACE_MS;
    this.#postBeforeAnswer = options.postBeforeAnswer ?? false;
    this.#outbox = new Outbox({
      clock: this.#clock,
      drain: () => this.#drainOutbox(),
      retryMs: options.retryMs ?? 1_000,
      maxRetryMs: options.maxRetryMs ?? 60_000,
    });
    this.#reconcile = new ReconcileSchedule(
      this.#clock,
      options.reconcileEveryMs ?? RECONCILE_EVERY_MS,
      () => this.reconcile(),
    );
  }

  /** Movements the ledger has not confirmed yet (posted or voided), for the tray. */
  get unconfirmed(): number {
    let count = 0;
    for (const movement of this.#journal.movements.values()) {
      if (phaseOf(movement) !== 'done') count += 1;
    }
    return count;
  }

  /** Cards holding a write whose outcome is not known yet. */
  get uncertainCards(): Set<string> {
    const cards = new Set<string>();
    for (const movement of this.#journal.movements.values()) {
      if (phaseOf(movement) === 'uncertain' && !this.#owned.has(movement.id))
        cards.add(movement.cardId);
    }
    return cards;
  }

  /** Pending at the ledger and waiting for their card, as of the last reconciliation. */
  get waitingForCard(): readonly WaitingMovement[] {
    return this.#waiting;
  }

  /** Starts the outbox and reconciliation for what the journal and the ledger hold. */
  start(): void {
    this.#outbox.kick(0);
    this.#reconcile.soon();
  }

  /** Reconciles soon, e.g. when the ledger answers again after an outage. */
  reconcileSoon(): void {
    this.#reconcile.soon();
  }

  async close(): Promise<void> {
    await this.#reconcile.close();
    await this.#outbox.close();
  }

  /**
   * The operator replaced `apiKey`: it is kept (in memory, never in the journal) until the
   * movements made with it are resolved, then released (KeyRing "released").
   */
  retireKey(apiKey: string): void {
    this.#keys.retire(apiKey, (print) => this.#keyInUse(print));
    this.#outbox.kick(0);
  }

  /**
   * Runs a request under an Idempotency-Key (when given): a repeat with another body is 422;
   * a repeat while the first still runs is 409. The replay of a finished first attempt is
   * decided on the card (see replay()). Failures are not replayed: nothing moved.
   */
  async idempotent<T>(
    idempotency: Idempotency | undefined,
    run: (idempotency: Idempotency | undefined) => Promise<T>,
  ): Promise<T> {
    if (!idempotency) return run(undefined);
    if (this.#runningScopes.has(idempotency.scope)) throw errors.idempotencyKeyInUse();
    const earlier = this.#latestFor(idempotency.scope);
    if (earlier?.idempotency && earlier.idempotency.requestHash !== idempotency.requestHash) {
      throw errors.idempotencyKeyReused();
    }
    this.#runningScopes.add(idempotency.scope);
    try {
      return await run(idempotency);
    } finally {
      this.#runningScopes.delete(idempotency.scope);
    }
  }

  /**
   * For a request under an Idempotency-Key, once the card is on the reader (after settle()):
   * the first attempt's answer when it landed, without touching the card. The answer belongs
   * to one card: with another card on the reader it is IdempotencyKeyOtherCard, and an
   * earlier attempt still undecided on another card is MovementUnsettled.
   */
  replay<T>(idempotency: Idempotency | undefined, cardId: string): T | undefined {
    if (!idempotency) return undefined;
    const earlier = this.#latestFor(idempotency.scope);
    if (!earlier) return undefined;
    const phase = phaseOf(earlier);
    if (phase === 'uncertain' && earlier.cardId !== cardId) throw errors.movementUnsettled();
    const answer = earlier.answer;
    if (!answer || this.#clock.now() - Date.parse(answer.at) >= ANSWER_RETENTION_MS) {
      return undefined;
    }
    if (earlier.cardId !== cardId) throw errors.idempotencyKeyOtherCard();
    return answer.body as T;
  }

  /**
   * Decides every earlier uncertain write on `card` by what it holds, then posts or voids it.
   * Called before any new movement on a card, and when a card with an uncertain write is
   * presented. The UID is checked first, as before every write. A write the card cannot
   * decide stops new writes to it.
   */
  async settle(card: WalletCard): Promise<void> {
    const uncertain = [...this.#journal.movements.values()].filter(
      (movement) =>
        movement.cardId === card.cardId &&
        phaseOf(movement) === 'uncertain' &&
        !this.#owned.has(movement.id),
    );
    if (uncertain.length === 0) return;
    await card.checkUid();
    const [slot0, slot1] = await card.readSlots();
    for (const movement of uncertain) {
      const intent = movement.reserved?.intent;
      if (!intent) continue;
      const outcome = decideWrite(intent, slot0, slot1);
      if (outcome === 'unknown') {
        this.#log.error(
          `movement ${movement.id} on card ${movement.cardId}: the card shows neither the old nor the new balance; left for the operator`,
        );
        throw errors.movementUnsettled();
      }
      const written = outcome === 'committed';
      await this.#append({
        type: 'card',
        id: movement.id,
        outcome: written ? 'committed' : 'not-written',
        ...(!written && tornFirstWrite(intent, slot0, slot1) ? { torn: true } : {}),
      });
      this.#log.info(
        `movement ${movement.id}: card shows it ${written ? 'landed' : 'did not land'}`,
      );
      if (written) await this.#answered(movement);
      await this.#resolve(movement);
    }
  }

  /**
   * The wallet on `card`, as CardSession.readWallet, except for one corrupt card: slot 0 torn
   * next to a blank slot 1, where the journal proves the tear was this worker's first write to
   * the card (it read the card blank just before, and the card showed that write torn when it
   * was decided). Such a card held nothing, so it counts as blank. Any other corrupt card is
   * CorruptCard: a card that may have held money is never taken for 0.
   */
  async readWallet(card: WalletCard): Promise<WalletRead> {
    const slots = await card.readSlots();
    const state = decodeWallet(slots[0], slots[1]);
    if (state.kind !== 'corrupt') {
      return {
        cardId: card.cardId,
        state,
        balance: state.kind === 'valid' ? state.balance : 0,
        slots,
      };
    }
    if (!this.provesBlank(card.cardId, slots)) throw errors.corruptCard();
    this.#log.info(
      `card ${card.cardId}: slot 0 holds this worker's torn first write; the card counts as blank`,
    );
    return { cardId: card.cardId, state: { kind: 'blank' }, balance: 0, slots };
  }

  /** Whether the journal proves `slots` are a blank card under this worker's torn first write. */
  provesBlank(cardId: string, [slot0, slot1]: [Buffer, Buffer]): boolean {
    let latest: Movement | undefined;
    for (const movement of this.#journal.movements.values()) {
      if (movement.cardId === cardId) latest = movement;
    }
    const intent = latest?.reserved?.intent;
    return (
      latest?.torn === true &&
      latest.card === 'not-written' &&
      intent !== undefined &&
      tornFirstWrite(intent, slot0, slot1)
    );
  }

  /**
   * Begins a movement on `card` and asks the ledger for it as pending (a recharge reserves the
   * shop's credits), plans the card write for the credits it granted, and journals both before
   * the card is touched. The movement is owned by the caller until commit() ends; on failure
   * here it is released at once. A refusal (NoCredits...) ends the movement: nothing is held.
   * No answer at all: the ledger may hold it, so it is voided in the background. An answer
   * that is not a pending movement is refused. Either way the card is not written.
   */
  async reserve(card: WalletCard, input: ReserveInput): Promise<Reservation> {
    const apiKey = this.#keys.keyFor(input.keyFingerprint);
    if (apiKey === undefined) throw errors.invalidApiKey();
    const id = this.#newId();
    // Owned (and its key held) from before its first journal line.
    this.#owned.set(id, input.keyFingerprint);
    try {
      await this.#append({
        type: 'started',
        id,
        kind: input.kind,
        cardId: card.cardId,
        keyFingerprint: input.keyFingerprint,
        idempotency: input.idempotency,
      });
      const movement = this.#movement(id);
      const pending = await this.#create(movement, apiKey, input.request);
      let plan: PlannedWrite;
      try {
        plan = input.planFor(pending.credits);
      } catch (error) {
        await this.#abandon(movement);
        throw error;
      }
      const { slot, value, generation, previousBalance } = plan;
      await this.#append({
        type: 'reserved',
        id,
        credits: pending.credits,
        amount: pending.amount,
        intent: { slot, value, generation, previousBalance },
      });
      return { movement, ledger: pending, plan };
    } catch (error) {
      this.#release(id);
      throw error;
    }
  }

  /**
   * Writes the planned block and settles what that means: landed, record the answer (the
   * caller's answer and the card's release need nothing more) and post it in the background;
   * certainly not, void it and fail with the card's
   * error; unknown (the card left mid-write), leave it to be decided on the card and fail with
   * CardRemovedDuringWrite. Ends the request's ownership of the movement.
   */
  async commit<T extends RechargeAnswer | DischargeAnswer>(
    reservation: Reservation,
    card: WalletCard,
  ): Promise<T> {
    const { movement, plan } = reservation;
    try {
      // Nobody else resolves an owned movement; this re-check keeps it so.
      if (phaseOf(movement) !== 'uncertain') {
        throw new Error(`movement ${movement.id} changed while its request owned it`);
      }
      const result = await card.writeSlot(plan);
      if (result.outcome === 'uncertain') {
        this.#log.warn(`movement ${movement.id}: card write uncertain (${result.error.code})`);
        throw errors.cardRemovedDuringWrite(result.error);
      }
      if (result.outcome === 'not-written') {
        await this.#abandon(movement);
        throw result.error;
      }
      await this.#append({ type: 'card', id: movement.id, outcome: 'committed' });
      const answer = (await this.#answered(movement)) as T;
      if (this.#postBeforeAnswer) await this.#resolve(movement);
      return answer;
    } finally {
      this.#release(movement.id);
    }
  }

  /**
   * Compares the ledger's pending movements of every shop this worker holds a key for with
   * the journal, and decides each (reconciliation.ts). Runs at start, periodically, and after
   * an outage; logs what waits for its card.
   */
  async reconcile(): Promise<void> {
    const waiting: WaitingMovement[] = [];
    const seen = new Set<string>();
    let complete = true;
    for (const apiKey of this.#keys.all()) {
      let pending: LedgerMovement[];
      try {
        pending = await this.#ledger.listPendingMovements(apiKey);
      } catch (error) {
        this.#log.warn(
          `reconciliation: the ledger did not list pending movements (${messageOf(error)})`,
        );
        // One shop's list failing (an earlier key revoked, say) does not stop the others.
        complete = false;
        continue;
      }
      for (const entry of pending) {
        seen.add(entry.id);
        const movement = this.#journal.movements.get(entry.id);
        const firstSeenAt = this.#unknownSeen.get(entry.id) ?? this.#clock.now();
        if (!movement) this.#unknownSeen.set(entry.id, firstSeenAt);
        const decision = decidePending({
          movement,
          owned: this.#owned.has(entry.id),
          firstSeenAt,
          now: this.#clock.now(),
          graceMs: this.#graceMs,
        });
        if (decision === 'wait-for-card') {
          waiting.push({
            id: entry.id,
            kind: entry.kind,
            cardId: entry.cardId,
            credits: entry.credits,
            since: entry.createdAt,
          });
        } else if (decision === 'post' || decision === 'void') {
          if (movement && phaseOf(movement) !== 'done') {
            await this.#resolve(movement);
          } else {
            this.#log.warn(
              `reconciliation: movement ${entry.id} is pending at the ledger; ${movement ? 'the journal has it resolved' : 'the journal does not know it'}: ${decision}`,
            );
            await this.#send(apiKey, entry.id, decision).catch((error: unknown) =>
              this.#log.warn(`reconciliation: ${decision} of ${entry.id}: ${messageOf(error)}`),
            );
            this.#unknownSeen.delete(entry.id);
          }
        }
      }
    }
    if (complete) {
      for (const id of this.#unknownSeen.keys()) if (!seen.has(id)) this.#unknownSeen.delete(id);
    }
    const changed =
      waiting.map((entry) => entry.id).join() !== this.#waiting.map((entry) => entry.id).join();
    this.#waiting = waiting;
    if (changed) this.emit('waitingForCard', waiting);
    if (waiting.length > 0) {
      this.#log.warn(
        `reconciliation: ${waiting.length} movement(s) wait for their card: ${waiting
          .map((entry) => `${entry.kind} ${entry.credits} on card ${entry.cardId} (${entry.id})`)
          .join(', ')}`,
      );
    }
  }

  async #create(
    movement: Movement,
    apiKey: string,
    request: ReserveInput['request'],
  ): Promise<LedgerMovement> {
    let pending: LedgerMovement;
    try {
      pending = await this.#ledger.createMovement(apiKey, {
        id: movement.id,
        kind: movement.kind,
        cardId: movement.cardId,
        ...request,
      });
    } catch (error) {
      if (isRefusal(error, ledgerErrorCodes.movementAlreadyVoided.code)) {
        // A void reached the ledger first (its tombstone refuses this create).
        await this.#append({ type: 'resolved', id: movement.id, state: 'voided' });
        throw errors.movementVoided();
      }
      if (error instanceof LedgerRefusal || isAuthRefusal(error)) {
        await this.#append({ type: 'resolved', id: movement.id, state: 'absent' });
      } else {
        await this.#abandon(movement);
      }
      throw error;
    }
    // After every ledger answer: is the movement still ours to continue, and is the answer a
    // pending movement of this id? Anything else is refused before the card is touched.
    if (phaseOf(movement) === 'done') throw errors.movementVoided();
    if (pending.id?.toLowerCase() !== movement.id.toLowerCase() || pending.state !== 'pending') {
      this.#log.error(
        `movement ${movement.id}: the ledger answered the create with state ${pending.state}; the card is not written`,
      );
      if (pending.state === 'posted') {
        // Posted without a card write: only an operator can set this right.
        await this.#append({ type: 'resolved', id: movement.id, state: 'posted' });
      } else {
        await this.#abandon(movement);
      }
      throw errors.movementVoided();
    }
    return pending;
  }

  /** The card was certainly not written: void (now, or through the outbox). */
  async #abandon(movement: Movement): Promise<void> {
    await this.#append({ type: 'card', id: movement.id, outcome: 'not-written' });
    await this.#resolve(movement);
  }

  /** Records the answer for a landed movement, so the same Idempotency-Key replays it. */
  async #answered(movement: Movement): Promise<RechargeAnswer | DischargeAnswer> {
    const body = answerOf(movement);
    await this.#append({ type: 'answered', id: movement.id, status: 200, body });
    return body;
  }

  /**
   * Posts or voids by the movement's phase, with the key of the shop that made it; on no
   * answer, leaves it to the outbox. True when the ledger has it resolved.
   */
  async #resolve(movement: Movement): Promise<boolean> {
    const phase = phaseOf(movement);
    if (phase !== 'to-post' && phase !== 'to-void') return phase === 'done';
    if (this.#resolving.has(movement.id)) return false;
    this.#resolving.add(movement.id);
    try {
      return await this.#resolveNow(movement, phase);
    } finally {
      this.#resolving.delete(movement.id);
    }
  }

  async #resolveNow(movement: Movement, phase: 'to-post' | 'to-void'): Promise<boolean> {
    const action = phase === 'to-post' ? 'post' : 'void';
    const apiKey = this.#keys.keyFor(movement.keyFingerprint);
    if (apiKey === undefined) {
      this.#log.error(
        `movement ${movement.id}: the key that made it (fingerprint ${movement.keyFingerprint}) is no longer held; set it again to ${action} it`,
      );
      return false;
    }
    let state: 'posted' | 'voided' | 'absent';
    try {
      await this.#send(apiKey, movement.id, action);
      state = action === 'post' ? 'posted' : 'voided';
    } catch (error) {
      const settledAs = settledByRefusal(error, action);
      if (!settledAs) {
        if (error instanceof LedgerRefusal) {
          this.#log.error(
            `movement ${movement.id}: the ledger refused to ${action} it (${error.code}); retrying in the background`,
          );
        } else {
          this.#log.warn(
            `movement ${movement.id}: ledger did not confirm; retrying in the background`,
          );
        }
        this.emit('unconfirmed', this.unconfirmed);
        if (!this.#owned.has(movement.id)) this.#outbox.kick();
        return false;
      }
      if (settledAs !== (action === 'post' ? 'posted' : 'voided') && settledAs !== 'absent') {
        this.#log.error(
          `movement ${movement.id}: the ledger has it ${settledAs} while the card says ${action}; left for the operator`,
        );
      }
      state = settledAs;
    }
    await this.#append({ type: 'resolved', id: movement.id, state });
    this.emit('unconfirmed', this.unconfirmed);
    this.#keys.releaseIdle((print) => this.#keyInUse(print));
    return true;
  }

  #send(apiKey: string, id: string, action: 'post' | 'void'): Promise<LedgerMovement> {
    return action === 'post'
      ? this.#ledger.postMovement(apiKey, id)
      : this.#ledger.voidMovement(apiKey, id);
  }

  async #drainOutbox(): Promise<boolean> {
    let allDone = true;
    for (const movement of [...this.#journal.movements.values()]) {
      const phase = phaseOf(movement);
      if (phase !== 'to-post' && phase !== 'to-void') continue;
      // A running request resolves its own movement.
      if (this.#owned.has(movement.id)) continue;
      const done = await this.#resolve(movement);
      allDone &&= done;
    }
    return allDone;
  }

  /**
   * Ends a request's ownership. A landed movement is posted now, in the background (on no
   * answer the outbox takes it); anything else left to post or void goes to the outbox.
   */
  #release(id: string): void {
    this.#owned.delete(id);
    const movement = this.#journal.movements.get(id);
    const phase = movement ? phaseOf(movement) : 'done';
    if (movement && phase === 'to-post' && !this.#postBeforeAnswer) {
      this.#resolve(movement).catch((error: unknown) =>
        this.#log.error(`movement ${id}: posting in the background: ${messageOf(error)}`),
      );
    } else if (phase === 'to-post' || phase === 'to-void') {
      this.#outbox.kick(0);
    }
  }

  #keyInUse(print: string): boolean {
    for (const owner of this.#owned.values()) if (owner === print) return true;
    for (const movement of this.#journal.movements.values()) {
      if (movement.keyFingerprint === print && phaseOf(movement) !== 'done') return true;
    }
    return false;
  }

  #append(entry: DistributiveOmit<Parameters<MovementJournal['append']>[0], 'at'>): Promise<void> {
    return this.#journal.append({
      ...entry,
      at: new Date(this.#clock.now()).toISOString(),
    } as Parameters<MovementJournal['append']>[0]);
  }

  #movement(id: string): Movement {
    const movement = this.#journal.movements.get(id);
    if (!movement) throw new Error(`movement ${id} is not in the journal`);
    return movement;
  }

  #latestFor(scope: string): Movement | undefined {
    let latest: Movement | undefined;
    for (const movement of this.#journal.movements.values()) {
      if (movement.idempotency?.scope === scope) latest = movement;
    }
    return latest;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * A refusal that nonetheless says where the movement stands at the ledger: already in the
 * asked state, in the other one, or (a void of an id it never held, which leaves a tombstone
 * that refuses a late create) absent for good.
 */
function settledByRefusal(
  error: unknown,
  action: 'post' | 'void',
): 'posted' | 'voided' | 'absent' | undefined {
  if (!(error instanceof LedgerRefusal)) return undefined;
  if (error.code === ledgerErrorCodes.movementAlreadyPosted.code) return 'posted';
  if (error.code === ledgerErrorCodes.movementAlreadyVoided.code) return 'voided';
  if (error.code === ledgerErrorCodes.movementNotFound.code && action === 'void') return 'absent';
  return undefined;
}

/**
 * A write planned from a blank card (previousBalance null: slot 0) that the card shows torn:
 * slot 0 invalid, slot 1 still blank. Nothing else of the format writes slot 0 while slot 1 is
 * blank, and a torn card is refused by every writer, so the card was blank before it.
 */
function tornFirstWrite(intent: WriteIntent, slot0: Buffer, slot1: Buffer): boolean {
  return (
    intent.previousBalance === null &&
    intent.slot === 0 &&
    decodeSlot(slot0).kind === 'invalid' &&
    decodeSlot(slot1).kind === 'blank'
  );
}

function isRefusal(error: unknown, code: string): boolean {
  return error instanceof LedgerRefusal && error.code === code;
}

function isAuthRefusal(error: unknown): boolean {
  return error instanceof AppError && error.status < 500;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
