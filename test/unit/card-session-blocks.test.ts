// The PC/SC card session's block writes on a MIFARE Classic card, over a scripted nfc-pcsc
// Reader: a write and its read-back (the commit point's proof), the refusals that mean the card
// took nothing, the UID check, one authentication per session, and the spare block it remembers
// so that a later write clears a float reference (docs/card-format.md, sections 6 and 6a).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import { CardSession } from '../../service/card/card-session.ts';
import { planClassicWrite } from '../../service/card/classic-wallet.ts';
import { encodeFloatReference } from '../../service/card/float-reference.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import type { AppError } from '../../service/errors.ts';

const CARD = '04A1B2C3';
const FLOAT_ID = '22ea3bfc-5b3b-8000-8000-00000000002a';
const MOVEMENT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const keys = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });
const perCardKeys = new WalletKeys({
  key: Buffer.alloc(6, 0xff),
  type: 0x60,
  sector: 1,
  masterKey: Buffer.from('8E2A1F0C5B7D9364A0C3E5F71B2D4F60', 'hex'),
});

/** An nfc-pcsc error as the reader throws it (card-errors.ts reads its name, code and message). */
function nfcError(name: string, code: string, message: string): Error {
  return Object.assign(new Error(message), { name, code });
}

interface Script {
  /** The GET UID answer, status included. */
  uid?: Buffer;
  /** How many GET UIDs, first, another card answers. */
  otherCardFirst?: number;
  /** Thrown by the next write (then cleared). */
  writeFails?: Error;
  /** What the read-back after a write returns instead of the block (then cleared). */
  readBack?: Buffer | Error;
  /** Thrown by every authentication. */
  authFails?: Error;
  /**
   * A card not personalized yet: key B (its own) is refused, and the refusal halts the card (it
   * refuses every key) until the reader resets it.
   */
  refusesKeyB?: boolean;
  /** Thrown by the reader's card reset (SCardDisconnect with SCARD_RESET_CARD). */
  resetFails?: Error;
}

const refusal = () =>
  nfcError(
    'AuthenticationError',
    'operation_failed',
    'Authentication operation failed: Status code: 0x6300',
  );

/**
 * A scripted card on a reader: sector 1's blocks 4-6 (slot 0, slot 1, the spare block), every
 * call noted in `calls`, and failures as `script` says.
 */
function scriptedReader(script: Script = {}, blocks = new Map<number, Buffer>()) {
  for (const block of [4, 5, 6]) if (!blocks.has(block)) blocks.set(block, Buffer.alloc(16));
  const calls: string[] = [];
  let halted = false;
  const pcsc = {
    SCARD_RESET_CARD: 1,
    disconnect: (disposition: number, callback: (error?: Error | null) => void) => {
      calls.push(disposition === 1 ? 'reset' : 'disconnect');
      if (script.resetFails) return callback(script.resetFails);
      halted = false;
      callback(null);
    },
  };
  const reader = {
    reader: pcsc,
    connection: { type: 2, protocol: 2 } as object | null,
    connect: async () => {
      calls.push(`connect${reader.connection === null ? '' : ' (still connected)'}`);
      reader.connection = { type: 2, protocol: 2 };
    },
    transmit: async (apdu: Buffer) => {
      assert.equal(apdu.toString('hex'), 'ffca000000', 'only GET UID is sent raw');
      calls.push('uid');
      if (script.otherCardFirst) {
        script.otherCardFirst -= 1;
        return Buffer.from('049999999000', 'hex');
      }
      return script.uid ?? Buffer.from(`${CARD}9000`, 'hex');
    },
    authenticate: async (block: number, type: number) => {
      calls.push(`auth ${block} ${type.toString(16)}`);
      if (script.authFails) throw script.authFails;
      if (halted || (script.refusesKeyB && type === 0x61)) {
        halted = true;
        throw refusal();
      }
      return true;
    },
    read: async (block: number, length: number, blockSize: number) => {
      assert.equal(blockSize, 16);
      calls.push(`read ${block} ${length}`);
      const answer = script.readBack;
      if (answer !== undefined && calls.at(-2)?.startsWith('write')) {
        delete script.readBack;
        if (answer instanceof Error) throw answer;
        return answer;
      }
      return Buffer.concat(
        Array.from({ length: length / 16 }, (_, i) => blocks.get(block + i) ?? Buffer.alloc(16)),
      );
    },
    write: async (block: number, data: Buffer, blockSize: number) => {
      assert.equal(blockSize, 16);
      calls.push(`write ${block}`);
      const failure = script.writeFails;
      if (failure) {
        delete script.writeFails;
        throw failure;
      }
      blocks.set(block, Buffer.from(data));
      return true;
    },
  };
  const session = (walletKeys = keys) =>
    new CardSession(reader as unknown as Reader, CARD, walletKeys, 1_000, () => undefined);
  return { reader, session, calls, blocks };
}

