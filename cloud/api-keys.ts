import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys are high-entropy random tokens (issued: 256 random bits), so the ledger stores only
 * their SHA-256 and looks a key up by that hash. A fast hash is enough here: slow password
 * hashes (bcrypt, scrypt, argon2) exist to make guessing low-entropy human passwords costly,
 * and nobody can enumerate 2^256 keys, fast hash or not. It also lets the lookup be one indexed
 * query. Keys a provider registers with `--key` must be long random tokens for the same reason.
 */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** A new key: `cwk_` and 32 random bytes in base64url (47 characters). */
export function generateApiKey(): string {
  return `cwk_${randomBytes(32).toString('base64url')}`;
}

/** 16 to 256 visible ASCII characters (what fits an HTTP header unchanged). */
export const API_KEY_PATTERN = /^[\x21-\x7e]{16,256}$/;

export function isWellFormedApiKey(apiKey: string): boolean {
  return API_KEY_PATTERN.test(apiKey);
}

/**
 * A key's short name, as the worker's tray and logs show it: the first 8 hex digits of its
 * SHA-256, so the ledger (which keeps only the hash) names it the same way.
 */
export function keyFingerprintOfHash(keyHash: string): string {
  return keyHash.slice(0, 8);
}
