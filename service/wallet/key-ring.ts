import { EventEmitter } from 'node:events';

export interface KeyRingEvents {
  /** An earlier key has no unresolved movement left: it is forgotten (and may be revoked). */
  released: [apiKey: string];
}

/**
 * The API keys movements are resolved with: the current one, and earlier ones kept (in memory,
 * where the current one is) only while a movement made with them is unresolved. A movement is
 * always resolved with the key of the shop that created it, even after the operator changed
 * the key to another shop's; the journal names keys only by fingerprint, never in plain text.
 */
export class KeyRing extends EventEmitter<KeyRingEvents> {
  readonly #current: () => string;
  readonly #fingerprint: (apiKey: string) => string;
  readonly #earlier = new Map<string, string>();

  constructor(current: () => string, fingerprint: (apiKey: string) => string) {
    super();
    this.#current = current;
    this.#fingerprint = fingerprint;
  }

  fingerprintOf(apiKey: string): string {
    return this.#fingerprint(apiKey);
  }

  /** The key whose fingerprint this is, if it is still held. */
  keyFor(fingerprint: string): string | undefined {
    const current = this.#current();
    if (this.#fingerprint(current) === fingerprint) return current;
    return this.#earlier.get(fingerprint);
  }

  /** Every key held: the current one first. */
  all(): string[] {
    const current = this.#current();
    const currentPrint = this.#fingerprint(current);
    return [
      current,
      ...[...this.#earlier].filter(([print]) => print !== currentPrint).map(([, key]) => key),
    ];
  }

  /** Keeps `apiKey` after the operator replaced it; `inUse` says whether movements need it. */
  retire(apiKey: string, inUse: (fingerprint: string) => boolean): void {
    const print = this.#fingerprint(apiKey);
    if (print === this.#fingerprint(this.#current())) return;
    this.#earlier.set(print, apiKey);
    this.releaseIdle(inUse);
  }

  /** Forgets every earlier key no unresolved movement needs, telling listeners. */
  releaseIdle(inUse: (fingerprint: string) => boolean): void {
    const currentPrint = this.#fingerprint(this.#current());
    for (const [print, key] of this.#earlier) {
      if (print === currentPrint) {
        // The operator went back to it: it is the current key again.
        this.#earlier.delete(print);
        continue;
      }
      if (inUse(print)) continue;
      this.#earlier.delete(print);
      this.emit('released', key);
    }
  }
}
