// The DESFire protocol both ways against a real card's recorded exchanges
// (desfire-worked-examples.ts): the reader side (DesfireClient) must send exactly the recorded
// commands and accept the recorded answers; the virtual card must give exactly the recorded
// answers to the recorded commands. Then the two against each other for what the wallet does:
// keys, files, access rights, transactions, chaining, and what a tampered byte does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DesfireClient,
  PICC_AID,
  unwrapAnswer,
  wrapApdu,
  type AccessRights,
} from '../../service/card/desfire/desfire-client.ts';
import type { DesfireKey } from '../../service/card/desfire/desfire-crypto.ts';
import {
  DesfireProtocolError,
  DesfireStatusError,
} from '../../service/card/desfire/desfire-status.ts';
import {
  powerOn,
  VirtualDesfireCard,
  type DesfireVolatile,
} from '../../service/card/simulator/virtual-desfire-card.ts';
import { workedExamples, type WorkedStep } from './desfire-worked-examples.ts';

const hex = (text: string) => Buffer.from(text.replaceAll(' ', ''), 'hex');
const des = (text: string): DesfireKey => ({ type: 'des', key: hex(text) });
const aes = (text: string): DesfireKey => ({ type: 'aes', key: hex(text) });

/** A recorded native answer (status first) as an ISO 7816 answer (data, 91, status). */
function isoAnswer(native: string): Buffer {
  const bytes = hex(native);
  return Buffer.concat([bytes.subarray(1), Buffer.from([0x91, bytes[0]!])]);
}

const RECORDED_UID = hex('04063F72633480');
const ZERO_DES = des('00000000000000000000000000000000');
const ZERO_AES = aes('00000000000000000000000000000000');
const DES_1 = des('00102031405060708090A0B0B0A09080');
const DES_2 = des('10182029303840485058606870788088');
const AES_1 = aes('00102030405060708090A0B0B0A09080');
const AES_2 = aes('10182028303840485058606870788088');

/** What the reader does in each recorded step, in order. */
const readerSteps: Record<keyof typeof workedExamples, ((c: DesfireClient) => Promise<unknown>)[]> =
  {
    selftest: [
      (c) => c.selectApplication(PICC_AID),
      async (c) => assert.equal(await c.getKeyVersion(0), 0),
      (c) => c.authenticate(0, ZERO_DES),
      async (c) => assert.deepEqual((await c.getVersion()).uid, RECORDED_UID),
      (c) => c.formatPicc(),
      (c) => c.createApplication(0x00de16, 0x0f, 2, 'des'),
      (c) => c.createApplication(0x00de24, 0x0f, 2, '3k3des'),
      (c) => c.createApplication(0x00ae16, 0x0f, 2, 'aes'),
      (c) => c.createApplication(0xaabbcc, 0x0f, 1, 'des'),
      async (c) =>
        assert.deepEqual(await c.getApplicationIds(), [0xde16, 0xde24, 0xae16, 0xaabbcc]),
      (c) => c.deleteApplication(0xaabbcc),
      async (c) => assert.deepEqual(await c.getApplicationIds(), [0xde16, 0xde24, 0xae16]),
      (c) => c.selectApplication(0x00de16),
      (c) => c.authenticate(0, ZERO_DES),
      async (c) =>
        assert.deepEqual(await c.getKeySettings(), { settings: 0x0f, keyCount: 2, keyType: 0 }),
      (c) => c.changeKeySettings(0x0d),
      async (c) => assert.equal((await c.getKeySettings()).settings, 0x0d),
    ],
    '2k3des': [
      (c) => c.selectApplication(0x00de16),
      (c) => c.authenticate(0, ZERO_DES),
      (c) => c.changeKey(0, DES_1, 0),
      (c) => c.authenticate(0, DES_1),
      (c) => c.changeKey(0, DES_2, 0),
      (c) => c.authenticate(0, DES_2),
      async (c) => assert.equal(await c.getKeyVersion(0), 0x10),
      (c) => c.changeKey(0, ZERO_DES, 0),
      (c) => c.authenticate(0, ZERO_DES),
      (c) => c.changeKey(1, DES_1, 0, ZERO_DES),
      (c) => c.changeKey(1, DES_2, 0, DES_1),
      (c) => c.authenticate(1, DES_2),
    ],
    aes: [
      (c) => c.selectApplication(0x00ae16),
      (c) => c.authenticate(0, ZERO_AES),
      (c) => c.changeKey(0, AES_1, 0x10),
      (c) => c.authenticate(0, AES_1),
      (c) => c.changeKey(0, AES_2, 0x10),
      (c) => c.authenticate(0, AES_2),
      async (c) => assert.equal(await c.getKeyVersion(0), 0x10),
      (c) => c.changeKey(0, ZERO_AES, 0x00),
      (c) => c.authenticate(0, ZERO_AES),
      (c) => c.changeKey(1, AES_1, 0x10, ZERO_AES),
      (c) => c.changeKey(1, AES_2, 0x10, AES_1),
      (c) => c.authenticate(1, AES_2),
    ],
  };

