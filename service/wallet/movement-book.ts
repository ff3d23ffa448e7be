import type { Logger } from '../logger.ts';
import type { Clock } from './clock.ts';
import type { KeyRing } from './key-ring.ts';
import type { JournalEntry, Movement } from './journal-entries.ts';
import type { MovementJournal } from './movement-journal.ts';
import { phaseOf } from './movement-phases.ts';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * What the engine's parts share: the journal they write, this till's identity, the keys
 * movements are made and resolved with, and which movements running requests own. A movement
 * a running request owns (from its reservation to the end of its card write) is resolved by
 * that request only: the background resolver leaves it alone.
 */
export class MovementBook {
  readonly journal: MovementJournal;
  /** This till's identity at the ledger (docs/cloud-api.md, "Tills"). */
  readonly tillId: string;
  readonly keys: KeyRing;
  readonly clock: Clock;
  readonly log: Logger;
  readonly newId: () => string;
  /** Movement ids owned by running requests, with the fingerprint of the key each is made with. */
  readonly owned = new Map<string, string>();
  /** Keys lent to work that journals no movement of its own yet (see lendKey), counted. */
  readonly #lent = new Map<string, number>();

  constructor(parts: {
    journal: MovementJournal;
    tillId: string;
    keys: KeyRing;
    clock: Clock;
    log: Logger;
    newId: () => string;
  }) {
    this.journal = parts.journal;
    this.tillId = parts.tillId;
    this.keys = parts.keys;
    this.clock = parts.clock;
    this.log = parts.log;
    this.newId = parts.newId;
  }

  get movements(): ReadonlyMap<string, Movement> {
    return this.journal.movements;
  }

  /**
   * Appends journal lines stamped with the engine's clock, in one fdatasync; resolves once they
   * are durable.
   */
  append(...entries: DistributiveOmit<JournalEntry, 'at'>[]): Promise<void> {
    const at = new Date(this.clock.now()).toISOString();
    return this.journal.append(...entries.map((entry) => ({ ...entry, at }) as JournalEntry));
  }

  movement(id: string): Movement {
    const movement = this.journal.movements.get(id);
    if (!movement) throw new Error(`movement ${id} is not in the journal`);
    return movement;
  }

  /** The latest movement under an Idempotency-Key scope. */
  latestFor(scope: string): Movement | undefined {
    let latest: Movement | undefined;
    for (const movement of this.journal.movements.values()) {
      if (movement.idempotency?.scope === scope) latest = movement;
    }
    return latest;
  }

  /** The latest movement of a card. */
  latestOfCard(cardId: string): Movement | undefined {
    let latest: Movement | undefined;
    for (const movement of this.journal.movements.values()) {
      if (movement.cardId === cardId && movement.compensates === undefined) latest = movement;
    }
    return latest;
  }

  /** The movement that compensates `id`, if one was made. */
  compensationOf(id: string): Movement | undefined {
    for (const movement of this.journal.movements.values()) {
      if (movement.compensates === id) return movement;
    }
    return undefined;
  }

  /**
   * Keeps the key of this fingerprint from being released until the returned function is
   * called: for work that will journal a movement made with it (an adoption, a compensation for
   * an operator's word), so that the operator replacing the key meanwhile cannot leave that
   * movement with a key this till no longer holds. Undefined when the key is not held already.
   */
  lendKey(print: string): (() => void) | undefined {
    if (this.keys.keyFor(print) === undefined) return undefined;
    this.#lent.set(print, (this.#lent.get(print) ?? 0) + 1);
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      const left = (this.#lent.get(print) ?? 1) - 1;
      if (left > 0) this.#lent.set(print, left);
      else this.#lent.delete(print);
    };
  }

  /**
   * Whether a movement made with this key is unresolved, or resolved at the ledger while its
   * card was away (a compensating movement may follow when the card is seen), or the till's
   * float is its shop's, or the key is lent (lendKey): the key is kept.
   */
  keyInUse(print: string): boolean {
    if (this.#lent.has(print)) return true;
    for (const owner of this.owned.values()) if (owner === print) return true;
    // The till's float belongs to the key's shop: closing it needs the key.
    const float = this.journal.floats.float;
    if (float && !float.closed && float.keyFingerprint === print) return true;
    for (const movement of this.journal.movements.values()) {
      if (movement.keyFingerprint !== print) continue;
      if (phaseOf(movement) !== 'done' || movement.learnt) return true;
    }
    return false;
  }
}
