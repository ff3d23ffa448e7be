/**
 * Bounds failed console log-ins without locking anyone out (docs/operators.md, "Logging in").
 *
 * Failures are counted per client address and per account (the login typed, known or not).
 * Past either limit, a log-in from that address or for that account is answered "too many
 * attempts" without its password being checked (so guessing costs the guesser, not the
 * ledger's CPU). A browser that has logged in to the account before carries that account's
 * device cookie (signed, set at each successful log-in): its attempts are not held back by
 * the address or account counts, only by a count of their own, so an attacker who guesses at
 * an account from elsewhere can never keep its owner out of their usual browser, and the
 * owner's own password still works there. The same idea as the worker's failed-authentication
 * rule: what is valid is never refused because someone else is guessing.
 *
 * Counts are kept in memory per ledger process, in fixed windows, bounded in size.
 */
export interface LoginLimitsConfig {
  /** Failed log-ins from one address per window (default 10). */
  perAddress: number;
  /** Failed log-ins for one account per window, from browsers it does not know (default 10). */
  perAccount: number;
  /** Failed log-ins with one device cookie per window (default 10). */
  perDevice: number;
  /** The window (default 15 minutes). */
  windowMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimitsConfig = {
  perAddress: 10,
  perAccount: 10,
  perDevice: 10,
  windowMs: 15 * 60_000,
};

const MAX_NAMES = 10_000;

class WindowCounter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  add(name: string, now: number, windowMs: number): void {
    const current = this.#windows.get(name);
    if (current && now - current.start < windowMs) {
      current.count += 1;
      return;
    }
    this.#windows.delete(name);
    if (this.#windows.size >= MAX_NAMES) {
      // The oldest windows go first (a Map iterates in insertion order).
      const oldest = this.#windows.keys().next();
      if (!oldest.done) this.#windows.delete(oldest.value);
    }
    this.#windows.set(name, { start: now, count: 1 });
  }

  /** Ms until `name`'s window ends if it reached `limit`, else 0. */
  heldFor(name: string, limit: number, now: number, windowMs: number): number {
    const current = this.#windows.get(name);
    if (!current || current.count < limit || now - current.start >= windowMs) return 0;
    return current.start + windowMs - now;
  }

  clear(name: string): void {
    this.#windows.delete(name);
  }
}

export interface LoginAttemptSource {
  address: string;
  /** The login typed, normalised. */
  login: string;
  /** The device cookie, when it is valid and names this account. */
  device: string | null;
}

export class LoginLimits {
  readonly #config: LoginLimitsConfig;
  readonly #now: () => number;
  readonly #byAddress = new WindowCounter();
  readonly #byAccount = new WindowCounter();
  readonly #byDevice = new WindowCounter();

  constructor(config: Partial<LoginLimitsConfig> = {}, now: () => number = Date.now) {
    this.#config = { ...DEFAULT_LOGIN_LIMITS, ...config };
    this.#now = now;
  }

  /** How long this attempt must wait before its password is even checked (0: go ahead). */
  heldFor(source: LoginAttemptSource): number {
    const now = this.#now();
    const { windowMs } = this.#config;
    if (source.device !== null) {
      return this.#byDevice.heldFor(source.device, this.#config.perDevice, now, windowMs);
    }
    return Math.max(
      this.#byAddress.heldFor(source.address, this.#config.perAddress, now, windowMs),
      this.#byAccount.heldFor(source.login, this.#config.perAccount, now, windowMs),
    );
  }

  failed(source: LoginAttemptSource): void {
    const now = this.#now();
    const { windowMs } = this.#config;
    if (source.device !== null) {
      this.#byDevice.add(source.device, now, windowMs);
      return;
    }
    this.#byAddress.add(source.address, now, windowMs);
    this.#byAccount.add(source.login, now, windowMs);
  }

  /** A successful log-in clears its device's count (the address's and account's stand). */
  succeeded(source: LoginAttemptSource): void {
    if (source.device !== null) this.#byDevice.clear(source.device);
  }
}
