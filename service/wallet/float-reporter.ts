import { EventEmitter } from 'node:events';
import type {
  FloatMovementReport,
  FloatReportAnswer,
  FloatReportResult,
} from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient, type LedgerMovement } from '../cloud/ledger-client.ts';
import type { FloatAccount } from './float-account.ts';
import type { Movement } from './journal-entries.ts';
import type { MovementBook } from './movement-book.ts';
import { phaseOf } from './movement-phases.ts';
import { Outbox } from './outbox.ts';

/** Movements per report (the ledger takes up to 500: docs/cloud-api.md). */
export const REPORT_BATCH = 100;

export interface FloatReporterOptions {
  ledger: Pick<LedgerClient, 'reportFloatMovements'>;
  retryMs: number;
  maxRetryMs: number;
  /**
   * Journals the compensating movement of a recharge whose card holds it while the ledger has
   * it voided (Compensations.compensate; created and posted by the movement outbox).
   */
  compensate?: (movement: Movement, ledger: 'voided') => Promise<void>;
  /**
   * A found recharge the ledger has voided is looked up (`getMovement`) and, voided by an
   * operator without its card, set right from what the card showed (LedgerWord.cardDecides).
   */
  settleFound?: {
    getMovement: LedgerClient['getMovement'];
    cardDecides: (apiKey: string, atLedger: LedgerMovement, evidence: string) => Promise<void>;
  };
}

/** One report's movement and what it stands for in the journal. */
type Item =
  | { report: FloatMovementReport; movement: Movement }
  | { report: FloatMovementReport; found: string };

/**
 * Tells the ledger of this till's float recharges, in the background, exactly once each, in
 * batches (docs/cloud-api.md, "Reporting float recharges"): in journal order (so a card's
 * recharges in the order they were made), each with what its card showed (written, not written,
 * or undecided: reported again once its card decides it), and float recharges of other floats
 * found on cards. Each answer is journaled as the ledger gave it; what the ledger did not
 * answer is sent again, the same ids, until it does (every report is idempotent per movement).
 */
export class FloatReporter extends EventEmitter<{ reported: [number] }> {
  readonly #book: MovementBook;
  readonly #account: FloatAccount;
  readonly #ledger: FloatReporterOptions['ledger'];
  readonly #outbox: Outbox;
  #flushing: Promise<boolean> | undefined;
  #again = false;

  readonly #compensate: FloatReporterOptions['compensate'];
  readonly #settleFound: FloatReporterOptions['settleFound'];

