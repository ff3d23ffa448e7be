import {
  aes128,
  cbcDecrypt,
  cbcEncrypt,
  cmac,
  lastBlock,
  tripleDes,
  type BlockCipher,
} from '../block-cipher.ts';

/**
 * MIFARE DESFire EV1 cryptography shared by the reader side (desfire-client.ts) and the virtual
 * card (simulator/virtual-desfire-card.ts), so both run the same code in the same order:
 *
 * - the three-pass mutual authentication's rotations and the session key it yields, for AES
 *   keys (command AA) and for DES / 2K3DES keys in ISO mode (command 1A, the factory key);
 * - the secure channel of an authenticated session: one running IV, chained through every
 *   CMAC, encryption and decryption of the session, both ways;
 * - DESFire's CRC32 (the IEEE polynomial, preset FFFFFFFF, no final inversion, little-endian).
 *
 * Worked examples that pin these down are in test/unit/desfire-crypto.test.ts.
 */

/** The key types a DESFire key can have here. */
export type DesfireKeyType = 'aes' | 'des';

/** A DESFire key: AES-128, or DES / 2K3DES (16 bytes; equal halves are single DES). */
export interface DesfireKey {
  type: DesfireKeyType;
  key: Buffer;
}

export function cipherOf(key: DesfireKey): BlockCipher {
  return key.type === 'aes' ? aes128(key.key) : tripleDes(key.key);
}

/** Rotates left by one byte: RndB' and RndA' of the authentication. */
export function rotateLeft(data: Buffer): Buffer {
  return Buffer.concat([data.subarray(1), data.subarray(0, 1)]);
}

/**
 * The session key of a mutual authentication (MIFARE DESFire EV1 datasheet, "Authenticate"):
 * AES: RndA[0..3] RndB[0..3] RndA[12..15] RndB[12..15]; 2K3DES: RndA[0..3] RndB[0..3] RndA[4..7]
 * RndB[4..7]; single DES (a key whose halves are equal): RndA[0..3] RndB[0..3] twice.
 */
export function sessionKey(key: DesfireKey, rndA: Buffer, rndB: Buffer): DesfireKey {
  const part = (from: Buffer, start: number) => from.subarray(start, start + 4);
  if (key.type === 'aes') {
    return {
      type: 'aes',
      key: Buffer.concat([part(rndA, 0), part(rndB, 0), part(rndA, 12), part(rndB, 12)]),
    };
  }
  const singleDes = key.key.subarray(0, 8).equals(key.key.subarray(8, 16));
  const second = singleDes ? 0 : 4;
  return {
    type: 'des',
    key: Buffer.concat([part(rndA, 0), part(rndB, 0), part(rndA, second), part(rndB, second)]),
  };
}

/** The random numbers' length in a mutual authentication: one cipher block. */
export function challengeLength(key: DesfireKey): 8 | 16 {
  return key.type === 'aes' ? 16 : 8;
}

/**
 * The CBC chain of one authentication exchange (the IV starts at zero and runs through the
 * three messages); the reader and the card each keep one.
 */
export class AuthenticationChain {
  readonly #cipher: BlockCipher;
  #iv: Buffer;

  constructor(key: DesfireKey) {
    this.#cipher = cipherOf(key);
    this.#iv = Buffer.alloc(this.#cipher.blockSize);
  }

  encrypt(plain: Buffer): Buffer {
    const out = cbcEncrypt(this.#cipher, this.#iv, plain);
    this.#iv = lastBlock(this.#cipher, out);
    return out;
  }

  decrypt(encrypted: Buffer): Buffer {
    const out = cbcDecrypt(this.#cipher, this.#iv, encrypted);
    this.#iv = lastBlock(this.#cipher, encrypted);
    return out;
  }
}

/** The MAC sent on the wire: the first 8 bytes of the CMAC. */
export const MAC_LENGTH = 8;

/**
 * An authenticated session's secure channel (EV1 secure messaging): every CMAC, encryption and
 * decryption chains from the running IV and leaves the IV where the datasheet says: the whole
 * CMAC after a MAC, the last encrypted block after an encryption or a decryption. The IV starts
 * at zero when the session starts.
 */
export class SecureChannel {
  readonly keyNo: number;
  readonly #cipher: BlockCipher;
  #iv: Buffer;

  constructor(keyNo: number, session: DesfireKey) {
    this.keyNo = keyNo;
    this.#cipher = cipherOf(session);
    this.#iv = Buffer.alloc(this.#cipher.blockSize);
  }

  get blockSize(): number {
    return this.#cipher.blockSize;
  }

  /** A copy of the running IV (for tests and worked examples). */
  get iv(): Buffer {
    return Buffer.from(this.#iv);
  }

  /** CMAC of `data` from the running IV; the IV becomes it. Returns the 8 bytes sent. */
  mac(data: Buffer): Buffer {
    this.#iv = cmac(this.#cipher, data, this.#iv);
    return Buffer.from(this.#iv.subarray(0, MAC_LENGTH));
  }

  /** Encrypts whole blocks from the running IV. */
  encrypt(plain: Buffer): Buffer {
    const out = cbcEncrypt(this.#cipher, this.#iv, plain);
    this.#iv = lastBlock(this.#cipher, out);
    return out;
  }

  /** Decrypts whole blocks from the running IV. */
  decrypt(encrypted: Buffer): Buffer {
    if (encrypted.length === 0 || encrypted.length % this.#cipher.blockSize !== 0) {
      throw new RangeError(`${encrypted.length} bytes are not whole cipher blocks`);
    }
    const out = cbcDecrypt(this.#cipher, this.#iv, encrypted);
    this.#iv = lastBlock(this.#cipher, encrypted);
    return out;
  }

  /** `data` padded with zero bytes to whole cipher blocks (nothing added when already whole). */
  pad(data: Buffer): Buffer {
    const size = this.#cipher.blockSize;
    const length = Math.max(size, Math.ceil(data.length / size) * size);
    const out = Buffer.alloc(length);
    data.copy(out);
    return out;
  }
}

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let bit = 0; bit < 8; bit += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** DESFire's CRC32 of `data`, as the 4 bytes sent (little-endian). */
export function crc32(data: Buffer): Buffer {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC32_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32LE(crc >>> 0);
  return out;
}