/** A transport that expects exactly the recorded commands of `steps` and plays the answers. */
function recordedCard(steps: WorkedStep[]) {
  const exchanges = steps.flatMap((step) => step.exchanges.map((e) => ({ step, e })));
  const randoms = steps.filter((step) => step.RndA).map((step) => hex(step.RndA!));
  let next = 0;
  const client = new DesfireClient({
    transmit: async (apdu) => {
      const expected = exchanges[next];
      if (!expected) throw new Error(`an extra command: ${apdu.toString('hex')}`);
      next += 1;
      assert.equal(
        apdu.toString('hex').toUpperCase(),
        wrapApdu(hex(expected.e[0])).toString('hex').toUpperCase(),
        `the command of "${expected.step.title}"`,
      );
      return isoAnswer(expected.e[1]);
    },
    random: () => randoms.shift() ?? assert.fail('an unrecorded authentication'),
  });
  return { client, done: () => assert.equal(next, exchanges.length, 'every recorded exchange') };
}

describe('the reader side against the recorded card', () => {
  for (const section of ['selftest', '2k3des', 'aes'] as const) {
    test(`when the reader replays the ${section} section, then it sends every recorded byte and accepts every recorded answer`, async () => {
      const steps = workedExamples[section];
      const { client, done } = recordedCard(steps);
      assert.equal(readerSteps[section].length, steps.length);
      for (const step of readerSteps[section]) await step(client);
      done();
    });
  }

  test('when a recorded answer has one bit of its CMAC flipped, then the reader refuses it and ends the session', async () => {
    const steps = workedExamples.aes.slice(0, 7);
    const last = steps[6]!;
    const answer = hex(last.exchanges[0]![1]);
    answer[answer.length - 1]! ^= 0x01;
    const tampered = [
      ...steps.slice(0, 6),
      { ...last, exchanges: [[last.exchanges[0]![0], answer.toString('hex')] as [string, string]] },
    ];
    const { client } = recordedCard(tampered);
    for (const step of readerSteps.aes.slice(0, 6)) await step(client);
    await assert.rejects(client.getKeyVersion(0), DesfireProtocolError);
    assert.equal(client.authenticatedKey, null);
  });
});

/** The virtual card answering the recorded commands, with the recorded RndB. */
function replayOnCard(card: VirtualDesfireCard, steps: WorkedStep[], randoms: Buffer[]) {
  let state: DesfireVolatile = powerOn();
  for (const step of steps) {
    if (step.RndB) randoms.push(hex(step.RndB));
    for (const [command, answer] of step.exchanges) {
      const got = card.execute(state, wrapApdu(hex(command)));
      assert.equal(
        got.toString('hex').toUpperCase(),
        isoAnswer(answer).toString('hex').toUpperCase(),
        `the answer to "${step.title}" (${command})`,
      );
    }
  }
  state = powerOn();
  return state;
}

