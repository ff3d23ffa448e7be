import { createCipheriv, createDecipheriv } from 'node:crypto';

/**
 * The block ciphers the cards speak, one block at a time, and the modes built on them: CBC with
 * an explicit IV and CMAC (RFC 4493, NIST SP 800-38B) with an optional starting IV, which is
 * what MIFARE DESFire's secure messaging chains through every command. Pure functions over
 * node:crypto; AES-128 for per-card keys and DESFire EV1 AES sessions, two-key triple DES for
 * a DESFire card's factory key (single DES is 2K3DES with both halves equal).
 */
export interface BlockCipher {
  readonly blockSize: 8 | 16;
  encrypt(block: Buffer): Buffer;
  decrypt(block: Buffer): Buffer;
}

/** AES-128 of single blocks (ECB of exactly one block is the raw cipher). */
export function aes128(key: Buffer): BlockCipher {
  if (key.length !== 16) throw new RangeError(`an AES-128 key is 16 bytes, not ${key.length}`);
  const secret = Buffer.from(key);
  const run = (decrypt: boolean, block: Buffer) => {
    const cipher = decrypt
      ? createDecipheriv('aes-128-ecb', secret, null)
      : createCipheriv('aes-128-ecb', secret, null);
    cipher.setAutoPadding(false);
    return Buffer.concat([cipher.update(block), cipher.final()]);
  };
  return {
    blockSize: 16,
    encrypt: (block) => run(false, checkBlock(block, 16)),
    decrypt: (block) => run(true, checkBlock(block, 16)),
  };
}

/**
 * Two-key triple DES (K1 K2 K1) of single blocks; an 8-byte key is single DES (K1 K1 K1). The
 * parity bits (each byte's lowest), where DESFire keeps a DES key's version, do not matter.
 * Built on des-ede3-cbc with a zero IV because OpenSSL 3 keeps single DES in its legacy provider
 * and BoringSSL (Electron) names fewer ECB modes.
 */
export function tripleDes(key: Buffer): BlockCipher {
  if (key.length !== 8 && key.length !== 16) {
    throw new RangeError(`a DES or 2K3DES key is 8 or 16 bytes, not ${key.length}`);
  }
  const k1 = key.subarray(0, 8);
  const k2 = key.length === 16 ? key.subarray(8, 16) : k1;
  const secret = Buffer.concat([k1, k2, k1]);
  const zero = Buffer.alloc(8);
  const run = (decrypt: boolean, block: Buffer) => {
    const cipher = decrypt
      ? createDecipheriv('des-ede3-cbc', secret, zero)
      : createCipheriv('des-ede3-cbc', secret, zero);
    cipher.setAutoPadding(false);
    return Buffer.concat([cipher.update(block), cipher.final()]);
  };
  return {
    blockSize: 8,
    encrypt: (block) => run(false, checkBlock(block, 8)),
    decrypt: (block) => run(true, checkBlock(block, 8)),
  };
}

function checkBlock(block: Buffer, size: number): Buffer {
  if (block.length !== size) throw new RangeError(`a block is ${size} bytes, not ${block.length}`);
  return block;
}

export function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i += 1) out[i] = (a[i] ?? 0) ^ (b[i] ?? 0);
  return out;
}

function checkWhole(cipher: BlockCipher, data: Buffer, iv: Buffer): void {
  if (data.length % cipher.blockSize !== 0) {
    throw new RangeError(`${data.length} bytes are not whole ${cipher.blockSize}-byte blocks`);
  }
  if (iv.length !== cipher.blockSize) throw new RangeError(`an IV is ${cipher.blockSize} bytes`);
}

/** CBC encryption of whole blocks; the next IV of a chain is the last block of the result. */
export function cbcEncrypt(cipher: BlockCipher, iv: Buffer, data: Buffer): Buffer {
  checkWhole(cipher, data, iv);
  const out = Buffer.alloc(data.length);
  let chain = iv;
  for (let offset = 0; offset < data.length; offset += cipher.blockSize) {
    chain = cipher.encrypt(xor(data.subarray(offset, offset + cipher.blockSize), chain));
    chain.copy(out, offset);
  }
  return out;
}

/** CBC decryption of whole blocks; the next IV of a chain is the last block of `data`. */
export function cbcDecrypt(cipher: BlockCipher, iv: Buffer, data: Buffer): Buffer {
  checkWhole(cipher, data, iv);
  const out = Buffer.alloc(data.length);
  let chain = iv;
  for (let offset = 0; offset < data.length; offset += cipher.blockSize) {
    const block = data.subarray(offset, offset + cipher.blockSize);
    xor(cipher.decrypt(Buffer.from(block)), chain).copy(out, offset);
    chain = block;
  }
  return out;
}

/** The last block of a CBC chain: its next IV. */
export function lastBlock(cipher: BlockCipher, data: Buffer): Buffer {
  return Buffer.from(data.subarray(data.length - cipher.blockSize));
}

/** Doubling in GF(2^n) (RFC 4493 2.3; R is 0x87 for 128-bit blocks, 0x1B for 64-bit ones). */
function double(block: Buffer): Buffer {
  const size = block.length;
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) {
    out[i] = (((block[i] ?? 0) << 1) | ((block[i + 1] ?? 0) >> 7)) & 0xff;
  }
  if (((block[0] ?? 0) & 0x80) !== 0)
    out[size - 1] = (out[size - 1] ?? 0) ^ (size === 16 ? 0x87 : 0x1b);
  return out;
}

/** CMAC subkeys K1 and K2 from L = E(K, 0^n). */
export function cmacSubkeys(cipher: BlockCipher): { k1: Buffer; k2: Buffer } {
  const k1 = double(cipher.encrypt(Buffer.alloc(cipher.blockSize)));
  return { k1, k2: double(k1) };
}

/**
 * CMAC of `message` padded to `length` bytes (a multiple of the block size, at least the
 * message's): the last block is XORed with K1 when no padding was needed, else the message is
 * padded 80 00.. and the last block takes K2. `iv` starts the CBC chain (zero in RFC 4493;
 * DESFire's running IV in a secure session). Returns the whole last block.
 */
export function cmacPadded(
  cipher: BlockCipher,
  message: Buffer,
  length: number,
  iv: Buffer = Buffer.alloc(cipher.blockSize),
): Buffer {
  const { k1, k2 } = cmacSubkeys(cipher);
  const complete = message.length === length;
  const padded = Buffer.alloc(length);
  message.copy(padded);
  if (!complete) padded[message.length] = 0x80;
  const last = padded.subarray(length - cipher.blockSize);
  xor(last, complete ? k1 : k2).copy(last);
  return lastBlock(cipher, cbcEncrypt(cipher, iv, padded));
}

/** CMAC (RFC 4493 for AES, SP 800-38B for DES), optionally chained from `iv`. */
export function cmac(cipher: BlockCipher, message: Buffer, iv?: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(message.length / cipher.blockSize));
  return cmacPadded(cipher, message, blocks * cipher.blockSize, iv);
}
