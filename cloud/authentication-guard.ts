import { hashApiKey } from './api-keys.ts';
import { LedgerError, ledgerErrors } from './errors.ts';

/** What the guard needs of the ledger: the one authoritative lookup, and the keys that exist. */
export interface KeyLookup {
  /**
   * The customer of a key; throws InvalidApiKey (401) or KeyNotAssigned (403). With
   * `allowRevoked`, a revoked key names its customer too (float reports).
   */
  authenticate(apiKey: string | undefined, allowRevoked?: boolean): Promise<string>;
  /** Hashes of every key that is not revoked (assigned or not). */
  activeKeyHashes(): Promise<Set<string>>;
}

export interface FailedAuthenticationLimits {
  /** Failed authentications one client address may make per window (default 30). */
  perAddress: number;
  /** Failed authentications with keys sharing their first 8 characters, per window (default 30). */
  perKeyPrefix: number;
  /** The window, in ms (default 60 000). */
  windowMs: number;
  /** Least time between two reloads of the key list while limiting (default 250 ms). */
  reloadIntervalMs: number;
}

export const DEFAULT_FAILED_AUTHENTICATION_LIMITS: FailedAuthenticationLimits = {
  perAddress: 30,
  perKeyPrefix: 30,
  windowMs: 60_000,
  reloadIntervalMs: 250,
};

/** Characters of a presented key that make its prefix. */
export const KEY_PREFIX_LENGTH = 8;
/** Counters kept per kind, and keys' customers remembered; beyond this the oldest go. */
const MAX_COUNTERS = 10_000;

/**
 * Bounds failed authentications without ever refusing a valid key (docs/cloud-api.md,
 * "Failed authentications").
 *
 * Each unknown key used to cost one database lookup, so anyone could make the ledger query as
 * fast as they could send random keys. Failures are now counted per client address and per
 * key prefix; past a limit, an unknown key is answered 429 without its own lookup. A key is
 * "unknown" when its hash is not in the guard's copy of the key list; while limiting, that
 * copy is reloaded (one query for every waiting request, at most every `reloadIntervalMs`)
 * after the request arrived, so a key issued a moment ago is still found. Validity itself is
 * always read from the database: a revoked key is refused on its next request.
 */
export class AuthenticationGuard {
  readonly #keys: KeyLookup;
  readonly #limits: FailedAuthenticationLimits;
  readonly #now: () => number;
  readonly #byAddress = new FailureCounter();
  readonly #byPrefix = new FailureCounter();
  #known = new Set<string>();
  /** The customer of each key that authenticated here (a key never changes customer). */
  readonly #customers = new Map<string, string>();
  /** Reloads of the key list started and finished (a count: each waits for a later start). */
  #reloadsStarted = 0;
  #reloadsFinished = 0;
  #lastReloadAt = -Infinity;
  #reloading: Promise<void> | undefined;

  constructor(
    keys: KeyLookup,
    limits: Partial<FailedAuthenticationLimits> = {},
    now: () => number = Date.now,
  ) {
    this.#keys = keys;
    this.#limits = { ...DEFAULT_FAILED_AUTHENTICATION_LIMITS, ...limits };
    this.#now = now;
  }

  /**
   * The customer of `apiKey`, asked by a client at `address`; `allowRevoked` for the calls a
   * revoked key may still make (float reports and closes).
   */
  async authenticate(
    apiKey: string | undefined,
    address: string,
    allowRevoked = false,
  ): Promise<string> {
    // A missing key costs nothing to refuse: it is neither looked up nor counted.
    if (!apiKey) return this.#keys.authenticate(apiKey);
    const hash = hashApiKey(apiKey);
    const prefix = apiKey.slice(0, KEY_PREFIX_LENGTH);
    if (!this.#known.has(hash)) {
      const retryAfterMs = this.#limitedFor(address, prefix);
      if (retryAfterMs > 0) {
        await this.#reloadStartedAfterNow();
        if (!this.#known.has(hash)) {
          throw ledgerErrors.tooManyRequests(Math.ceil(retryAfterMs / 1000));
        }
      }
    }
    try {
      const customerId = await this.#keys.authenticate(apiKey, allowRevoked);
      this.#known.add(hash);
      this.#remember(hash, customerId);
      return customerId;
    } catch (error) {
      if (error instanceof LedgerError && error.code === ledgerErrors.invalidApiKey().code) {
        this.refused(apiKey, address);
      }
      throw error;
    }
  }

