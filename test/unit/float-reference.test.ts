// The float reference of a MIFARE Classic card (docs/card-format.md, section 6a) against the
// page's test vectors, and how a wallet reads it: it counts only while the value block written
// with it is the active one, and a float recharge writes it before its slot.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WriteResult } from '../../service/card/card-face.ts';
import {
  classicWalletCard,
  planClassicWrite,
  readClassicWallet,
  writeClassic,
} from '../../service/card/classic-wallet.ts';
import {
  crc16,
  decodeFloatReference,
  encodeFloatReference,
} from '../../service/card/float-reference.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { errors } from '../../service/errors.ts';
import { readDocVectors } from '../support/doc-vectors.ts';

interface Vectors {
  crc16: { input: string; crc: string };
  references: {
    name: string;
    generation: number;
    movementId: string;
    credits: number;
    block: string;
  }[];
  notReferences: { name: string; block: string }[];
}

const vectors = readDocVectors<Vectors>('card-format.md', 'Float reference test vectors');
const FLOAT_ID = '22ea3bfc-5b3b-8000-8000-00000000002a';
const MOVEMENT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

describe('the float reference, against the page', () => {
  test("when the page's CRC input is checked, then it gives the page's value", () => {
    assert.equal(
      crc16(Buffer.from(vectors.crc16.input)).toString(16).toUpperCase(),
      vectors.crc16.crc,
    );
  });

  for (const vector of vectors.references) {
    test(`when "${vector.name}" is encoded, then it is the page's block, and it decodes back`, () => {
      const { generation, movementId, credits } = vector;
      const block = encodeFloatReference({ generation, movementId, credits });
      assert.equal(block.toString('hex').toUpperCase(), vector.block);
      assert.deepEqual(decodeFloatReference(block), { generation, movementId, credits });
    });
  }

  for (const vector of vectors.notReferences) {
    test(`when "${vector.name}" is read, then it names nothing`, () => {
      assert.equal(decodeFloatReference(Buffer.from(vector.block, 'hex')), undefined);
    });
  }

  test('when a block is not 16 bytes, or names 0 credits under a good CRC, then it names nothing', () => {
    const block = encodeFloatReference({ generation: 5, movementId: FLOAT_ID, credits: 20 });
    assert.equal(decodeFloatReference(Buffer.concat([block, Buffer.alloc(1)])), undefined);
    assert.equal(decodeFloatReference(block.subarray(0, 15)), undefined);
    const noCredits = Buffer.from(block);
    noCredits.writeUIntBE(0, 11, 3);
    noCredits.writeUInt16BE(crc16(noCredits.subarray(0, 14)), 14);
    assert.equal(decodeFloatReference(noCredits), undefined);
  });

  test('when a reference is asked for what it cannot hold, then it is a RangeError saying what', () => {
    const fine = { generation: 1, movementId: FLOAT_ID, credits: 1 };
    const pool = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    assert.throws(() => encodeFloatReference({ ...fine, movementId: pool }), {
      name: 'RangeError',
      message: `${pool} is not a float movement id`,
    });
    for (const credits of [0, 2 ** 24, 1.5]) {
      assert.throws(() => encodeFloatReference({ ...fine, credits }), {
        name: 'RangeError',
        message: `a float reference holds 1 to 16777215 credits, not ${credits}`,
      });
    }
    for (const generation of [256, -1, 1.5]) {
      assert.throws(() => encodeFloatReference({ ...fine, generation }), {
        name: 'RangeError',
        message: `generation must be 0..255, got ${generation}`,
      });
    }
    // The edges it holds.
    for (const edge of [
      { ...fine, generation: 0 },
      { ...fine, generation: 255 },
      { ...fine, credits: 2 ** 24 - 1 },
    ]) {
      assert.deepEqual(decodeFloatReference(encodeFloatReference(edge)), edge);
    }
  });
});

/**
 * A Classic card's block writes that note each block written in `writes`; the spare block's
 * write answers `spare`, a slot's is committed.
 */
function blocksNoting(writes: string[], spare: WriteResult) {
  return {
    writeSpare: async (block: Buffer) => {
      writes.push(`spare ${block.toString('hex')}`);
      return spare;
    },
    writeSlotBlock: async (slot: 0 | 1, block: Buffer) => {
      writes.push(`slot ${slot} ${block.toString('hex')}`);
      return { outcome: 'committed' } as const;
    },
  };
}