describe('the virtual card against the recorded reader', () => {
  test('when the recorded reader talks to a factory-fresh virtual card, then every answer is the recorded one, byte for byte', () => {
    const randoms: Buffer[] = [];
    const card = new VirtualDesfireCard({
      uid: RECORDED_UID,
      random: () => randoms.shift() ?? assert.fail('an unrecorded authentication'),
    });
    replayOnCard(card, workedExamples.selftest, randoms);
    replayOnCard(card, workedExamples['2k3des'], randoms);
    replayOnCard(card, workedExamples.aes, randoms);
    assert.deepEqual(card.application(0xae16)?.keys[1]?.key, AES_2.key);
    assert.equal(card.application(0xae16)?.keys[1]?.version, 0x10);
  });
});

// ---------------------------------------------------------------------------------------------
// The reader side and the virtual card together, in process.

function connect(card: VirtualDesfireCard) {
  let state = powerOn();
  const client = new DesfireClient({ transmit: async (apdu) => card.execute(state, apdu) });
  return {
    client,
    /** The card leaves the field and comes back: what it held only while powered is gone. */
    powerCycle() {
      state = powerOn();
      client.reset();
    },
    raw: (apdu: Buffer) => unwrapAnswer(card.execute(state, apdu)),
  };
}

const AID = 0x435701;
const AMK = aes('A0A1A2A3A4A5A6A7A8A9AAABACADAEAF');
const TILL = aes('B0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF');
const MACHINE = aes('C0C1C2C3C4C5C6C7C8C9CACBCCCDCECF');
const PICC = aes('D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF');
const VALUE_ACCESS: AccessRights = { read: 2, write: 0xf, readWrite: 1, change: 0 };
const RECORD_ACCESS: AccessRights = { read: 2, write: 1, readWrite: 1, change: 0 };

/** A card set up the way a wallet is: PICC key AES, an application of 3 keys, two files. */
async function walletCard() {
  const card = new VirtualDesfireCard({ uid: hex('04112233445566') });
  const link = connect(card);
  const { client } = link;
  await client.selectApplication(PICC_AID);
  await client.authenticate(0, ZERO_DES);
  await client.changeKey(0, PICC, 1);
  await client.authenticate(0, PICC);
  await client.changeKeySettings(0x0b);
  await client.createApplication(AID, 0x0b, 3);
  await client.selectApplication(AID);
  await client.authenticate(0, ZERO_AES);
  await client.createValueFile({
    fileNo: 1,
    comm: 'enciphered',
    access: VALUE_ACCESS,
    lowerLimit: 0,
    upperLimit: 1_000_000,
    value: 0,
    limitedCredit: false,
  });
  await client.createCyclicRecordFile({
    fileNo: 2,
    comm: 'enciphered',
    access: RECORD_ACCESS,
    recordSize: 24,
    maxRecords: 4,
  });
  await client.changeKey(1, TILL, 1);
  await client.changeKey(2, MACHINE, 1);
  await client.changeKey(0, AMK, 1);
  return { card, ...link };
}

const statusOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DesfireStatusError) return error.message.split(' answered ')[1];
    throw error;
  }
  return 'OPERATION_OK';
};

