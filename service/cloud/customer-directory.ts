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
    if (entry && this.#now() - entry.at < this.#freshMs) return entry.customer;
    let lookup = this.#inFlight.get(id);
    if (!lookup) {
      lookup = this.#ledger.getCustomer(apiKey).finally(() => this.#inFlight.delete(id));
      this.#inFlight.set(id, lookup);
    }
    try {
      const customer = await lookup;
      this.remember(apiKey, customer);
      return customer;
    } catch (error) {
      const unreachable = error instanceof AppError && error.code === 'LedgerUnavailable';
      if (unreachable && entry && this.#now() - entry.at < this.#staleIfErrorMs) {
        return entry.customer;
      }
      const learnt = unreachable ? this.#learnt?.(apiKey) : undefined;
      if (learnt) return learnt;
      if (!unreachable) this.#entries.delete(id);
      throw error;
    }
  }

  /** Records a customer read fresh by someone else (GET /info), so resolve() can use it. */
  remember(apiKey: string, customer: LedgerCustomer): void {
    this.#entries.set(digest(apiKey), { customer, at: this.#now() });
    this.#onResolved?.(apiKey, customer);
  }
}

function digest(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}
