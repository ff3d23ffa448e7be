// What the MIFARE Classic wallet format says when it refuses (docs/card-format.md): a corrupt
// card's reason, and the RangeError of each programmer's error, word for word, since they are
// what an operator or a developer reads of a card the till will not touch.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decideWrite,
  decodeSlot,
  decodeWallet,
  encodeValueBlock,
  formatCardId,
  planWrite,
  sectorBlocks,
} from '../../service/card/wallet-format.ts';

const BLANK = Buffer.alloc(16);
const INVALID = Buffer.alloc(16, 0xa5);

describe("a corrupt card's reason", () => {
  test('when no slot holds a value, then the reason names what each holds', () => {
    assert.deepEqual(decodeWallet(INVALID, BLANK), {
      kind: 'corrupt',
      reason: 'no valid slot (slot 0 invalid, slot 1 blank)',
    });
    assert.deepEqual(decodeWallet(BLANK, INVALID), {
      kind: 'corrupt',
      reason: 'no valid slot (slot 0 blank, slot 1 invalid)',
    });
  });

  test('when both slots hold one generation, or two 128 apart, then the reason says so', () => {
    assert.deepEqual(decodeWallet(encodeValueBlock(5, 9), encodeValueBlock(6, 9)), {
      kind: 'corrupt',
      reason: 'both slots hold generation 9',
    });
    assert.deepEqual(decodeWallet(encodeValueBlock(5, 1), encodeValueBlock(6, 129)), {
      kind: 'corrupt',
      reason: 'generations 1 and 129 are 128 apart: neither is newer',
    });
  });
});

describe("the format's refusals, word for word", () => {
  test('when a sector, value, generation or block is out of range, then its RangeError says which and what it got', () => {
    assert.throws(() => sectorBlocks(40), {
      name: 'RangeError',
      message: 'wallet sector must be an integer in 1..39, got 40',
    });
    assert.throws(() => encodeValueBlock(2 ** 31, 1), {
      name: 'RangeError',
      message: `value must be an int32, got ${2 ** 31}`,
    });
    assert.throws(() => encodeValueBlock(1, 256), {
      name: 'RangeError',
      message: 'generation must be an integer in 0..255, got 256',
    });
    assert.throws(() => decodeSlot(Buffer.alloc(15)), {
      name: 'RangeError',
      message: 'a slot is 16 bytes, got 15',
    });
    assert.throws(() => planWrite({ kind: 'blank' }, 1.5), {
      name: 'RangeError',
      message: 'newBalance must be an int32, got 1.5',
    });
    const corrupt = { kind: 'corrupt', reason: 'x' } as unknown as Parameters<typeof planWrite>[0];
    assert.throws(() => planWrite(corrupt, 1), {
      name: 'RangeError',
      message: 'a corrupt card is never written',
    });
  });

  test('when a write to decide is not one the format plans, then its RangeError says why', () => {
    const intent = { slot: 0 as const, value: 5, generation: 1, previousBalance: null };
    assert.throws(() => decideWrite({ ...intent, slot: 2 as 0 }, BLANK, BLANK), {
      name: 'RangeError',
      message: 'slot must be 0 or 1, got 2',
    });
    assert.throws(() => decideWrite({ ...intent, generation: 2 }, BLANK, BLANK), {
      name: 'RangeError',
      message: 'a write from a blank card is slot 0, generation 1',
    });
    assert.throws(() => decideWrite({ ...intent, previousBalance: 2 ** 31 }, BLANK, BLANK), {
      name: 'RangeError',
      message: `previousBalance must be an int32, got ${2 ** 31}`,
    });
  });

  test('when a UID is not 4 or 7 bytes, then its RangeError shows what it got', () => {
    assert.throws(() => formatCardId('04:A1:B2'), {
      name: 'RangeError',
      message: 'a card UID is 4 or 7 bytes, got "04:A1:B2"',
    });
    assert.throws(() => formatCardId(Buffer.alloc(5)), {
      name: 'RangeError',
      message: 'a card UID is 4 or 7 bytes, got 5 bytes',
    });
  });
});