  /**
   * The customer (and the hash) of a key that authenticated here before, without a lookup, for
   * a call that checks the key's validity in its own transaction (then `refused` if it is not
   * valid); undefined for any other key, which `authenticate` must look up.
   */
  customerOf(apiKey: string | undefined): { customerId: string; hash: string } | undefined {
    if (!apiKey) return undefined;
    const hash = hashApiKey(apiKey);
    const customerId = this.#customers.get(hash);
    return customerId === undefined ? undefined : { customerId, hash };
  }

  /** A key the database refused (unknown or revoked): counted as a failed authentication. */
  refused(apiKey: string, address: string): void {
    const hash = hashApiKey(apiKey);
    this.#known.delete(hash);
    this.#customers.delete(hash);
    const now = this.#now();
    this.#byAddress.add(address, now, this.#limits.windowMs);
    this.#byPrefix.add(apiKey.slice(0, KEY_PREFIX_LENGTH), now, this.#limits.windowMs);
  }

  #remember(hash: string, customerId: string): void {
    this.#customers.delete(hash);
    // Bounded: past the limit the key remembered longest ago goes (it is looked up again).
    if (this.#customers.size >= MAX_COUNTERS) {
      const oldest = this.#customers.keys().next();
      if (!oldest.done) this.#customers.delete(oldest.value);
    }
    this.#customers.set(hash, customerId);
  }

  /** How long the address or the prefix stays limited (0: not limited). */
  #limitedFor(address: string, prefix: string): number {
    const now = this.#now();
    return Math.max(
      this.#byAddress.limitedFor(address, this.#limits.perAddress, now, this.#limits.windowMs),
      this.#byPrefix.limitedFor(prefix, this.#limits.perKeyPrefix, now, this.#limits.windowMs),
    );
  }

  /**
   * Resolves once a reload of the key list that started after this call has finished: one that
   * started earlier may have missed a key issued just before this request.
   */
  async #reloadStartedAfterNow(): Promise<void> {
    const wanted = this.#reloadsStarted + 1;
    while (this.#reloadsFinished < wanted) {
      this.#reloading ??= this.#reload().finally(() => (this.#reloading = undefined));
      await this.#reloading;
    }
  }

  async #reload(): Promise<void> {
    const wait = this.#lastReloadAt + this.#limits.reloadIntervalMs - this.#now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.#lastReloadAt = this.#now();
    const started = (this.#reloadsStarted += 1);
    try {
      this.#known = await this.#keys.activeKeyHashes();
    } finally {
      // A failed reload still ends the wait: the request is then answered 429, as it would be.
      this.#reloadsFinished = started;
    }
  }
}

/** Failures per name in fixed windows, bounded in memory. */
class FailureCounter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  add(name: string, now: number, windowMs: number): void {
    const current = this.#windows.get(name);
    if (current && now - current.start < windowMs) {
      current.count += 1;
      return;
    }
    this.#windows.delete(name);
    if (this.#windows.size >= MAX_COUNTERS) this.#evict(now, windowMs);
    this.#windows.set(name, { start: now, count: 1 });
  }

  /** Ms until the name's window ends if it reached `limit` failures, else 0. */
  limitedFor(name: string, limit: number, now: number, windowMs: number): number {
    const current = this.#windows.get(name);
    if (!current || current.count < limit) return 0;
    return Math.max(0, current.start + windowMs - now);
  }

  #evict(now: number, windowMs: number): void {
    for (const [name, window] of this.#windows) {
      if (now - window.start >= windowMs) this.#windows.delete(name);
    }
    // Still full: the oldest windows go (a Map iterates in insertion order).
    for (const name of this.#windows.keys()) {
      if (this.#windows.size < MAX_COUNTERS) break;
      this.#windows.delete(name);
    }
  }
}