describe('the reader side and the virtual card', () => {
  test('when a wallet is set up from a factory card, then the PICC key is AES, the keys changed and the files are there', async () => {
    const { card, client } = await walletCard();
    assert.equal(card.piccKey.type, 'aes');
    assert.deepEqual(card.piccKey.key, PICC.key);
    assert.equal(card.piccSettings, 0x0b);
    const app = card.application(AID)!;
    assert.deepEqual(
      app.keys.map((k) => k.key),
      [AMK.key, TILL.key, MACHINE.key],
    );
    await client.selectApplication(AID);
    assert.equal(await client.getKeyVersion(1), 1);
    await client.authenticate(0, AMK);
    assert.deepEqual(await client.getFileIds(), [1, 2]);
    const settings = await client.getFileSettings(1);
    assert.equal(settings.type, 'value');
    assert.equal(settings.comm, 'enciphered');
    assert.deepEqual(settings.access, VALUE_ACCESS);
    assert.deepEqual(await client.getFileSettings(2), {
      type: 'cyclic-record',
      comm: 'enciphered',
      access: RECORD_ACCESS,
      recordSize: 24,
      maxRecords: 4,
      currentRecords: 0,
    });
  });

  test('when the factory key no longer opens the PICC, then authenticating with it is AUTHENTICATION_ERROR', async () => {
    const { client } = await walletCard();
    await client.selectApplication(PICC_AID);
    assert.equal(await statusOf(client.authenticate(0, ZERO_DES)), 'AUTHENTICATION_ERROR');
    assert.equal(
      await statusOf(client.createApplication(0x010203, 0x0f, 1)),
      'AUTHENTICATION_ERROR',
    );
  });

  test('when the till credits and writes a record, then nothing shows until CommitTransaction, and then both at once', async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.credit(1, 150, 'enciphered');
    await client.writeRecord(2, 0, Buffer.alloc(24, 0x11), 'enciphered');
    assert.equal(await client.getValue(1, 'enciphered'), 0);
    assert.equal(await statusOf(client.readRecords(2, 0, 1, 24, 'enciphered')), 'BOUNDARY_ERROR');
    await client.authenticate(1, TILL);
    await client.credit(1, 150, 'enciphered');
    await client.writeRecord(2, 0, Buffer.alloc(24, 0x11), 'enciphered');
    await client.commitTransaction();
    assert.equal(await client.getValue(1, 'enciphered'), 150);
    assert.deepEqual(await client.readRecords(2, 0, 1, 24, 'enciphered'), [Buffer.alloc(24, 0x11)]);
  });

  test('when the card leaves between the credit and the commit, then the credit and the record are lost, as on a card', async () => {
    const { client, powerCycle } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.credit(1, 500, 'enciphered');
    await client.writeRecord(2, 0, Buffer.alloc(24, 0x22), 'enciphered');
    powerCycle();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.commitTransaction();
    assert.equal(await client.getValue(1, 'enciphered'), 0);
    assert.equal(await statusOf(client.readRecords(2, 0, 1, 24, 'enciphered')), 'BOUNDARY_ERROR');
  });

  test('when AbortTransaction or SelectApplication comes before the commit, then the pending changes are dropped', async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.credit(1, 10, 'enciphered');
    await client.abortTransaction();
    await client.commitTransaction();
    await client.credit(1, 20, 'enciphered');
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.commitTransaction();
    assert.equal(await client.getValue(1, 'enciphered'), 0);
  });

  test("when the machines' key is used, then it reads and debits but cannot credit, write a record or change a key", async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.credit(1, 100, 'enciphered');
    await client.commitTransaction();
    await client.authenticate(2, MACHINE);
    assert.equal(await client.getValue(1, 'enciphered'), 100);
    await client.debit(1, 30, 'enciphered');
    await client.commitTransaction();
    assert.equal(await client.getValue(1, 'enciphered'), 70);
    assert.equal(await statusOf(client.credit(1, 1, 'enciphered')), 'AUTHENTICATION_ERROR');
    await client.authenticate(2, MACHINE);
    assert.equal(await statusOf(client.limitedCredit(1, 1, 'enciphered')), 'AUTHENTICATION_ERROR');
    await client.authenticate(2, MACHINE);
    assert.equal(
      await statusOf(client.writeRecord(2, 0, Buffer.alloc(24), 'enciphered')),
      'AUTHENTICATION_ERROR',
    );
    await client.authenticate(2, MACHINE);
    assert.equal(await statusOf(client.changeKey(1, MACHINE, 1, TILL)), 'AUTHENTICATION_ERROR');
    await client.authenticate(0, AMK);
    assert.equal(
      await client.getValue(1, 'enciphered').catch((e: Error) => e.message),
      'DESFire command 0x6C answered AUTHENTICATION_ERROR',
    );
  });

  test('when a debit would go below the lower limit, then it is BOUNDARY_ERROR and nothing changes', async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(2, MACHINE);
    assert.equal(await statusOf(client.debit(1, 1, 'enciphered')), 'BOUNDARY_ERROR');
    await client.authenticate(1, TILL);
    assert.equal(await statusOf(client.credit(1, 1_000_001, 'enciphered')), 'BOUNDARY_ERROR');
    await client.authenticate(1, TILL);
    assert.equal(await client.getValue(1, 'enciphered'), 0);
  });

  test('when more records are committed than the cyclic file holds, then the oldest go and ReadRecords answers oldest first', async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    for (let n = 1; n <= 5; n += 1) {
      await client.writeRecord(2, 0, Buffer.alloc(24, n), 'enciphered');
      await client.commitTransaction();
    }
    const records = await client.readRecords(2, 0, 3, 24, 'enciphered');
    assert.deepEqual(
      records.map((r) => r[0]),
      [3, 4, 5],
    );
    assert.equal(await statusOf(client.readRecords(2, 0, 4, 24, 'enciphered')), 'BOUNDARY_ERROR');
  });

  test('when an answer is longer than a frame, then it comes chained in AF frames and its CMAC still verifies', async () => {
    const { client, card } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    for (let n = 1; n <= 3; n += 1) {
      await client.writeRecord(2, 0, Buffer.alloc(24, n), 'enciphered');
      await client.commitTransaction();
    }
    const frames: Buffer[] = [];
    let state = powerOn();
    const spied = new DesfireClient({
      transmit: async (apdu) => {
        frames.push(apdu);
        return card.execute(state, apdu);
      },
    });
    await spied.selectApplication(AID);
    await spied.authenticate(1, TILL);
    frames.length = 0;
    // 72 bytes of records, their CRC32 and padding: 80 bytes enciphered, in two frames.
    const records = await spied.readRecords(2, 0, 3, 24, 'enciphered');
    assert.deepEqual(
      records.map((r) => r[0]),
      [1, 2, 3],
    );
    assert.deepEqual(
      frames.map((f) => f[1]),
      [0xbb, 0xaf],
    );
    state = powerOn();
    spied.reset();
    await spied.authenticate(0, PICC);
    assert.deepEqual((await spied.getVersion()).uid, hex('04112233445566'));
  });

  test('when a command is tampered with on its way, then the card answers INTEGRITY_ERROR and drops the session', async () => {
    const { client, raw } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    // A Credit of 5 enciphered under someone else's session: the CRC cannot verify.
    const forged = wrapApdu(Buffer.concat([Buffer.from([0x0c, 0x01]), Buffer.alloc(16, 0x42)]));
    assert.equal(raw(forged).status, 0x1e);
    assert.equal(await statusOf(client.getValue(1, 'enciphered')), 'AUTHENTICATION_ERROR');
  });

  test('when the wrong key authenticates, then the card answers AUTHENTICATION_ERROR at the second step', async () => {
    const { client } = await walletCard();
    await client.selectApplication(AID);
    assert.equal(await statusOf(client.authenticate(1, MACHINE)), 'AUTHENTICATION_ERROR');
    assert.equal(await statusOf(client.authenticate(7, TILL)), 'NO_SUCH_KEY');
    assert.equal(await statusOf(client.authenticate(1, ZERO_DES)), 'AUTHENTICATION_ERROR');
  });

  test('when a snapshot of the card is restored, then it holds the same keys, files, values and records', async () => {
    const { card, client } = await walletCard();
    await client.selectApplication(AID);
    await client.authenticate(1, TILL);
    await client.credit(1, 42, 'enciphered');
    await client.writeRecord(2, 0, Buffer.alloc(24, 7), 'enciphered');
    await client.commitTransaction();
    const copy = VirtualDesfireCard.fromSnapshot(
      card.uid,
      JSON.parse(JSON.stringify(card.snapshot())),
    );
    assert.deepEqual(copy.snapshot(), card.snapshot());
    const other = connect(copy).client;
    await other.selectApplication(AID);
    await other.authenticate(2, MACHINE);
    assert.equal(await other.getValue(1, 'enciphered'), 42);
  });
});
