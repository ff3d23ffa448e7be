import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  WALLET_ACCESS_CONDITIONS,
  aesCmac,
  cardKeyFromSlotMaster,
  cmacSubkeys,
  dataBlockPermissions,
  decodeAccessBits,
  deriveCardKey,
  deriveSectorKeys,
  diversificationInput,
  diversifyAes128,
  encodeAccessBits,
  parseMasterKey,
  slotMasterKey,
  trailerPermissions,
  walletSectorTrailer,
} from '../../service/card/card-keys.ts';
import { readDocVectors } from '../support/doc-vectors.ts';

// Test vectors, read from the page integrators and vending-machine makers read.
interface KeyVectors {
  cmacSubkeys: { key: string; k1: string; k2: string }[];
  cmac: { name: string; key: string; message: string; mac: string }[];
  an10922: { name: string; masterKey: string; input: string; key: string }[];
  slotMasters: { masterKey: string; keyAMaster: string; keyBMaster: string }[];
  cardKeys: {
    name: string;
    masterKey: string;
    uid: string;
    sector: number;
    inputA: string;
    diversifiedA: string;
    keyA: string;
    inputB: string;
    diversifiedB: string;
    keyB: string;
    trailer: string;
  }[];
  accessBits: { name: string; bytes: string; conditions: string[] | null }[];
}

const vectors = readDocVectors<KeyVectors>('card-format.md', 'Key test vectors');
const bytes = (hex: string): Buffer => {
  assert.match(hex, /^(?:[0-9A-F]{2})*$/, `hex in the vectors is uppercase pairs: ${hex}`);
  return Buffer.from(hex, 'hex');
};
const hex = (buffer: Buffer): string => buffer.toString('hex').toUpperCase();

describe('AES-CMAC (RFC 4493 section 4 vectors, from docs/card-format.md)', () => {
  for (const v of vectors.cmacSubkeys) {
    it(`when the subkeys of ${v.key} are generated, then K1 and K2 are RFC 4493's`, () => {
      const { k1, k2 } = cmacSubkeys(bytes(v.key));
      assert.equal(hex(k1), v.k1);
      assert.equal(hex(k2), v.k2);
    });
  }
  for (const v of vectors.cmac) {
    it(`when the CMAC of ${v.name} is computed, then it is ${v.mac}`, () => {
      assert.equal(hex(aesCmac(bytes(v.key), bytes(v.message))), v.mac);
    });
  }
  it('when the vectors are read, then all four RFC examples are there', () => {
    assert.equal(vectors.cmac.length, 4);
  });
});

describe('AN10922 AES-128 diversification', () => {
  for (const v of vectors.an10922) {
    it(`when ${v.name} is diversified, then the key is ${v.key}`, () => {
      assert.equal(hex(diversifyAes128(bytes(v.masterKey), bytes(v.input))), v.key);
    });
  }

  it('when the input is 16 to 31 bytes, then it equals CMAC(K, 0x01 || M) exactly', () => {
    const key = bytes('000102030405060708090A0B0C0D0E0F');
    for (const length of [16, 17, 30, 31]) {
      const input = Buffer.alloc(length, 0x5a);
      assert.deepEqual(
        diversifyAes128(key, input),
        aesCmac(key, Buffer.concat([Buffer.from([1]), input])),
        `length ${length}`,
      );
    }
  });

  it('when the input is up to 15 bytes, then it is padded to two blocks, unlike plain CMAC', () => {
    const key = bytes('000102030405060708090A0B0C0D0E0F');
    const input = Buffer.alloc(7, 0x5a);
    assert.notDeepEqual(
      diversifyAes128(key, input),
      aesCmac(key, Buffer.concat([Buffer.from([1]), input])),
    );
  });

  it('when the input is empty or longer than 31 bytes, or the key is not 16 bytes, then it throws', () => {
    const key = Buffer.alloc(16);
    assert.throws(() => diversifyAes128(key, Buffer.alloc(0)), RangeError);
    assert.throws(() => diversifyAes128(key, Buffer.alloc(32)), RangeError);
    assert.throws(() => diversifyAes128(Buffer.alloc(15), Buffer.alloc(4)), RangeError);
  });
});

