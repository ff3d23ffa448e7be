import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Operator passwords, hashed with scrypt from node:crypto (a memory-hard KDF, as OWASP's
 * password storage guidance lists it: N=2^15, r=8, p=3, 32 MiB per hash) and a random 16-byte
 * salt. The stored text names its parameters, `scrypt$N$r$p$salt$hash` (base64url), so they
 * can be raised later and old hashes still verify.
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const PASSWORD_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LENGTH = 32;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = {
    N: cost.N,
    r: cost.r,
    p: cost.p,
    // scrypt needs 128 * N * r bytes; node's default cap (32 MiB) is exactly that at N=2^15.
    maxmem: 256 * cost.N * cost.r,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string, cost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `password` matches `stored`; false for a stored text this code cannot read. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (!N || !r || !p) return false;
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  const key = await derive(password, Buffer.from(parts[4] ?? '', 'base64url'), { N, r, p });
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/**
 * A hash nobody's password matches, verified when a login names no account, so that an
 * unknown login takes as long as a wrong password (no telling which logins exist).
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoy;
}

/** Why a new password is refused, or undefined. */
export function passwordProblem(password: string, login?: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) {
    return `a password has at least ${MIN_PASSWORD_LENGTH} characters`;
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return `a password has at most ${MAX_PASSWORD_LENGTH} characters`;
  }
  if (login !== undefined && password.toLowerCase().includes(login.toLowerCase())) {
    return 'a password must not contain the login';
  }
  return undefined;
}

/** A temporary password an operator reads out once (a reset, a new account): 16 characters. */
export function temporaryPassword(): string {
  return randomBytes(12).toString('base64url');
}