describe('a Classic wallet with its spare block', () => {
  const reference = (generation: number) =>
    encodeFloatReference({ generation, movementId: FLOAT_ID, credits: 20 });

  test('when the reference is the active generation, then the wallet shows the float recharge; another generation, none', () => {
    const slots: [Buffer, Buffer] = [encodeValueBlock(50, 5), encodeValueBlock(30, 4)];
    const shown = readClassicWallet('04A1B2C3', slots, undefined, reference(5));
    assert.equal(shown.carriesFloat, true);
    assert.deepEqual(shown.floatEvidence, [{ movementId: FLOAT_ID, credits: 20 }]);
    // Written with the next generation, whose slot never landed: it names nothing.
    assert.deepEqual(
      readClassicWallet('04A1B2C3', slots, undefined, reference(6)).floatEvidence,
      [],
    );
    // Without the spare block, the card carries no float recharge.
    const bare = readClassicWallet('04A1B2C3', slots);
    assert.equal(bare.carriesFloat, undefined);
    assert.equal(bare.floatEvidence, undefined);
  });

  test('when a float recharge is written, then its reference goes first, and the slot only after the reference was proven', async () => {
    const intent = planClassicWrite('classic:v1:30:4:1', 50, FLOAT_ID, true);
    assert.equal(intent.reference, reference(5).toString('hex'));
    const writes: string[] = [];
    const card = (spare: WriteResult) => blocksNoting(writes, spare);
    assert.deepEqual(await writeClassic(intent, card({ outcome: 'committed' })), {
      outcome: 'committed',
    });
    assert.deepEqual(writes, [
      `spare ${intent.reference}`,
      `slot 0 ${encodeValueBlock(50, 5).toString('hex')}`,
    ]);
    writes.length = 0;
    const torn = await writeClassic(intent, card({ outcome: 'uncertain', error: errors.noCard() }));
    assert.equal(torn.outcome, 'not-written');
    assert.deepEqual(writes, [`spare ${intent.reference}`], 'no slot after an unproven reference');
    const noSpare = await writeClassic(intent, {
      writeSlotBlock: card({ outcome: 'committed' }).writeSlotBlock,
    });
    assert.equal(noSpare.outcome, 'not-written');
    assert.equal(
      noSpare.outcome === 'not-written' && (noSpare.error.cause as Error).message,
      'this card carries no float reference',
    );
  });

  test('when a recharge is not from the float, then no reference is planned or written', async () => {
    const intent = planClassicWrite(
      'classic:v1:30:4:1',
      50,
      '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    );
    assert.equal(intent.reference, undefined);
  });

  test("when another write goes to the generation the card's reference names, then it clears the reference first, and writes its slot only once the clear was proven", async () => {
    // A float recharge's reference landed and its slot did not (generation 5 still to come):
    // this recharge's slot at generation 5 would make the reference count, naming 20 credits
    // the card never held.
    const intent = planClassicWrite(
      'classic:v1:30:4:1',
      50,
      '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    );
    const writes: string[] = [];
    const card = (spare: WriteResult) => blocksNoting(writes, spare);
    const landed = await writeClassic(intent, card({ outcome: 'committed' }), reference(5));
    assert.equal(landed.outcome, 'committed');
    const slot = `slot 0 ${encodeValueBlock(50, 5).toString('hex')}`;
    assert.deepEqual(writes, [`spare ${'00'.repeat(16)}`, slot]);
    writes.length = 0;
    const torn = await writeClassic(
      intent,
      card({ outcome: 'uncertain', error: errors.noCard() }),
      reference(5),
    );
    assert.equal(torn.outcome, 'not-written');
    assert.deepEqual(writes, [`spare ${'00'.repeat(16)}`], 'no slot after an unproven clear');
    // A reference of another generation (the active one's, or older) is left as it is.
    for (const other of [reference(4), reference(6), Buffer.alloc(16)]) {
      writes.length = 0;
      await writeClassic(intent, card({ outcome: 'committed' }), other);
      assert.deepEqual(writes, [slot]);
    }
  });

  test('when the card face reads a card whose reference names the next generation, then its next write clears it, and the card shows no float recharge after', async () => {
    const slots: [Buffer, Buffer] = [Buffer.alloc(16), encodeValueBlock(30, 4)];
    let spare = reference(5);
    const face = classicWalletCard({
      cardId: '04A1B2C3',
      checkUid: async () => undefined,
      readSlots: async () => [Buffer.from(slots[0]), Buffer.from(slots[1])],
      readSector: async () => [Buffer.from(slots[0]), Buffer.from(slots[1]), Buffer.from(spare)],
      writeSlotBlock: async (slot, block) => {
        slots[slot] = Buffer.from(block);
        return { outcome: 'committed' };
      },
      writeSpare: async (block) => {
        spare = Buffer.from(block);
        return { outcome: 'committed' };
      },
    });
    const before = await face.readWallet();
    assert.deepEqual(before.floatEvidence, []);
    const written = await face.write(
      planClassicWrite(before.before, 50, '7c9e6679-7425-40de-944b-e07fc1f90ae7'),
    );
    assert.equal(written.outcome, 'committed');
    const after = await face.readWallet();
    assert.deepEqual([after.balance, after.floatEvidence], [50, []]);
    assert.deepEqual(spare, Buffer.alloc(16));
  });
});

describe("the Classic card face's spare block, as last read or written", () => {
  const reference = (generation: number) =>
    encodeFloatReference({ generation, movementId: FLOAT_ID, credits: 20 });

  /**
   * A card face over blocks whose spare block's first write answers `spareAnswer` (landing only
   * when committed or uncertain), the blocks it writes noted in `writes`.
   */
  function faceAnswering(spareAnswer: WriteResult) {
    const slots: [Buffer, Buffer] = [Buffer.alloc(16), encodeValueBlock(30, 4)];
    let spare = Buffer.alloc(16);
    let answer: WriteResult | undefined = spareAnswer;
    const writes: string[] = [];
    const face = classicWalletCard({
      cardId: '04A1B2C3',
      checkUid: async () => undefined,
      readSlots: async () => [Buffer.from(slots[0]), Buffer.from(slots[1])],
      readSector: async () => [Buffer.from(slots[0]), Buffer.from(slots[1]), Buffer.from(spare)],
      writeSlotBlock: async (slot, block) => {
        writes.push(`slot ${slot}`);
        slots[slot] = Buffer.from(block);
        return { outcome: 'committed' };
      },
      writeSpare: async (block) => {
        writes.push(`spare ${block.equals(Buffer.alloc(16)) ? 'cleared' : 'reference'}`);
        const given = answer ?? { outcome: 'committed' };
        answer = undefined;
        if (given.outcome !== 'not-written') spare = Buffer.from(block);
        return given;
      },
    });
    const setSpare = (block: Buffer) => {
      spare = Buffer.from(block);
    };
    return { face, writes, spare: () => spare, setSpare };
  }

  /** The face reads the card, writes a reference alone, then a recharge not from the float. */
  async function referenceThenRecharge(spareAnswer: WriteResult) {
    const rig = faceAnswering(spareAnswer);
    const wallet = await rig.face.readWallet();
    assert.ok(rig.face.writeSpare, 'the face writes the spare block of a card that has one');
    assert.deepEqual(await rig.face.writeSpare(reference(5)), spareAnswer);
    const written = await rig.face.write(planClassicWrite(wallet.before, 50, MOVEMENT));
    assert.equal(written.outcome, 'committed');
    return rig;
  }

  test('when a reference write may have landed (uncertain), then the next write of its generation clears it first', async () => {
    const rig = await referenceThenRecharge({ outcome: 'uncertain', error: errors.noCard() });
    assert.deepEqual(rig.writes, ['spare reference', 'spare cleared', 'slot 0']);
    assert.deepEqual(rig.spare(), Buffer.alloc(16));
  });

  test('when a reference write certainly did not land, then the next write of its generation writes its slot alone', async () => {
    const rig = await referenceThenRecharge({ outcome: 'not-written', error: errors.noCard() });
    assert.deepEqual(rig.writes, ['spare reference', 'slot 0']);
  });

  test('when the face reads the sector itself, then what it read goes with its next write', async () => {
    const rig = faceAnswering({ outcome: 'committed' });
    await rig.face.readWallet();
    // Another till's reference landed since the face read the card (its slot did not).
    rig.setSpare(reference(5));
    assert.ok(rig.face.readSector, 'the face reads the sector of a card that has one');
    const [, , spare] = await rig.face.readSector();
    assert.deepEqual(spare, reference(5));
    await rig.face.write(planClassicWrite('classic:v1:30:4:1', 50, MOVEMENT));
    assert.deepEqual(rig.writes, ['spare cleared', 'slot 0']);
  });
});