const SLOT_WRITE = planClassicWrite('classic:v1:blank', 5, MOVEMENT);

describe('CardSession: a block write and its read-back', () => {
  test('when the block read back is what was written, then committed; the UID checked and the sector opened once before the write', async () => {
    const rig = scriptedReader();
    const result = await rig.session().write(SLOT_WRITE);
    assert.deepEqual(result, { outcome: 'committed' });
    assert.deepEqual(rig.calls, ['uid', 'auth 4 60', 'write 4', 'read 4 16']);
    assert.deepEqual(rig.blocks.get(4), encodeValueBlock(5, 1));
  });

  test('when the block read back differs from what was written, then the write is uncertain (CardWriteUnverified)', async () => {
    const rig = scriptedReader({ readBack: Buffer.alloc(16, 0x11) });
    const result = await rig.session().write(SLOT_WRITE);
    assert.equal(result.outcome, 'uncertain');
    assert.equal(result.outcome === 'uncertain' && result.error.code, 'CardWriteUnverified');
  });

  test('when the read-back fails because the card left, then the write is uncertain (NoCard): it may have landed', async () => {
    const rig = scriptedReader({ readBack: nfcError('TransmitError', 'failure', 'card removed') });
    const result = await rig.session().write(SLOT_WRITE);
    assert.equal(result.outcome, 'uncertain');
    assert.equal(result.outcome === 'uncertain' && result.error.code, 'NoCard');
  });

  test('when the write fails after the block went out, a status word included, then uncertain: the card may have programmed it before its answer was lost', async () => {
    for (const [failure, code] of [
      [
        nfcError('WriteError', 'operation_failed', 'Write operation failed: Status code: 0x6300'),
        'CardOperationFailed',
      ],
      [nfcError('TransmitError', 'failure', 'An error occurred while transmitting.'), 'NoCard'],
    ] as const) {
      const rig = scriptedReader({ writeFails: failure });
      const result = await rig.session().write(SLOT_WRITE);
      assert.equal(result.outcome, 'uncertain', failure.message);
      assert.equal(result.outcome === 'uncertain' && result.error.code, code, failure.message);
      assert.ok(!rig.calls.includes('read 4 16'), 'no read-back after a failed write');
    }
  });

  test('when the sector does not open before a write, then nothing is written (AuthenticationFail)', async () => {
    const rig = scriptedReader({
      authFails: refusal(),
    });
    const result = await rig.session().write(SLOT_WRITE);
    assert.equal(result.outcome, 'not-written');
    assert.equal(result.outcome === 'not-written' && result.error.code, 'AuthenticationFail');
    assert.ok(!rig.calls.some((call) => call.startsWith('write')), 'nothing written');
  });
});

describe("CardSession: the card's UID", () => {
  for (const [name, uid] of [
    ['an error status', Buffer.from(`${CARD}6300`, 'hex')],
    ['no status at all', Buffer.from([0x90])],
    ['another card', Buffer.from('049999999000', 'hex')],
  ] as const) {
    test(`when the reader answers GET UID with ${name}, then NoCard and nothing is written`, async () => {
      const rig = scriptedReader({ uid });
      await assert.rejects(rig.session().checkUid(), (error: AppError) => error.code === 'NoCard');
      const result = await rig.session().write(SLOT_WRITE);
      assert.equal(result.outcome === 'not-written' && result.error.code, 'NoCard');
      assert.ok(!rig.calls.some((call) => call.startsWith('write')), 'nothing written');
    });
  }

  test('when the reader answers GET UID with the lower-case UID and 90 00, then it is this card', async () => {
    const rig = scriptedReader({ uid: Buffer.from('04a1b2c39000', 'hex') });
    await rig.session().checkUid();
    assert.deepEqual(rig.calls, ['uid']);
  });
});

