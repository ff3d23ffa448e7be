import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import { CardSession } from '../../service/card/card-session.ts';
import { planWrite } from '../../service/card/wallet-format.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';

/** A reader stand-in whose card answers GET UID with `uid` and records writes. */
function readerAnswering(uid: string) {
  const writes: number[] = [];
  const reader = {
    transmit: async (apdu: Buffer) => {
      assert.equal(apdu.toString('hex'), 'ffca000000', 'only GET UID is sent raw');
      return Buffer.concat([Buffer.from(uid, 'hex'), Buffer.from([0x90, 0x00])]);
    },
    write: async (block: number) => {
      writes.push(block);
      return true;
    },
    read: async () => planWrite({ kind: 'blank' }, 5).block,
    authenticate: async () => true,
  };
  return { reader: reader as unknown as Reader, writes };
}

const key = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });

describe('CardSession.writeSlot', () => {
  test('when another card is on the reader by the time of the write, then nothing is written (NoCard)', async () => {
    const { reader, writes } = readerAnswering('04999999');
    const session = new CardSession(reader, '04A1B2C3', key, 1_000, () => undefined);
    const result = await session.writeSlot(planWrite({ kind: 'blank' }, 5));
    assert.equal(result.outcome, 'not-written');
    assert.equal(result.outcome === 'not-written' && result.error.code, 'NoCard');
    assert.deepEqual(writes, []);
  });

  test('when the same card is there, then the block is written and read back', async () => {
    const { reader, writes } = readerAnswering('04A1B2C3');
    const session = new CardSession(reader, '04A1B2C3', key, 1_000, () => undefined);
    const result = await session.writeSlot(planWrite({ kind: 'blank' }, 5));
    assert.deepEqual(result, { outcome: 'committed' });
    assert.deepEqual(writes, [4]);
  });
});
