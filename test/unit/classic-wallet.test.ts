/**
 * The card face of a MIFARE Classic wallet (docs/card-format.md): the text its state travels
 * to the ledger as (`cardBefore`), the write planned from that text alone, deciding a write
 * from the two slots, and the torn first write that proves a corrupt card held nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  classicBalanceBefore,
  classicBefore,
  classicWalletCard,
  decideClassicWrite,
  isClassicBefore,
  planClassicWrite,
  readClassicWallet,
  tornFirstWrite,
  writeClassic,
} from '../../service/card/classic-wallet.ts';
import type { ClassicWriteIntent } from '../../service/card/wallet-format.ts';
import {
  balanceBefore,
  isKnownBefore,
  planWrite,
  stateAfter,
} from '../../service/card/wallet-card.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import type { AppError } from '../../service/errors.ts';

const BLANK = Buffer.alloc(16);
const TORN = Buffer.concat([encodeValueBlock(5, 1).subarray(0, 8), Buffer.alloc(8, 0xa5)]);
const value = (balance: number, generation: number) => encodeValueBlock(balance, generation);
const firstWrite: ClassicWriteIntent = {
  type: 'classic',
  slot: 0,
  value: 5,
  generation: 1,
  previousBalance: null,
};

describe('the Classic wallet as text (cardBefore)', () => {
  test('when a wallet is blank or valid, then its text names the balance, generation and active slot', () => {
    assert.equal(classicBefore({ kind: 'blank' }), 'classic:v1:blank');
    assert.equal(
      classicBefore({ kind: 'valid', balance: -3, generation: 7, activeSlot: 1, backup: 'blank' }),
      'classic:v1:-3:7:1',
    );
  });

  test('when a text is read, then only the exact Classic forms are', () => {
    for (const text of ['classic:v1:blank', 'classic:v1:30:1:0', 'classic:v1:-2147483648:255:1']) {
      assert.equal(isClassicBefore(text), true, text);
      assert.equal(isKnownBefore(text), true, text);
    }
    for (const text of [
      'classic:v1:30:1:2',
      'classic:v1:30:1000:0',
      'classic:v1:12345678901:1:0',
      'classic:v1:30:1',
      'xclassic:v1:30:1:0',
      'classic:v1:30:1:0 ',
      'classic:v2:blank',
      'classic:v1:blank ',
      '',
    ]) {
      assert.equal(isClassicBefore(text), false, text);
      assert.equal(isKnownBefore(text), false, text);
    }
  });

  test('when the balance before is read from the text, then a blank card held 0', () => {
    assert.equal(classicBalanceBefore('classic:v1:blank'), 0);
    assert.equal(classicBalanceBefore('classic:v1:30:1:0'), 30);
    assert.equal(balanceBefore('classic:v1:-4:9:1'), -4);
    assert.throws(() => classicBalanceBefore('classic:v1:x'), {
      name: 'RangeError',
      message: 'not a Classic wallet state: "classic:v1:x"',
    });
    assert.throws(() => balanceBefore('desfire:v1:5'), {
      name: 'RangeError',
      message: 'no card type reads the wallet state "desfire:v1:5"',
    });
  });

  test('when a write is planned from the text, then into the other slot at the next generation (wrapping), as from the wallet itself', () => {
    assert.deepEqual(planClassicWrite('classic:v1:blank', 5, 'm1'), firstWrite);
    assert.deepEqual(planWrite('classic:v1:30:1:0', 50, 'm1'), {
      type: 'classic',
      slot: 1,
      value: 50,
      generation: 2,
      previousBalance: 30,
    });
    assert.deepEqual(planWrite('classic:v1:30:255:1', 0, 'm1'), {
      type: 'classic',
      slot: 0,
      value: 0,
      generation: 0,
      previousBalance: 30,
    });
    assert.throws(() => planWrite('nothing', 5, 'm1'), {
      name: 'RangeError',
      message: 'no card type reads the wallet state "nothing"',
    });
  });

  test('when a planned write lands, then the card reads as the text the write says it leaves (what a later movement carries); a DESFire write names none', () => {
    // Each card as read before, the balance written, and whether a float recharge's.
    const cases = [
      ['classic:v1:blank', [BLANK, BLANK], 5, true],
      ['classic:v1:30:1:0', [value(30, 1), BLANK], 0, false],
      ['classic:v1:30:255:1', [BLANK, value(30, 255)], 42, true],
      ['classic:v1:30:255:1', [BLANK, value(30, 255)], 12, false],
    ] as const;
    for (const [before, [slot0, slot1], balance, float] of cases) {
      const intent = planClassicWrite(
        before,
        balance,
        'ffffffff-ffff-8000-8000-000000000001',
        float,
      );
      const slots: [Buffer, Buffer] = [slot0, slot1];
      slots[intent.slot] = value(balance, intent.generation);
      const read = readClassicWallet('04A1', slots).before;
      assert.equal(stateAfter(intent), read, `${before} to ${balance}`);
    }
    assert.equal(stateAfter(planWrite('desfire:v1:5:3', 0, 'm1')), undefined);
  });
});

describe('deciding a Classic write from the slots', () => {
  const recharge: ClassicWriteIntent = {
    type: 'classic',
    slot: 1,
    value: 50,
    generation: 2,
    previousBalance: 30,
  };

  test('when the planned slot holds the planned value, then committed; the previous state still, not written; anything else, unknown', () => {
    assert.deepEqual(decideClassicWrite(recharge, [value(30, 1), value(50, 2)]), {
      outcome: 'committed',
    });
    assert.deepEqual(decideClassicWrite(recharge, [value(30, 1), BLANK]), {
      outcome: 'not-written',
    });
    assert.deepEqual(decideClassicWrite(recharge, [value(30, 1), value(49, 2)]), {
      outcome: 'unknown',
    });
  });

  test('when the first write to a blank card shows torn, then not written, torn: the card held nothing', () => {
    assert.deepEqual(decideClassicWrite(firstWrite, [TORN, BLANK]), {
      outcome: 'not-written',
      torn: true,
    });
    assert.deepEqual(decideClassicWrite(firstWrite, [BLANK, BLANK]), { outcome: 'not-written' });
  });

  test('when a torn first write is asked about, then only an invalid slot 0 beside a blank slot 1 of a write from a blank card is one', () => {
    assert.equal(tornFirstWrite(firstWrite, [TORN, BLANK]), true);
    assert.equal(tornFirstWrite(firstWrite, [BLANK, BLANK]), false);
    assert.equal(tornFirstWrite(firstWrite, [value(5, 1), BLANK]), false);
    assert.equal(tornFirstWrite(firstWrite, [TORN, TORN]), false);
    assert.equal(tornFirstWrite({ ...firstWrite, previousBalance: 0 }, [TORN, BLANK]), false);
    assert.equal(tornFirstWrite({ ...firstWrite, slot: 1 }, [TORN, BLANK]), false);
  });
});

describe('reading a Classic wallet', () => {
  test('when the slots hold a wallet, then its balance and its text', () => {
    const slots: [Buffer, Buffer] = [value(30, 1), value(50, 2)];
    assert.deepEqual(readClassicWallet('04A1B2C3', slots), {
      cardId: '04A1B2C3',
      state: { kind: 'valid', balance: 50, generation: 2, activeSlot: 1, backup: 'valid' },
      balance: 50,
      before: 'classic:v1:50:2:1',
      slots,
    });
    assert.equal(readClassicWallet('04A1B2C3', [BLANK, BLANK]).before, 'classic:v1:blank');
    assert.equal(readClassicWallet('04A1B2C3', [BLANK, BLANK]).balance, 0);
  });

  test('when the card is corrupt, then CorruptCard, unless the journal saw this very torn first write: then blank', () => {
    const corrupt = (proof?: ClassicWriteIntent) => () =>
      readClassicWallet('04A1B2C3', [TORN, BLANK], proof);
    assert.throws(corrupt(), (error: AppError) => error.code === 'CorruptCard');
    assert.throws(
      corrupt({ ...firstWrite, previousBalance: 0 }),
      (error: AppError) => error.code === 'CorruptCard',
    );
    assert.deepEqual(corrupt(firstWrite)(), {
      cardId: '04A1B2C3',
      state: { kind: 'blank' },
      balance: 0,
      before: 'classic:v1:blank',
      slots: [TORN, BLANK],
    });
  });

  test('when the card face is put on two slot blocks, then it reads, writes and decides through them', async () => {
    const slots: [Buffer, Buffer] = [value(30, 1), BLANK];
    const calls: string[] = [];
    const card = classicWalletCard({
      cardId: '04A1B2C3',
      checkUid: async () => void calls.push('uid'),
      readSlots: async () => {
        calls.push('read');
        return [Buffer.from(slots[0]), Buffer.from(slots[1])];
      },
      writeSlotBlock: async (slot, block) => {
        calls.push(`write ${slot}`);
        slots[slot] = block;
        return { outcome: 'committed' };
      },
    });
    assert.equal(card.cardId, '04A1B2C3');
    await card.checkUid();
    const wallet = await card.readWallet();
    assert.equal(wallet.before, 'classic:v1:30:1:0');
    const intent = planWrite(wallet.before, 45, 'm1');
    assert.deepEqual(await card.write(intent), { outcome: 'committed' });
    assert.deepEqual(slots[1], value(45, 2));
    assert.deepEqual(await card.decide(intent), { outcome: 'committed' });
    assert.deepEqual(await card.readSlots(), [value(30, 1), value(45, 2)]);
    assert.deepEqual(await card.writeSlotBlock(0, BLANK), { outcome: 'committed' });
    assert.deepEqual(calls, ['uid', 'read', 'write 1', 'read', 'read', 'write 0']);
    // A torn first write the journal saw is passed through to the read.
    slots[0] = TORN;
    slots[1] = BLANK;
    assert.equal((await card.readWallet(firstWrite)).balance, 0);
  });
});

describe('a write planned for a DESFire card, put to a Classic card', () => {
  const desfire = planWrite('desfire:v1:blank', 5, 'm1');

  test('when it is decided from the slots, then unknown; and it never proves a torn first write', () => {
    assert.deepEqual(decideClassicWrite(desfire, [TORN, BLANK]), { outcome: 'unknown' });
    assert.equal(tornFirstWrite(desfire, [TORN, BLANK]), false);
    assert.throws(
      () => readClassicWallet('04A1B2C3', [TORN, BLANK], desfire),
      (error: AppError) => error.code === 'CorruptCard',
    );
  });

  test('when it is written, then certainly not written, and no block is', async () => {
    const writes: string[] = [];
    const result = await writeClassic(desfire, {
      writeSpare: async () => {
        writes.push('spare');
        return { outcome: 'committed' };
      },
      writeSlotBlock: async () => {
        writes.push('slot');
        return { outcome: 'committed' };
      },
    });
    assert.equal(result.outcome, 'not-written');
    assert.equal(result.outcome === 'not-written' && result.error.code, 'CardOperationFailed');
    assert.equal(
      result.outcome === 'not-written' && (result.error.cause as Error).message,
      'a DESFire write for a MIFARE Classic card',
    );
    assert.deepEqual(writes, []);
  });
});
