/**
 * The blocklist feed for machines (docs/card-format.md section 10) against its test vector: the
 * ledger's signer writes the documented bytes, and a machine that holds only the raw public
 * key checks them as the page says, without canonicalizing anything itself.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  keyIdOf,
  rawPublicKey,
  signBlocklist,
  type BlocklistPayload,
} from '../../cloud/cards/blocklist-feed.ts';
import { canonicalJson } from '../../common/canonical-json.ts';
import { readDocVectors } from '../support/doc-vectors.ts';

interface FeedVectors {
  privateKeySeed: string;
  publicKey: string;
  keyId: string;
  payload: BlocklistPayload;
  document: string;
}

const vectors = readDocVectors<FeedVectors>('card-format.md', 'Blocklist test vectors');
/** PKCS #8 and SPKI wrappers of raw Ed25519 keys (RFC 8410). */
const privateKeyOf = (seed: string) =>
  createPrivateKey({
    key: Buffer.from(`302e020100300506032b657004220420${seed}`, 'hex'),
    format: 'der',
    type: 'pkcs8',
  });
const publicKeyOf = (raw: string) =>
  createPublicKey({
    key: Buffer.from(`302a300506032b6570032100${raw}`, 'hex'),
    format: 'der',
    type: 'spki',
  });

/** What a machine does (section 10, "Checking it"): the payload, or why it refused. */
function machineReads(document: Buffer, key: KeyObject): BlocklistPayload | string {
  const head = Buffer.from('{"blocklist":');
  const tail = /,"signature":"([0-9a-f]{128})"\}$/.exec(document.toString('latin1'));
  if (!document.subarray(0, head.length).equals(head) || !tail) return 'not a blocklist';
  const payload = document.subarray(head.length, document.length - tail[0].length);
  if (!verify(null, payload, key, Buffer.from(tail[1] as string, 'hex'))) return 'bad signature';
  return JSON.parse(payload.toString('utf8')) as BlocklistPayload;
}

describe('the blocklist feed test vector (docs/card-format.md)', () => {
  const privateKey = privateKeyOf(vectors.privateKeySeed);

  test('when the vector key is read, then its raw public key and key id are the documented ones', () => {
    assert.equal(rawPublicKey(createPublicKey(privateKey)), vectors.publicKey);
    assert.equal(keyIdOf(vectors.publicKey), vectors.keyId);
    assert.equal(vectors.payload.keyId, vectors.keyId);
  });

  test('when the payload is signed, then the document is the documented bytes, whatever order its members came in', () => {
    assert.equal(signBlocklist(vectors.payload, privateKey), vectors.document);
    const reordered = Object.fromEntries(
      Object.entries(vectors.payload).reverse(),
    ) as unknown as BlocklistPayload;
    assert.equal(signBlocklist(reordered, privateKey), vectors.document);
  });

  test('when a machine with only the raw public key reads the document, then it gets the payload; one byte changed anywhere, it refuses', () => {
    const key = publicKeyOf(vectors.publicKey);
    const document = Buffer.from(vectors.document, 'utf8');
    assert.deepEqual(machineReads(document, key), vectors.payload);
    // A card id unblocked, the sequence number set back, the signature touched: all refused.
    for (const [from, to] of [
      ['07000501', '07000502'],
      ['"seq":7', '"seq":6'],
      ['"signature":"38', '"signature":"39'],
    ] as const) {
      const changed = Buffer.from(vectors.document.replace(from, to), 'utf8');
      assert.notDeepEqual(changed, document);
      assert.equal(machineReads(changed, key), 'bad signature', `${from} -> ${to}`);
    }
    const otherShop = publicKeyOf(rawPublicKey(createPublicKey(privateKeyOf('11'.repeat(32)))));
    assert.equal(machineReads(document, otherShop), 'bad signature');
  });
});

describe('canonical JSON (RFC 8785)', () => {
  test('when values are canonicalized, then members sort by UTF-16 code units, without whitespace, with ECMAScript numbers and escapes', () => {
    // U+FB01 sorts after the surrogate pair of U+1F600 by UTF-16 code units (not by code points).
    assert.equal(
      canonicalJson({ b: [1, 'x'], a: { d: null, c: true }, é: 1, '\ufb01': 2, '\ud83d\ude00': 3 }),
      '{"a":{"c":true,"d":null},"b":[1,"x"],"é":1,"\ud83d\ude00":3,"\ufb01":2}',
    );
    // RFC 8785 section 3.2.2.3's numbers, and its string escapes.
    assert.equal(
      canonicalJson([1e21, 1e-7, -0, 0.000001, 333333333.3333333]),
      '[1e+21,1e-7,0,0.000001,333333333.3333333]',
    );
    assert.equal(canonicalJson('\u000f\n"\\/'), '"\\u000f\\n\\"\\\\/"');
  });

  test('when a value is not I-JSON, then it is refused rather than signed', () => {
    for (const value of [Number.NaN, Infinity, '\ud800', { a: undefined }, 1n, new Date(0)]) {
      assert.throws(() => canonicalJson(value), TypeError, String(value));
    }
  });
});