describe('per-card wallet keys (docs/card-format.md section 8)', () => {
  for (const v of vectors.slotMasters) {
    it(`when the slot masters of ${v.masterKey} are derived, then they are AN10922(master, "CardWallet key A" / "... key B")`, () => {
      const master = bytes(v.masterKey);
      assert.equal(hex(slotMasterKey(master, 'A')), v.keyAMaster);
      assert.equal(hex(slotMasterKey(master, 'B')), v.keyBMaster);
      assert.equal(
        hex(diversifyAes128(master, Buffer.from('CardWallet key A', 'ascii'))),
        v.keyAMaster,
      );
    });
  }

  for (const v of vectors.cardKeys) {
    it(`when the keys of ${v.name} are derived, then M, the diversified keys, keys A and B and the trailer match`, () => {
      const master = bytes(v.masterKey);
      const uid = bytes(v.uid);
      assert.equal(hex(diversificationInput(uid, v.sector, 'A')), v.inputA);
      assert.equal(hex(diversificationInput(uid, v.sector, 'B')), v.inputB);
      const masterA = slotMasterKey(master, 'A');
      const masterB = slotMasterKey(master, 'B');
      assert.equal(hex(diversifyAes128(masterA, bytes(v.inputA))), v.diversifiedA);
      assert.equal(hex(diversifyAes128(masterB, bytes(v.inputB))), v.diversifiedB);
      assert.equal(v.keyA, v.diversifiedA.slice(0, 12), 'key A is the first 6 bytes');
      assert.equal(v.keyB, v.diversifiedB.slice(0, 12), 'key B is the first 6 bytes');
      const keys = deriveSectorKeys(master, uid, v.sector);
      assert.equal(hex(keys.keyA), v.keyA);
      assert.equal(hex(keys.keyB), v.keyB);
      assert.equal(hex(deriveCardKey(master, uid, v.sector, 'A')), v.keyA);
      // What a vending machine computes from the key-A master alone.
      assert.equal(hex(cardKeyFromSlotMaster(masterA, uid, v.sector, 'A')), v.keyA);
      assert.equal(hex(walletSectorTrailer(keys)), v.trailer);
    });
  }

  it('when any input byte changes (UID, sector, key slot, master key), then the key changes', () => {
    const master = bytes('000102030405060708090A0B0C0D0E0F');
    const uid = bytes('04A1B2C3');
    const base = hex(deriveCardKey(master, uid, 1, 'A'));
    const variants = [
      deriveCardKey(master, bytes('04A1B2C2'), 1, 'A'),
      deriveCardKey(master, uid, 2, 'A'),
      deriveCardKey(master, uid, 1, 'B'),
      deriveCardKey(bytes('000102030405060708090A0B0C0D0E0E'), uid, 1, 'A'),
    ].map(hex);
    assert.equal(new Set([base, ...variants]).size, 5);
  });

  it('when the UID is not 4 or 7 bytes or the sector is out of 0..39, then it throws', () => {
    const master = Buffer.alloc(16);
    assert.throws(() => deriveSectorKeys(master, Buffer.alloc(5), 1), RangeError);
    assert.throws(() => deriveSectorKeys(master, Buffer.alloc(4), 40), RangeError);
  });

  it('when a master key is parsed, then 32 hex digits of any case are accepted and anything else refused', () => {
    assert.equal(
      hex(parseMasterKey('000102030405060708090a0b0c0d0e0f')),
      '000102030405060708090A0B0C0D0E0F',
    );
    for (const bad of [
      '',
      '00',
      '000102030405060708090A0B0C0D0E0',
      '000102030405060708090A0B0C0D0E0G',
    ]) {
      assert.throws(() => parseMasterKey(bad), RangeError, bad);
    }
  });
});

describe('access bits of the wallet sector trailer', () => {
  for (const v of vectors.accessBits) {
    it(`when ${v.name} (${v.bytes}) is decoded, then the conditions are ${JSON.stringify(v.conditions)}`, () => {
      const decoded = decodeAccessBits(bytes(v.bytes));
      assert.deepEqual(
        decoded?.map((condition) => condition.toString(2).padStart(3, '0')) ?? null,
        v.conditions,
      );
      if (v.conditions) {
        assert.equal(hex(encodeAccessBits(v.conditions.map((c) => parseInt(c, 2)))), v.bytes);
      }
    });
  }

  it('when the wallet trailer is decoded, then key B reads, writes and increments the slots and key A only reads and decrements', () => {
    const trailer = walletSectorTrailer({
      keyA: Buffer.alloc(6, 0xaa),
      keyB: Buffer.alloc(6, 0xbb),
    });
    const conditions = decodeAccessBits(trailer.subarray(6, 9));
    assert.deepEqual(conditions, [...WALLET_ACCESS_CONDITIONS]);
    const [slot0, slot1, reserved, trailerBlock] = conditions ?? [];
    for (const slot of [slot0, slot1]) {
      assert.deepEqual(dataBlockPermissions(slot ?? -1), {
        read: 'AB',
        write: 'B',
        increment: 'B',
        decrement: 'AB',
      });
    }
    assert.deepEqual(dataBlockPermissions(reserved ?? -1), {
      read: 'AB',
      write: 'B',
      increment: 'never',
      decrement: 'never',
    });
    assert.deepEqual(trailerPermissions(trailerBlock ?? -1), {
      keyARead: 'never',
      keyAWrite: 'B',
      accessBitsRead: 'AB',
      accessBitsWrite: 'B',
      keyBRead: 'never',
      keyBWrite: 'B',
    });
    assert.equal(trailer[9], 0x69);
  });

  it('when every 3-bit condition of every block is encoded, then decoding gives it back', () => {
    for (let combo = 0; combo < 8 ** 4; combo += 1) {
      const conditions = [0, 1, 2, 3].map((block) => (combo >> (3 * block)) & 7);
      assert.deepEqual(decodeAccessBits(encodeAccessBits(conditions)), conditions);
    }
  });

  it('when any single bit of valid access bits flips, then they no longer decode', () => {
    const valid = encodeAccessBits(WALLET_ACCESS_CONDITIONS);
    for (let bit = 0; bit < 24; bit += 1) {
      const flipped = Buffer.from(valid);
      flipped[bit >> 3] = (flipped[bit >> 3] ?? 0) ^ (1 << (bit & 7));
      assert.equal(decodeAccessBits(flipped), undefined, `bit ${bit}`);
    }
  });
});
