import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  INT32_MAX,
  INT32_MIN,
  MAX_CARD_BALANCE,
  WALLET_FORMAT_VERSION,
  decideWrite,
  decodeSlot,
  decodeWallet,
  encodeValueBlock,
  formatCardId,
  isCardId,
  isNewerGeneration,
  isValidWalletSector,
  planWrite,
  sectorBlocks,
  type SlotContent,
  type WalletState,
  type WriteIntent,
} from '../../service/card/wallet-format.ts';
import { readDocVectors } from '../support/doc-vectors.ts';

// ---------------------------------------------------------------------------------------------
// Test vectors, read from the document integrators read, so the two cannot drift apart.

interface Vectors {
  format: number;
  valueBlocks: { name: string; value: number; generation: number; block: string }[];
  slots: { name: string; block: string; expected: SlotContent }[];
  wallets: { name: string; slot0: string; slot1: string; expected: WalletState }[];
  writes: {
    name: string;
    slot0: string;
    slot1: string;
    newBalance: number;
    expected: { slot: 0 | 1; generation: number; previousBalance: number | null; block: string };
  }[];
  decisions: {
    name: string;
    intent: WriteIntent;
    slot0: string;
    slot1: string;
    expected: 'committed' | 'not-committed' | 'unknown';
  }[];
}

const vectors = readDocVectors<Vectors>('card-format.md', 'Test vectors');
const block = (hex: string): Buffer => {
  assert.match(hex, /^[0-9A-F]{32}$/, `a block in the vectors is 32 uppercase hex characters`);
  return Buffer.from(hex, 'hex');
};
const hex = (buffer: Buffer): string => buffer.toString('hex').toUpperCase();

/** The parts of a wallet state the vectors pin; a corrupt card's reason is free text. */
function comparable(state: WalletState): WalletState {
  return state.kind === 'corrupt' ? ({ kind: 'corrupt' } as WalletState) : state;
}