describe("CardSession: the wallet sector's authentication", () => {
  test('when a session reads, decides and writes, then the sector is opened once; after the trailer is written, again', async () => {
    const rig = scriptedReader({}, new Map([[4, encodeValueBlock(30, 1)]]));
    const session = rig.session(perCardKeys);
    const wallet = await session.readWallet();
    assert.equal(wallet.before, 'classic:v1:30:1:0');
    const intent = planClassicWrite(wallet.before, 50, MOVEMENT);
    assert.deepEqual(await session.write(intent), { outcome: 'committed' });
    assert.deepEqual(await session.decide(intent), { outcome: 'committed' });
    assert.deepEqual(await session.readSlots(), [encodeValueBlock(30, 1), encodeValueBlock(50, 2)]);
    assert.deepEqual(
      rig.calls.filter((call) => call.startsWith('auth')),
      ['auth 4 61'],
    );
    assert.deepEqual(await session.writeTrailer(), { outcome: 'committed' });
    assert.deepEqual(rig.blocks.get(7), perCardKeys.trailerFor(CARD));
    await session.readSlots();
    assert.deepEqual(
      rig.calls.filter((call) => call.startsWith('auth')),
      ['auth 4 61', 'auth 4 61'],
      'the trailer dropped the authentication',
    );
  });

  test('when the trailer write fails, then uncertain with its error; another card on the reader, not written', async () => {
    const failed = scriptedReader({
      writeFails: nfcError(
        'WriteError',
        'operation_failed',
        'Write operation failed: Status code: 0x6300',
      ),
    });
    const uncertain = await failed.session(perCardKeys).writeTrailer();
    assert.equal(uncertain.outcome, 'uncertain');
    assert.equal(uncertain.outcome === 'uncertain' && uncertain.error.code, 'CardOperationFailed');
    const swapped = scriptedReader({ otherCardFirst: 1 });
    const notWritten = await swapped.session(perCardKeys).writeTrailer();
    assert.equal(notWritten.outcome === 'not-written' && notWritten.error.code, 'NoCard');
    assert.equal(swapped.blocks.get(7), undefined, 'the trailer untouched');
  });

  test("when the reader's LOAD KEY failed, then nfc-pcsc's record of its loaded keys is forgotten, so the next authentication loads the key again", async () => {
    const rig = scriptedReader({
      authFails: Object.assign(new Error('Could not load authentication key into reader.'), {
        name: 'AuthenticationError',
        code: 'unable_to_load_key',
      }),
    });
    const keyStorage = { '0': Buffer.alloc(6, 0xff), '1': Buffer.alloc(6, 0x01) };
    Object.assign(rig.reader, { keyStorage });
    await assert.rejects(rig.session().readWallet(), (error: AppError) => error.code === 'NoCard');
    assert.deepEqual(keyStorage, { '0': null, '1': null });
  });

  test('when an authentication fails otherwise, then the loaded keys are kept', async () => {
    const rig = scriptedReader({
      authFails: refusal(),
    });
    const keyStorage = { '0': Buffer.alloc(6, 0xff) };
    Object.assign(rig.reader, { keyStorage });
    await assert.rejects(
      rig.session().readWallet(),
      (error: AppError) => error.code === 'AuthenticationFail',
    );
    assert.deepEqual(keyStorage, { '0': Buffer.alloc(6, 0xff) });
  });
});

describe('CardSession: the spare block it remembers', () => {
  const reference = (generation: number) =>
    encodeFloatReference({ generation, movementId: FLOAT_ID, credits: 20 });

  /**
   * A float recharge's reference written by itself (its slot not written: the card left), then,
   * in the same session, a recharge that is not from the float at the same generation: the
   * blocks it writes.
   */
  async function referenceThenRecharge(script: Script) {
    const rig = scriptedReader(script, new Map([[5, encodeValueBlock(30, 4)]]));
    const session = rig.session();
    const wallet = await session.readWallet();
    const spared = await session.writeSpare(reference(5));
    const recharge = await session.write(planClassicWrite(wallet.before, 50, MOVEMENT));
    assert.deepEqual(recharge, { outcome: 'committed' });
    return { spared, writes: rig.calls.filter((call) => call.startsWith('write')), rig };
  }

  test('when a reference write may have landed (the card left during it), then a later write of its generation clears it first', async () => {
    const { spared, writes } = await referenceThenRecharge({
      writeFails: nfcError('TransmitError', 'failure', 'An error occurred while transmitting.'),
    });
    assert.equal(spared.outcome, 'uncertain');
    assert.deepEqual(writes, ['write 6', 'write 6', 'write 4']);
  });

  test('when a reference write certainly did not happen (another card was on the reader), then a later write of its generation writes its slot alone', async () => {
    const { spared, writes, rig } = await referenceThenRecharge({ otherCardFirst: 1 });
    assert.equal(spared.outcome === 'not-written' && spared.error.code, 'NoCard');
    assert.deepEqual(writes, ['write 4']);
    assert.deepEqual(rig.blocks.get(6), Buffer.alloc(16));
  });

  test('when a reference write landed, then a later write of its generation clears it first', async () => {
    const { spared, writes, rig } = await referenceThenRecharge({});
    assert.deepEqual(spared, { outcome: 'committed' });
    assert.deepEqual(writes, ['write 6', 'write 6', 'write 4']);
    assert.deepEqual(rig.blocks.get(6), Buffer.alloc(16));
  });
});

