import fastifyCookie, { Signer, type UnsignResult } from '@fastify/cookie';
import fp from 'fastify-plugin';

/**
 * What signs the console's cookies once its secret is known. The secret is the database's
 * (operators/console-secret.ts), read on the first console request rather than at start, so a
 * ledger process starts while its database is away; every console request waits for it first.
 */
export class LazySigner {
  #signer: Signer | undefined;
  #loading: Promise<void> | undefined;

  constructor(private readonly load: () => Promise<string>) {}

  /** Resolves once the secret is read (a failed read is tried again on the next request). */
  ready(): Promise<void> {
    if (this.#signer) return Promise.resolve();
    this.#loading ??= this.load().then(
      (secret) => {
        this.#signer = new Signer(secret);
      },
      (error: unknown) => {
        this.#loading = undefined;
        throw error;
      },
    );
    return this.#loading;
  }

  #loaded(): Signer {
    if (!this.#signer) throw new Error('the console secret is not read yet');
    return this.#signer;
  }

  sign(value: string): string {
    return this.#loaded().sign(value);
  }

  unsign(value: string): UnsignResult {
    return this.#loaded().unsign(value);
  }
}

/**
 * Cookies, signed with the console's secret (the session id, the CSRF secret and the device
 * cookie are each signed, so a changed one is no longer valid).
 * @see https://github.com/fastify/fastify-cookie
 */
export default fp<{ signer: LazySigner }>(
  async (fastify, { signer }) => {
    await fastify.register(fastifyCookie, { secret: signer });
  },
  { name: 'console-cookie' },
);
