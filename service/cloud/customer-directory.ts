import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { LedgerClient, LedgerCustomer } from './ledger-client.ts';

export interface CustomerDirectoryOptions {
  /** How long a resolved key is trusted without asking the ledger again. */
  freshMs?: number;
  /**
   * How long a resolved key is still honoured while the ledger cannot be reached, so a shop
   * whose internet drops keeps reading cards. A refusal (revoked key) always wins at once.
   */
  staleIfErrorMs?: number;
  now?: () => number;
  /**
   * The shop a till selling from its float last learnt for a key, while it may still sell
   * offline (docs/integrators.md, "When the internet drops"): answered when the ledger cannot
   * be reached and nothing recent enough is cached. Undefined: none.
   */
  learnt?: (apiKey: string) => LedgerCustomer | undefined;
  /** Told of every customer read fresh from the ledger (the till float notes its shop). */
  onResolved?: (apiKey: string, customer: LedgerCustomer) => void;
}

/** Defaults, documented in docs/integrators.md and README ("Customer resolution"). */
export const CUSTOMER_FRESH_MS = 30_000;
export const CUSTOMER_STALE_IF_ERROR_MS = 10 * 60_000;

interface Entry {
  customer: LedgerCustomer;
  at: number;
}

/**
 * Resolves the shop behind an API key through the ledger (`GET /v1/customer`), with a short
 * cache so a burst of calls costs one ledger round trip. Concurrent lookups of one key share
 * one request. Keys are held only as SHA-256 digests.
 *
 * While the ledger answers, a key is honoured only as the ledger confirmed it within freshMs:
 * past that, resolve() waits for the ledger, so a revoked key (or one moved to another shop)
 * is refused at once. A key in use is refreshed ahead, in the background, once its entry is
 * older than half of freshMs, so steady traffic does not wait. Known offline, the cached shop
 * (within staleIfErrorMs) or the one the till float learnt answers at once.
 */
export class CustomerDirectory {
  readonly #ledger: LedgerClient;
  readonly #freshMs: number;
  readonly #staleIfErrorMs: number;
  readonly #now: () => number;
  readonly #learnt: CustomerDirectoryOptions['learnt'];
  readonly #onResolved: CustomerDirectoryOptions['onResolved'];
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<LedgerCustomer>>();
  /** Keys the float learnt that the ledger refused since: what it learnt no longer counts. */
  readonly #refused = new Set<string>();

  constructor(ledger: LedgerClient, options: CustomerDirectoryOptions = {}) {
    this.#ledger = ledger;
    this.#freshMs = options.freshMs ?? CUSTOMER_FRESH_MS;
    this.#staleIfErrorMs = options.staleIfErrorMs ?? CUSTOMER_STALE_IF_ERROR_MS;
    this.#now = options.now ?? Date.now;
    this.#learnt = options.learnt;
    this.#onResolved = options.onResolved;
  }

  /**
   * The customer for `apiKey`. Unknown or revoked key: 401 invalid api key; a key bound to no
   * customer: 400 Missing customerId from auth flow; ledger unreachable and nothing recent
   * enough cached: 500 LedgerUnavailable.
   */
  async resolve(apiKey: string): Promise<LedgerCustomer> {
    const id = digest(apiKey);
    const entry = this.#entries.get(id);
    const age = entry ? this.#now() - entry.at : Number.POSITIVE_INFINITY;
    if (entry && age < this.#freshMs) {
      // Refresh ahead: a key in steady use is looked up again in the background once its entry
      // is half way to expiring, so a busy till (a float recharge never waits for the ledger)
      // rarely meets an expired entry, and a refusal (a revoked key, a key moved to another
      // shop) is learnt within freshMs whatever the traffic.
      if (age >= this.#freshMs / 2) this.#lookup(apiKey, id).catch(() => undefined);
      return entry.customer;
    }
    const lookup = this.#lookup(apiKey, id);
    // Known offline: what an error would be answered with (the shop cached within stale-if-error,
    // or the one the till float learnt) is answered now, the lookup going on in the background,
    // a refusal it brings being the next call's answer; else a float recharge would wait for the
    // client's attempts (about 0.45 s with the ledger refusing connections; its timeout, times
    // its attempts, with the ledger hanging). While the ledger answers (or is not known yet), an
    // entry past freshMs is never answered before the ledger confirms it: a key the ledger no
    // longer takes must not sell, from the float or otherwise.
    if (this.#ledger.reachability.reachable === false) {
      const meanwhile = this.#meanwhile(apiKey, id, entry);
      if (meanwhile) {
        lookup.catch(() => undefined);
        return meanwhile;
      }
    }
    try {
      return await lookup;
    } catch (error) {
      const unreachable = error instanceof AppError && error.code === 'LedgerUnavailable';
      // What the float learnt may be new since the lookup began (GET /info may have told it).
      const meanwhile = unreachable ? this.#meanwhile(apiKey, id, entry) : undefined;
      if (meanwhile) return meanwhile;
      throw error;
    }
  }

  /**
   * What answers for a key while the ledger cannot be reached: its shop cached within
   * stale-if-error, else the one the till float learnt; nothing once the ledger refused it.
   */
  #meanwhile(apiKey: string, id: string, entry: Entry | undefined): LedgerCustomer | undefined {
    if (this.#refused.has(id)) return undefined;
    if (entry && this.#now() - entry.at < this.#staleIfErrorMs) return entry.customer;
    return this.#learnt?.(apiKey);
  }

  /** GET /v1/customer for `apiKey`, one at a time per key: remembered, or forgotten if refused. */
  #lookup(apiKey: string, id: string): Promise<LedgerCustomer> {
    let lookup = this.#inFlight.get(id);
    if (!lookup) {
      lookup = this.#ledger
        .getCustomer(apiKey)
        .then(
          (customer) => {
            this.remember(apiKey, customer);
            return customer;
          },
          (error: unknown) => {
            const unreachable = error instanceof AppError && error.code === 'LedgerUnavailable';
            if (!unreachable) {
              this.#entries.delete(id);
              // Only a key the float learnt needs remembering as refused (any other has nothing
              // to answer offline), so unknown keys sent at random cannot grow the set.
              if (this.#learnt?.(apiKey)) this.#refused.add(id);
            }
            throw error;
          },
        )
        .finally(() => this.#inFlight.delete(id));
      this.#inFlight.set(id, lookup);
    }
    return lookup;
  }

  /** Records a customer read fresh by someone else (GET /info), so resolve() can use it. */
  remember(apiKey: string, customer: LedgerCustomer): void {
    const id = digest(apiKey);
    this.#entries.set(id, { customer, at: this.#now() });
    this.#refused.delete(id);
    this.#onResolved?.(apiKey, customer);
  }
}

function digest(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}
