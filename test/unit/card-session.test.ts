import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import { CardSession } from '../../service/card/card-session.ts';
import { planClassicWrite } from '../../service/card/classic-wallet.ts';
import { decodeFloatReference, encodeFloatReference } from '../../service/card/float-reference.ts';
import { SimulatedNfc, SimulatedPcscReader } from '../../service/card/simulator/simulated-pcsc.ts';
import { VirtualCard } from '../../service/card/simulator/virtual-card.ts';
import { encodeValueBlock, planWrite } from '../../service/card/wallet-format.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import type { AppError } from '../../service/errors.ts';

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

describe('CardSession.write', () => {
  test('when another card is on the reader by the time of the write, then nothing is written (NoCard)', async () => {
    const { reader, writes } = readerAnswering('04999999');
    const session = new CardSession(reader, '04A1B2C3', key, 1_000, () => undefined);
    const result = await session.write(planWrite({ kind: 'blank' }, 5));
    assert.equal(result.outcome, 'not-written');
    assert.equal(result.outcome === 'not-written' && result.error.code, 'NoCard');
    assert.deepEqual(writes, []);
  });

  test('when the same card is there, then the block is written and read back', async () => {
    const { reader, writes } = readerAnswering('04A1B2C3');
    const session = new CardSession(reader, '04A1B2C3', key, 1_000, () => undefined);
    const result = await session.write(planWrite({ kind: 'blank' }, 5));
    assert.deepEqual(result, { outcome: 'committed' });
    assert.deepEqual(writes, [4]);
  });
});

describe('CardSession: the float reference', () => {
  test('when the sector read shows a reference naming the generation of the next write, then a write that is not a float recharge clears it before its slot; of another generation, it writes the slot alone', async () => {
    const FLOAT_ID = '22ea3bfc-5b3b-8000-8000-00000000002a';
    const run = async (generation: number) => {
      const blocks = new Map<number, Buffer>([
        [4, Buffer.alloc(16)],
        [5, encodeValueBlock(30, 4)],
        [6, encodeFloatReference({ generation, movementId: FLOAT_ID, credits: 20 })],
      ]);
      const writes: number[] = [];
      const reader = {
        transmit: async () => Buffer.from('04A1B2C39000', 'hex'),
        authenticate: async () => true,
        read: async (block: number, length: number) =>
          Buffer.concat(
            Array.from({ length: length / 16 }, (_, i) => blocks.get(block + i) as Buffer),
          ),
        write: async (block: number, data: Buffer) => {
          writes.push(block);
          blocks.set(block, Buffer.from(data));
          return true;
        },
      } as unknown as Reader;
      const session = new CardSession(reader, '04A1B2C3', key, 1_000, () => undefined);
      const wallet = await session.readWallet();
      const result = await session.write(
        planClassicWrite(wallet.before, 50, '7c9e6679-7425-40de-944b-e07fc1f90ae7'),
      );
      assert.deepEqual(result, { outcome: 'committed' });
      return { writes, spare: blocks.get(6) };
    };
    // The next write is generation 5: the reference's slot never landed.
    assert.deepEqual(await run(5), { writes: [6, 4], spare: Buffer.alloc(16) });
    const kept = await run(4);
    assert.deepEqual(kept.writes, [4]);
    assert.equal(decodeFloatReference(kept.spare as Buffer)?.generation, 4);
  });
});

const TRANSPORT = Buffer.from('FFFFFFFFFFFF', 'hex');
const perCardKeys = new WalletKeys({
  key: TRANSPORT,
  type: 0x60,
  sector: 1,
  masterKey: Buffer.from('8E2A1F0C5B7D9364A0C3E5F71B2D4F60', 'hex'),
});

/**
 * nfc-pcsc's Reader over the simulator's PC/SC stand-in, with `card` in the field; counts the
 * card resets (SCardDisconnect with SCARD_RESET_CARD) the session asks for.
 */
async function simulatedReader(card: VirtualCard) {
  const device = new SimulatedPcscReader();
  let resets = 0;
  const disconnect = device.disconnect.bind(device);
  device.disconnect = (disposition, callback) => {
    if (disposition === device.SCARD_RESET_CARD) resets += 1;
    disconnect(disposition, callback);
  };
  const nfc = new SimulatedNfc(device).asNfc();
  const reader = await new Promise<Reader>((resolve) => nfc.once('reader', resolve));
  await device.insert(card);
  assert.equal(reader.card?.uid, card.id.toLowerCase(), 'nfc-pcsc saw the card');
  const session = (keys: WalletKeys) => new CardSession(reader, card.id, keys, 1_000, () => {});
  return { session, resets: () => resets, close: () => nfc.close() };
}

describe('CardSession: a failed authentication halts the card (over the simulator)', () => {
  test('when a fresh card is opened with per-card keys, then its own key fails, one reset re-activates it and the transport key opens it', async () => {
    const card = new VirtualCard({ uid: Buffer.from('04C0FFEE', 'hex') });
    const rig = await simulatedReader(card);
    try {
      const session = rig.session(perCardKeys);
      assert.equal(await session.openWallet(), 'transport');
      assert.equal(rig.resets(), 1);
      assert.equal((await session.readWallet()).state.kind, 'blank');
      assert.equal(rig.resets(), 1, 'no reset once open');
    } finally {
      rig.close();
    }
  });

  test('when an earlier session left the card halted, then the next one re-activates it before authenticating', async () => {
    const card = new VirtualCard({ uid: Buffer.from('04C0FFEF', 'hex') });
    card.setKeys(1, { keyA: Buffer.from('A1A2A3A4A5A6', 'hex') });
    const rig = await simulatedReader(card);
    try {
      await assert.rejects(
        rig.session(key).readWallet(),
        (error: AppError) => error.code === 'AuthenticationFail',
      );
      assert.equal(rig.resets(), 0, 'without per-card keys there is no second key to try');
      // The failure passes (as in a poor field): its key is the configured one again.
      card.setKeys(1, { keyA: TRANSPORT });
      assert.equal((await rig.session(key).readWallet()).state.kind, 'blank');
      assert.equal(rig.resets(), 1);
    } finally {
      rig.close();
    }
  });
});

describe('CardSession: the card after a reset', () => {
  test('when another card answers after the reset, then NoCard and the transport key is never tried', async () => {
    const authentications: Buffer[] = [];
    let reset = false;
    const pcsc = {
      SCARD_RESET_CARD: 1,
      disconnect: (disposition: number, callback: (error?: Error | null) => void) => {
        reset = disposition === 1;
        callback(null);
      },
    };
    const reader = {
      reader: pcsc,
      connection: { type: 2, protocol: 2 },
      connect: async () => true,
      transmit: async () => {
        const uid = reset ? '04999999' : '04A1B2C3';
        return Buffer.concat([Buffer.from(uid, 'hex'), Buffer.from([0x90, 0x00])]);
      },
      authenticate: async (_block: number, _type: number, keyBytes: Buffer) => {
        authentications.push(keyBytes);
        throw Object.assign(new Error('Authentication operation failed: Status code: 0x6300'), {
          name: 'AuthenticationError',
          code: 'operation_failed',
        });
      },
    } as unknown as Reader;
    const session = new CardSession(reader, '04A1B2C3', perCardKeys, 1_000, () => {});
    await assert.rejects(session.openWallet(), (error: AppError) => error.code === 'NoCard');
    assert.equal(reset, true, 'the card was reset');
    assert.equal(authentications.length, 1, 'only its own key was tried');
    assert.ok(!authentications[0]!.equals(TRANSPORT));
  });
});