  constructor(book: MovementBook, account: FloatAccount, options: FloatReporterOptions) {
    super();
    this.#book = book;
    this.#account = account;
    this.#ledger = options.ledger;
    this.#compensate = options.compensate;
    this.#settleFound = options.settleFound;
    this.#outbox = new Outbox({
      clock: book.clock,
      drain: () => this.flush(),
      retryMs: options.retryMs,
      maxRetryMs: options.maxRetryMs,
    });
  }

  /** Reports soon (0: now); default: after the current backoff. */
  kick(delayMs?: number): void {
    this.#outbox.kick(delayMs);
  }

  close(): Promise<void> {
    return this.#outbox.close();
  }

  /** Float recharges and found ones the ledger has not been told of. */
  get pending(): number {
    let found = 0;
    for (const entry of this.#book.journal.floats.found.values()) {
      if (entry.reportedAt === undefined) found += 1;
    }
    return this.#account.unreported().length + found;
  }

  /**
   * Reports everything unreported (one flush at a time: a call during one runs another after
   * it); true when the ledger answered every movement.
   */
  flush(): Promise<boolean> {
    if (this.#flushing) {
      // The running flush goes round once more, and so reports this caller's movements too.
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = this.#flushAll().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #flushAll(): Promise<boolean> {
    let answered = true;
    do {
      this.#again = false;
      const byKey = this.#items();
      for (const [print, items] of byKey) {
        const apiKey = this.#book.keys.keyFor(print);
        if (apiKey === undefined) {
          this.#book.log.error(
            `float report: ${items.length} movement(s) were made with a key no longer held (fingerprint ${print}); set it again to report them`,
          );
          answered = false;
          continue;
        }
        for (let at = 0; at < items.length; at += REPORT_BATCH) {
          const batch = items.slice(at, at + REPORT_BATCH);
          if (!(await this.#send(apiKey, batch))) {
            answered = false;
            break;
          }
        }
      }
    } while (this.#again);
    this.emit('reported', this.pending);
    return answered;
  }

  /** What to report, per key: this till's recharges (their key), then found ones (current key). */
  #items(): Map<string, Item[]> {
    const byKey = new Map<string, Item[]>();
    const add = (print: string, item: Item) =>
      byKey.set(print, [...(byKey.get(print) ?? []), item]);
    for (const movement of this.#account.unreported()) {
      add(movement.keyFingerprint, { report: reportOf(movement), movement });
    }
    const current = this.#book.keys.fingerprintOf(this.#book.keys.all()[0] as string);
    for (const [movementId, found] of this.#book.journal.floats.found) {
      if (found.reportedAt !== undefined) continue;
      add(current, {
        report: {
          id: movementId,
          cardId: found.cardId,
          credits: found.credits,
          card: 'written',
          found: true,
        },
        found: movementId,
      });
    }
    return byKey;
  }

  async #send(apiKey: string, batch: Item[]): Promise<boolean> {
    let answer: FloatReportAnswer;
    try {
      answer = await this.#ledger.reportFloatMovements(apiKey, {
        tillId: this.#book.tillId,
        movements: batch.map((item) => item.report),
      });
    } catch (error) {
      this.#book.log.warn(
        `float report of ${batch.length} movement(s): the ledger did not take it (${(error as Error).message}); sent again later`,
      );
      return false;
    }
    const results = new Map(answer.results.map((result) => [result.id.toLowerCase(), result]));
    let settled = true;
    for (const item of batch) {
      const result = results.get(item.report.id.toLowerCase());
      if (!result) continue;
      if ('found' in item) {
        if (result.outcome === 'refused') {
          this.#book.log.warn(
            `found float recharge ${item.found}: ${result.flags.join(', ')} (${result.detail ?? ''})`,
          );
          // Reported again until settled (its compensation journaled first, made once).
          if (result.state === 'voided' && !(await this.#foundVoided(apiKey, item.report))) {
            settled = false;
            continue;
          }
        }
        await this.#book.append({ type: 'found-reported', movementId: item.found });
      } else {
        await this.#journal(item.movement, result);
      }
    }
    return settled;
  }

  /**
   * A float recharge found on a card, voided at the ledger. Voided by an operator without the
   * card (no till's word), the card's word that it landed sets the books right: a compensating
   * recharge, as when a held card is settled (on a MIFARE Classic card, this till's write has
   * replaced the reference: docs/card-format.md, 6a). False when the ledger did not answer.
   */
  async #foundVoided(apiKey: string, found: FloatMovementReport): Promise<boolean> {
    if (!this.#settleFound) return true;
    let atLedger: LedgerMovement;
    try {
      atLedger = await this.#settleFound.getMovement(apiKey, found.id);
    } catch (error) {
      return error instanceof LedgerRefusal;
    }
    const voidedWithoutCard =
      atLedger.state === 'voided' &&
      atLedger.resolvedByTill === null &&
      atLedger.compensates === null &&
      atLedger.kind === 'recharge' &&
      atLedger.cardId === found.cardId &&
      atLedger.credits === found.credits;
    if (!voidedWithoutCard) return true;
    await this.#settleFound.cardDecides(
      apiKey,
      atLedger,
      `card ${found.cardId} read at till ${this.#book.tillId}: it holds float recharge ${found.id} (found on the card)`,
    );
    return true;
  }

  /** One of this till's recharges as the ledger answered it. */
  async #journal(movement: Movement, result: FloatReportResult): Promise<void> {
    const id = movement.id;
    if (result.flags.length > 0) {
      this.#book.log.warn(`float recharge ${id}: recorded with ${result.flags.join(', ')}`);
    }
    if (
      result.outcome === 'refused' &&
      result.state === 'voided' &&
      phaseOf(movement) === 'to-post'
    ) {
      // Its card holds it, but an operator voided it without the card (a card reported lost):
      // set right by a compensating recharge, as any movement (one per movement at the ledger),
      // journaled before the resolved line so that a crash between the two cannot lose it.
      await this.#compensate?.(movement, 'voided');
      await this.#book.append({ type: 'resolved', id, state: 'voided' });
      return;
    }
    if (result.outcome === 'refused') {
      // Not the till's to settle: the card and the ledger disagree, for an operator.
      this.#book.log.error(
        `float recharge ${id}: refused (${result.flags.join(', ')}): ${result.detail ?? ''}`,
      );
      await this.#book.append({
        type: 'conflict',
        id,
        detail: result.flags.join(', ') || 'refused',
      });
      const state =
        result.state === 'posted' || result.state === 'voided' ? result.state : 'absent';
      await this.#book.append({ type: 'resolved', id, state });
      return;
    }
    if (result.state === 'pending') {
      if (phaseOf(movement) === 'uncertain') await this.#book.append({ type: 'reported', id });
      return;
    }
    const state = result.state === 'voided' ? 'voided' : 'posted';
    if (phaseOf(movement) === 'uncertain') {
      // Its card never decided it here (the card left mid-write), yet the ledger's word is
      // final: another till found it on the card, or an operator decided it. Learnt, as any
      // movement's word from the ledger: its card decides it when next seen (a compensation
      // where they differ), and its Idempotency-Key replays that, or answers
      // MovementUnsettled meanwhile, instead of running the sale again.
      const outcome = state === 'posted' ? 'committed' : 'not-written';
      await this.#book.append({ type: 'card', id, outcome, learnt: true });
    }
    await this.#book.append({ type: 'resolved', id, state });
  }
}

/** A float recharge as a report tells it. */
function reportOf(movement: Movement): FloatMovementReport {
  const sale = movement.float;
  if (!sale) throw new Error(`movement ${movement.id} is not a float recharge`);
  const phase = phaseOf(movement);
  return {
    id: movement.id,
    cardId: movement.cardId,
    credits: sale.credits,
    card: phase === 'to-post' ? 'written' : phase === 'to-void' ? 'not-written' : 'undecided',
    creditCost: sale.creditCost,
    ...(phase === 'to-post' ? { occurredAt: movement.cardAt ?? movement.startedAt } : {}),
    cardBefore: sale.cardBefore,
    // The bonus it gave by the tiers it knew: the ledger records it, and flags one above its own.
    ...(sale.bonusCredits ? { bonusCredits: sale.bonusCredits } : {}),
    ...(movement.reference === undefined ? {} : { reference: movement.reference }),
  };
}