describe('wallet format test vectors (docs/card-format.md)', () => {
  it('when the vectors are read, then they are for this format version and none is empty', () => {
    assert.equal(vectors.format, WALLET_FORMAT_VERSION);
    for (const list of [vectors.valueBlocks, vectors.slots, vectors.wallets, vectors.writes]) {
      assert.ok(list.length > 0);
    }
    assert.ok(vectors.decisions.length > 0);
  });

  for (const v of vectors.valueBlocks) {
    it(`when ${v.name} is encoded and decoded, then it matches the vector both ways`, () => {
      assert.equal(hex(encodeValueBlock(v.value, v.generation)), v.block);
      assert.deepEqual(decodeSlot(block(v.block)), {
        kind: 'value',
        value: v.value,
        generation: v.generation,
      });
    });
  }

  for (const v of vectors.slots) {
    it(`when the slot is "${v.name}", then it decodes as ${v.expected.kind}`, () => {
      assert.deepEqual(decodeSlot(block(v.block)), v.expected);
    });
  }

  for (const v of vectors.wallets) {
    it(`when the card holds "${v.name}", then the wallet is ${v.expected.kind}`, () => {
      const state = decodeWallet(block(v.slot0), block(v.slot1));
      assert.deepEqual(comparable(state), v.expected);
      if (state.kind === 'corrupt') assert.ok(state.reason.length > 0);
      // The other way: the active slot is exactly the encoding of the balance it reports.
      if (v.expected.kind === 'valid') {
        const active = v.expected.activeSlot === 0 ? v.slot0 : v.slot1;
        assert.equal(hex(encodeValueBlock(v.expected.balance, v.expected.generation)), active);
      }
    });
  }

  for (const v of vectors.writes) {
    it(`when writing "${v.name}", then the planned block matches and decides both ways`, () => {
      const before = [block(v.slot0), block(v.slot1)] as const;
      const state = decodeWallet(before[0], before[1]);
      assert.notEqual(state.kind, 'corrupt');
      if (state.kind === 'corrupt') return;
      const plan = planWrite(state, v.newBalance);
      assert.deepEqual({ ...plan, block: hex(plan.block) }, { ...v.expected, value: v.newBalance });
      const after: [Buffer, Buffer] = [before[0], before[1]];
      after[plan.slot] = plan.block;
      assert.equal(decideWrite(plan, before[0], before[1]), 'not-committed');
      assert.equal(decideWrite(plan, after[0], after[1]), 'committed');
      assert.deepEqual(decodeWallet(after[0], after[1]), {
        kind: 'valid',
        balance: v.newBalance,
        generation: v.expected.generation,
        activeSlot: v.expected.slot,
        backup: state.kind === 'valid' ? 'valid' : 'blank',
      });
    });
  }

  for (const v of vectors.decisions) {
    it(`when deciding "${v.name}", then the write is ${v.expected}`, () => {
      assert.equal(decideWrite(v.intent, block(v.slot0), block(v.slot1)), v.expected);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Examples

describe('sector geometry', () => {
  it('when the sector is one of 1..31, then it has 4 blocks, the slots are its first two and the spare block the third', () => {
    assert.deepEqual(sectorBlocks(1), { first: 4, slots: [4, 5], spare: 6, trailer: 7 });
    assert.deepEqual(sectorBlocks(15), { first: 60, slots: [60, 61], spare: 62, trailer: 63 });
    assert.deepEqual(sectorBlocks(31), { first: 124, slots: [124, 125], spare: 126, trailer: 127 });
  });

  it('when the sector is one of 32..39 (4K), then it has 16 blocks from block 128 on', () => {
    assert.deepEqual(sectorBlocks(32), { first: 128, slots: [128, 129], spare: 130, trailer: 143 });
    assert.deepEqual(sectorBlocks(39), { first: 240, slots: [240, 241], spare: 242, trailer: 255 });
  });

  it('when the sector is 0, out of range or not an integer, then it is refused', () => {
    for (const sector of [0, -1, 40, 1.5, Number.NaN]) {
      assert.equal(isValidWalletSector(sector), false);
      assert.throws(() => sectorBlocks(sector), RangeError);
    }
    assert.equal(isValidWalletSector(1), true);
    assert.equal(isValidWalletSector(39), true);
  });
});

describe('value block codec', () => {
  it('when a value or generation is out of range, then encoding throws a RangeError', () => {
    for (const value of [INT32_MAX + 1, INT32_MIN - 1, 1.5, Number.NaN]) {
      assert.throws(() => encodeValueBlock(value, 0), RangeError);
    }
    for (const generation of [-1, 256, 0.5]) {
      assert.throws(() => encodeValueBlock(0, generation), RangeError);
    }
  });

  it('when a block is not 16 bytes, then decoding throws a RangeError (a reader bug)', () => {
    assert.throws(() => decodeSlot(Buffer.alloc(15)), RangeError);
    assert.throws(() => decodeSlot(Buffer.alloc(17)), RangeError);
  });

  it('when comparing generations, then serial-number arithmetic mod 256 applies', () => {
    assert.equal(isNewerGeneration(0, 255), true);
    assert.equal(isNewerGeneration(255, 0), false);
    assert.equal(isNewerGeneration(127, 0), true);
    assert.equal(isNewerGeneration(128, 0), false);
    assert.equal(isNewerGeneration(0, 128), false);
    assert.equal(isNewerGeneration(7, 7), false);
  });

  it('when the balance limit is read, then it is the int32 maximum', () => {
    assert.equal(MAX_CARD_BALANCE, 2147483647);
    assert.equal(INT32_MIN, -2147483648);
  });
});

describe('planning and deciding writes', () => {
  const blank = Buffer.alloc(16);

  it('when the new balance is outside int32, then planning throws a RangeError', () => {
    for (const balance of [INT32_MAX + 1, INT32_MIN - 1, 0.5]) {
      assert.throws(() => planWrite({ kind: 'blank' }, balance), RangeError);
    }
  });

  it('when the card is corrupt, then planning throws (a corrupt card is never written)', () => {
    const corrupt = { kind: 'corrupt', reason: 'x' } as unknown as Parameters<typeof planWrite>[0];
    assert.throws(() => planWrite(corrupt, 1), RangeError);
  });

  it('when a blank-card intent is not slot 0 generation 1, then deciding throws', () => {
    const intent: WriteIntent = { slot: 1, value: 5, generation: 1, previousBalance: null };
    assert.throws(() => decideWrite(intent, blank, blank), RangeError);
  });

  it('when the intent went through JSON (the journal), then it decides the same', () => {
    const { block: written, ...intent } = planWrite({ kind: 'blank' }, 77);
    const stored = JSON.parse(JSON.stringify(intent)) as WriteIntent;
    assert.equal(decideWrite(stored, written, blank), 'committed');
    assert.equal(decideWrite(stored, blank, blank), 'not-committed');
  });
});

describe('card id', () => {
  it('when the UID is 4 or 7 bytes, then the card id is uppercase hex without separators', () => {
    assert.equal(formatCardId(Buffer.from([0x04, 0xa1, 0xb2, 0xc3])), '04A1B2C3');
    assert.equal(formatCardId('04a1b2c3'), '04A1B2C3');
    assert.equal(formatCardId('04:a1:b2:c3:d4:e5:80'), '04A1B2C3D4E580');
    assert.equal(formatCardId('04-A1-B2-C3'), '04A1B2C3');
  });

  it('when the UID is any other length or not hex, then it is a RangeError', () => {
    for (const uid of [Buffer.alloc(5), Buffer.alloc(10), Buffer.alloc(0)]) {
      assert.throws(() => formatCardId(uid), RangeError);
    }
    for (const uid of ['', '04a1b2c', '04a1b2c3d4', '04a1b2cg', '04A1B2C3D4E58011223']) {
      assert.throws(() => formatCardId(uid), RangeError);
    }
  });

  it('when a card id is checked, then only the canonical form passes', () => {
    assert.equal(isCardId('04A1B2C3'), true);
    assert.equal(isCardId('04A1B2C3D4E580'), true);
    assert.equal(isCardId('04a1b2c3'), false);
    assert.equal(isCardId('04:A1:B2:C3'), false);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const int32 = fc.integer({ min: INT32_MIN, max: INT32_MAX });
const generation = fc.integer({ min: 0, max: 255 });
const bytes16 = fc.uint8Array({ minLength: 16, maxLength: 16 });

/**
 * Random bytes standing in for a wrecked slot. The generation bytes are forced inconsistent: the
 * card verifies a frame's CRC before programming its EEPROM, so no tear leaves a whole valid
 * generation next to a broken value, and keeping that out keeps the property about real tears.
 */
function garbage(bytes: Uint8Array): Buffer {
  const out = Buffer.from(bytes);
  if (out[13] === (~out[12]! & 0xff) && out[14] === out[12] && out[15] === out[13]) out[15]! ^= 1;
  return out;
}

/** Bits moved toward the EEPROM's erased state (all 0 or all 1) by a torn erase or program. */
function towardErased(source: Buffer, mask: Uint8Array, erased: 0x00 | 0xff): Buffer {
  return Buffer.from(source.map((byte, i) => (erased === 0 ? byte & mask[i]! : byte | mask[i]!)));
}

function summary(state: WalletState): object {
  if (state.kind !== 'valid') return { kind: state.kind };
  const { kind, balance, generation: g, activeSlot } = state;
  return { kind, balance, generation: g, activeSlot };
}

describe('wallet format properties', () => {
  it('when any int32 and generation are encoded, then they decode to the same', () => {
    fc.assert(
      fc.property(int32, generation, (value, g) => {
        const encoded = encodeValueBlock(value, g);
        assert.equal(encoded.length, 16);
        assert.deepEqual(decodeSlot(encoded), { kind: 'value', value, generation: g });
      }),
    );
  });

  it('when any single byte of a value block is changed, then the slot is invalid', () => {
    fc.assert(
      fc.property(
        int32,
        generation,
        fc.integer({ min: 0, max: 15 }),
        fc.integer({ min: 1, max: 255 }),
        (value, g, index, flip) => {
          const damaged = encodeValueBlock(value, g);
          damaged[index]! ^= flip;
          // Stronger than "invalid or the same value": every byte is stored at least twice.
          assert.deepEqual(decodeSlot(damaged), { kind: 'invalid' });
        },
      ),
    );
  });

  it('when bits of a value block move one way only, then it is invalid or blank, never another value', () => {
    fc.assert(
      fc.property(
        int32,
        generation,
        bytes16,
        fc.constantFrom(0x00, 0xff),
        (value, g, mask, erased) => {
          const original = encodeValueBlock(value, g);
          const damaged = towardErased(original, mask, erased as 0x00 | 0xff);
          const kind = decodeSlot(damaged).kind;
          if (damaged.equals(original)) assert.equal(kind, 'value');
          else assert.ok(kind === 'invalid' || kind === 'blank', `decoded as ${kind}`);
        },
      ),
    );
  });

  it('when the two slots are swapped, then the wallet is the mirror image', () => {
    const slot = fc.oneof(
      fc.constant(Buffer.alloc(16)),
      fc.tuple(int32, generation).map(([v, g]) => encodeValueBlock(v, g)),
      bytes16.map(garbage),
    );
    fc.assert(
      fc.property(slot, slot, (a, b) => {
        const ab = decodeWallet(a, b);
        const ba = decodeWallet(b, a);
        if (ab.kind === 'valid' && ba.kind === 'valid') {
          assert.deepEqual(ba, { ...ab, activeSlot: ab.activeSlot === 0 ? 1 : 0 });
        } else {
          assert.equal(ba.kind, ab.kind);
        }
      }),
    );
  });

  type Tear =
    | { kind: 'untouched' }
    | { kind: 'complete' }
    | { kind: 'garbage'; bytes: Uint8Array }
    | { kind: 'erasing'; mask: Uint8Array }
    | { kind: 'programming'; mask: Uint8Array };

  const tear: fc.Arbitrary<Tear> = fc.oneof(
    fc.constant({ kind: 'untouched' as const }),
    fc.constant({ kind: 'complete' as const }),
    fc.record({ kind: fc.constant('garbage' as const), bytes: bytes16 }),
    fc.record({ kind: fc.constant('erasing' as const), mask: bytes16 }),
    fc.record({ kind: fc.constant('programming' as const), mask: bytes16 }),
  );

  /** A blank card, or a valid one whose backup is blank, an older value or wreckage. */
  const startCard: fc.Arbitrary<[Buffer, Buffer]> = fc.oneof(
    fc.constant<[Buffer, Buffer]>([Buffer.alloc(16), Buffer.alloc(16)]),
    fc
      .record({
        active: fc.constantFrom(0, 1),
        value: int32,
        g: generation,
        backup: fc.oneof(
          fc.constant({ kind: 'blank' as const }),
          fc.record({
            kind: fc.constant('older' as const),
            value: int32,
            age: fc.integer({ min: 1, max: 127 }),
          }),
          fc.record({ kind: fc.constant('garbage' as const), bytes: bytes16 }),
        ),
      })
      .map(({ active, value, g, backup }): [Buffer, Buffer] => {
        const other =
          backup.kind === 'blank'
            ? Buffer.alloc(16)
            : backup.kind === 'older'
              ? encodeValueBlock(backup.value, (g - backup.age) & 0xff)
              : garbage(backup.bytes);
        const current = encodeValueBlock(value, g);
        return active === 0 ? [current, other] : [other, current];
      }),
  );

  it('when a sequence of writes is each possibly torn, then the card holds the old or the new balance and decideWrite says which', () => {
    fc.assert(
      fc.property(
        startCard,
        fc.constantFrom<0x00 | 0xff>(0x00, 0xff),
        fc.array(fc.record({ balance: int32, tear }), { minLength: 1, maxLength: 12 }),
        (start, erased, steps) => {
          let card: [Buffer, Buffer] = start;
          for (const step of steps) {
            const before = decodeWallet(card[0], card[1]);
            if (before.kind === 'corrupt') assert.fail(`a card became corrupt: ${before.reason}`);
            const plan = planWrite(before, step.balance);
            const { block: planned, ...intent } = plan;

            const after: [Buffer, Buffer] = [card[0], card[1]];
            const target = card[plan.slot];
            const t = step.tear;
            if (t.kind === 'complete') after[plan.slot] = planned;
            else if (t.kind === 'garbage') after[plan.slot] = garbage(t.bytes);
            else if (t.kind === 'erasing') after[plan.slot] = towardErased(target, t.mask, erased);
            // Programming starts from a fully erased block.
            else if (t.kind === 'programming')
              after[plan.slot] = towardErased(planned, t.mask, erased);

            const decision = decideWrite(intent, after[0], after[1]);
            const wallet = decodeWallet(after[0], after[1]);
            assert.notEqual(
              decision,
              'unknown',
              'a single writer never leaves an undecidable card',
            );
            if (t.kind === 'complete') assert.equal(decision, 'committed');
            if (t.kind === 'untouched') assert.equal(decision, 'not-committed');

            if (decision === 'committed') {
              assert.deepEqual(after[plan.slot], planned);
              assert.deepEqual(summary(wallet), {
                kind: 'valid',
                balance: step.balance,
                generation: plan.generation,
                activeSlot: plan.slot,
              });
            } else if (before.kind === 'blank') {
              // A torn first write: no credits, but the card reads as corrupt (docs section 6).
              const tornFirstWrite =
                wallet.kind === 'corrupt' && decodeSlot(after[plan.slot]).kind === 'invalid';
              assert.ok(wallet.kind === 'blank' || tornFirstWrite, `wallet ${wallet.kind}`);
            } else {
              assert.deepEqual(summary(wallet), summary(before));
            }

            if (wallet.kind === 'corrupt') return;
            card = after;
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
