import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of the key: equal-length digests let timingSafeEqual compare keys of any length. */
function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Compares in constant time, so response timing reveals nothing about the expected key. */
export function apiKeyMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** A short, non-reversible name for a key, for rate limits, logs and the tray. */
export function keyFingerprint(key: string): string {
  return digest(key).toString('hex').slice(0, 8);
}
