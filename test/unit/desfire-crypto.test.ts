// The DESFire cryptography against published examples: NIST's CMAC examples for two-key triple
// DES, DESFire's CRC32 as libfreefare and the Proxmark3 client compute it, and the session keys
// and IV chaining of a real card's exchanges (test/unit/desfire-worked-examples.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cmac, tripleDes } from '../../service/card/block-cipher.ts';
import {
  AuthenticationChain,
  crc32,
  rotateLeft,
  SecureChannel,
  sessionKey,
  type DesfireKey,
} from '../../service/card/desfire/desfire-crypto.ts';
import { workedExamples, type WorkedStep } from './desfire-worked-examples.ts';

const hex = (text: string) => Buffer.from(text.replaceAll(' ', ''), 'hex');

// The 32 bytes of RFC 4493's / NIST SP 800-38B's example message the TDEA examples use.
const NIST_MESSAGE = hex('6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E51');

describe('block ciphers', () => {
  // NIST SP 800-38B examples, "CMAC-TDEA with two keys" (CSRC TDES_CMAC.pdf), as the Proxmark3
  // client's desfiretest.c checks them (RfidResearchGroup/proxmark3, TestCMAC2TDEA).
  const twoKey = tripleDes(hex('0123456789ABCDEF23456789ABCDEF01'));
  for (const [length, mac] of [
    [0, '79CE52A7F786A960'],
    [16, 'CC18A0B79AF2413B'],
    [20, 'C06D377ECD101969'],
    [32, '9CD33580F9B64DFB'],
  ] as const) {
    test(`when two-key TDEA CMACs the ${length}-byte NIST example, then it is ${mac}`, () => {
      const tag = cmac(twoKey, NIST_MESSAGE.subarray(0, length));
      assert.equal(tag.toString('hex').toUpperCase(), mac);
    });
  }
});

describe('DESFire CRC32', () => {
  test('when a card answers its UID enciphered, then the CRC32 covers the UID and the status byte', () => {
    // Proxmark3 desfiretest.c TestCRC32: UID 04 44 0F 32 76 31 80, CRC32(UID || 00) follows it.
    assert.equal(crc32(hex('04440F3276318000')).toString('hex').toUpperCase(), '99CE1AD4');
  });

  test('when the worked examples change a key, then their CRC32s are these', () => {
    // "CRC Crypto" and "CRC New Key" of the AES section's ChangeKey steps, little-endian.
    const newKey = hex('00102030405060708090A0B0B0A09080');
    assert.equal(
      crc32(Buffer.concat([hex('C400'), newKey, hex('10')])).toString('hex'),
      'd2c6e66b',
    );
    assert.equal(crc32(newKey).toString('hex'), 'bfe37919');
    assert.equal(crc32(hex('540D')).toString('hex'), 'ed09401e');
  });

  test('when a CRC32 is appended, then the CRC32 of the whole is zero (the check a card makes)', () => {
    const data = hex('0C0164000000');
    assert.equal(crc32(Buffer.concat([data, crc32(data)])).toString('hex'), '00000000');
  });
});

/** Every authentication of the worked examples, with the key it was made with. */
function authentications(): { step: WorkedStep; key: DesfireKey }[] {
  const keyOf = (title: string): DesfireKey => {
    const match = /Key= ([0-9A-F ]+) \((DES|2K3DES|AES)\)/.exec(title);
    if (!match) throw new Error(`no key in ${title}`);
    return { type: match[2] === 'AES' ? 'aes' : 'des', key: hex(match[1]!) };
  };
  return Object.values(workedExamples)
    .flat()
    .filter((step) => step.title.startsWith('Authenticate'))
    .map((step) => ({ step, key: keyOf(step.title) }));
}

/** Parity bits (each byte's lowest) do not count in DES keys; the examples show them cleared. */
const withoutParity = (key: Buffer, type: DesfireKey['type']) =>
  type === 'aes' ? key : Buffer.from(key.map((byte) => byte & 0xfe));

describe('mutual authentication', () => {
  const all = authentications();

  test('when the worked examples authenticate, then there are AES, DES and 2K3DES ones', () => {
    assert.deepEqual(
      [...new Set(all.map(({ step }) => /\((\w+)\)\)$/.exec(step.title)?.[1]))].sort(),
      ['2K3DES', 'AES', 'DES'],
    );
  });

  for (const [n, { step, key }] of all.entries()) {
    test(`when authentication ${n + 1} (${key.type}, ${step.title.slice(14, 24)}) runs on the reader's side, then every message and the session key are the card's`, () => {
      const [[, first], [second, last]] = step.exchanges as [[string, string], [string, string]];
      const chain = new AuthenticationChain(key);
      const rndB = chain.decrypt(hex(first).subarray(1));
      assert.equal(rndB.toString('hex').toUpperCase(), step.RndB);
      const rndA = hex(step.RndA!);
      const token = chain.encrypt(Buffer.concat([rndA, rotateLeft(rndB)]));
      assert.equal(token.toString('hex').toUpperCase(), second.slice(2));
      assert.deepEqual(chain.decrypt(hex(last).subarray(1)), rotateLeft(rndA));
      const session = sessionKey(key, rndA, rndB);
      assert.equal(
        withoutParity(session.key, key.type).toString('hex').toUpperCase(),
        step.SessKey,
      );
    });
  }

  test('when the key is single DES (equal halves), then the session key repeats RndA[0..3] RndB[0..3]', () => {
    const key: DesfireKey = { type: 'des', key: Buffer.alloc(16) };
    const session = sessionKey(key, hex('0011223344556677'), hex('8899AABBCCDDEEFF'));
    assert.equal(session.key.toString('hex'), '001122338899aabb001122338899aabb');
  });
});

describe('secure channel', () => {
  test('when the AES session of the worked examples asks GetKeyVersion, then the IV runs through the command and the answer CMACs', () => {
    // AES section: session 90F7A201..., TX CMAC 257FC538..., the answer 10 and its CMAC 8A8FA36F...
    const channel = new SecureChannel(0, {
      type: 'aes',
      key: hex('90F7A20191036845EC63DECD544B9931'),
    });
    channel.mac(hex('6400'));
    assert.equal(channel.iv.toString('hex').toUpperCase(), '257FC538618A944A3A20967B6F314348');
    assert.equal(channel.mac(hex('1000')).toString('hex').toUpperCase(), '8A8FA36F55CD210D');
    assert.equal(channel.iv.toString('hex').toUpperCase(), '8A8FA36F55CD210DD8054658AC70D99A');
  });

  test('when a session encrypts, then the next IV is the last cipher block, and decrypting it back lands on the same IV', () => {
    const key = { type: 'aes' as const, key: hex('000102030405060708090A0B0C0D0E0F') };
    const reader = new SecureChannel(1, key);
    const card = new SecureChannel(1, key);
    const sealed = reader.encrypt(reader.pad(hex('0C0164000000')));
    assert.equal(sealed.length, 16);
    assert.deepEqual(card.decrypt(sealed).subarray(0, 6), hex('0C0164000000'));
    assert.deepEqual(reader.iv, sealed);
    assert.deepEqual(card.iv, sealed);
  });
});