describe('CardSession: which key opens the wallet', () => {
  test('when per-card keys meet a card not personalized, then its own key is refused, the card reset once (its loaded keys forgotten) and the transport key opens it; asked again, the same way', async () => {
    const rig = scriptedReader({ refusesKeyB: true });
    const keyStorage = { '0': Buffer.alloc(6, 0x01) };
    Object.assign(rig.reader, { keyStorage });
    const session = rig.session(perCardKeys);
    assert.equal(await session.openWallet(), 'transport');
    assert.deepEqual(rig.calls, ['auth 4 61', 'reset', 'connect', 'uid', 'auth 4 60']);
    assert.deepEqual(keyStorage, { '0': null });
    rig.calls.length = 0;
    assert.equal(await session.openWallet(), 'transport');
    assert.equal((await session.readWallet()).before, 'classic:v1:blank');
    assert.deepEqual(rig.calls, ['auth 4 61', 'reset', 'connect', 'uid', 'auth 4 60', 'read 4 48']);
  });

  test('when a card an earlier session left halted is opened again, then it is reset once, and a session after that resets nothing', async () => {
    const rig = scriptedReader({ refusesKeyB: true });
    assert.equal(await rig.session(perCardKeys).openWallet(), 'transport');
    rig.calls.length = 0;
    await rig.session(keys).readWallet();
    assert.deepEqual(rig.calls, ['auth 4 60', 'read 4 48'], 'the reset of the first session holds');
  });

  test('when the first authentication fails otherwise than by the key (the card left), then openWallet fails with it and tries no other key', async () => {
    const rig = scriptedReader({
      authFails: nfcError('TransmitError', 'failure', 'An error occurred while transmitting.'),
    });
    await assert.rejects(
      rig.session(perCardKeys).openWallet(),
      (error: AppError) => error.code === 'NoCard',
    );
    assert.deepEqual(rig.calls, ['auth 4 61']);
  });

  test('when the one configured key is refused (no per-card keys), then AuthenticationFail at once: there is no other key to try', async () => {
    const rig = scriptedReader({ authFails: refusal() });
    await assert.rejects(
      rig.session(keys).openWallet(),
      (error: AppError) => error.code === 'AuthenticationFail',
    );
    assert.deepEqual(rig.calls, ['auth 4 60']);
  });

  test('when per-card keys open a personalized card, then its own key, once', async () => {
    const rig = scriptedReader();
    const session = rig.session(perCardKeys);
    assert.equal(await session.openWallet(), 'card');
    assert.equal(await session.openWallet(), 'card');
    await session.readSlots();
    assert.deepEqual(rig.calls, ['auth 4 61', 'read 4 32']);
  });

  test('when an authentication fails because the card left, then the card is not taken for halted: the next session resets nothing', async () => {
    const script: Script = {
      authFails: nfcError('TransmitError', 'failure', 'An error occurred while transmitting.'),
    };
    const rig = scriptedReader(script);
    await assert.rejects(rig.session().readWallet(), (error: AppError) => error.code === 'NoCard');
    delete script.authFails;
    rig.calls.length = 0;
    await rig.session().readWallet();
    assert.deepEqual(rig.calls, ['auth 4 60', 'read 4 48']);
  });

  test('when the card reset fails, then openWallet fails and the transport key is never tried', async () => {
    const rig = scriptedReader({
      refusesKeyB: true,
      resetFails: new Error('SCardDisconnect error: 0x80100003'),
    });
    await assert.rejects(rig.session(perCardKeys).openWallet(), (error: AppError) => {
      assert.equal((error.cause as Error).message, 'SCardDisconnect error: 0x80100003');
      return true;
    });
    assert.deepEqual(rig.calls, ['auth 4 61', 'reset']);
  });
});
