// The virtual DESFire card through the real PC/SC stack: nfc-pcsc in this process ->
// libpcsclite -> a private pcscd -> vpcd -> the card in Node. The reader side (DesfireClient)
// sends ISO-wrapped native commands with reader.transmit, as the worker does; the faults of the
// money tests (a pull before or after an APDU, a stall, a slow card) act on it as on the
// MIFARE Classic card.
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { after, before, describe, test, type TestContext } from 'node:test';
import nfcPcsc from 'nfc-pcsc';
import type { Card, Reader } from 'nfc-pcsc';
import { DesfireClient, PICC_AID } from '../../service/card/desfire/desfire-client.ts';
import type { DesfireKey } from '../../service/card/desfire/desfire-crypto.ts';
import {
  KEY_TILL,
  RECORD_FILE,
  RECORD_SIZE,
  VALUE_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { ReaderManager, type ReaderEvent } from '../../service/card/reader-manager.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import { silentLogger } from '../../service/logger.ts';
import { startPcscd, type PcscdRig } from '../support/pcscd.ts';
import { DESFIRE_ATR, VirtualDesfireCard, VirtualReader } from '../support/virtual-card.ts';

const { NFC } = nfcPcsc;
const EVENT_TIMEOUT_MS = 3_000;
const AID = 0x435701;
const ZERO_AES: DesfireKey = { type: 'aes', key: Buffer.alloc(16) };

let rig: PcscdRig;

before(async () => {
  rig = await startPcscd();
  process.env.PCSCLITE_CSOCK_NAME = rig.socketPath;
});

after(async () => {
  await rig?.stop();
});

function nextEvent<T>(emitter: EventEmitter, event: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no '${event}' within ${EVENT_TIMEOUT_MS} ms:\n${rig.log()}`)),
      EVENT_TIMEOUT_MS,
    );
    emitter.once(event, (value: T) => {
      clearTimeout(timer);
      // Out of pcsclite's callback before anything closes (see test/pcsc/virtual-card.test.ts).
      setImmediate(() => resolve(value));
    });
  });
}

/** The reader manager's next event of a type, or a failure saying what it reported instead. */
function managerEvent(manager: ReaderManager, type: ReaderEvent['type']): Promise<ReaderEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${type} event; problem: ${manager.status.problem?.message}`)),
      EVENT_TIMEOUT_MS,
    );
    manager.on('event', (event) => {
      if (event.type !== type) return;
      clearTimeout(timer);
      resolve(event);
    });
  });
}

/** nfc-pcsc on the rig's first reader, without its own card processing; closed with the test. */
async function openReader(t: TestContext): Promise<{ reader: Reader; virtual: VirtualReader }> {
  const nfc = new NFC();
  const readers: Reader[] = [];
  const wanted = rig.readers[0]!.name;
  const found = new Promise<Reader>((resolve) =>
    // Every reader keeps an error listener: pcscd stopping at the end makes each emit one.
    nfc.on('reader', (reader) => {
      reader.on('error', () => {});
      readers.push(reader);
      if (reader.name === wanted) resolve(reader);
    }),
  );
  nfc.on('error', () => {});
  const reader = await found;
  reader.autoProcessing = false;
  const virtual = new VirtualReader(rig.readers[0]!.port);
  t.after(async () => {
    // pcscd must have seen the card go (taken away here or pulled by a fault) before the next
    // test's context starts, or that context starts with a card present that then leaves.
    await virtual.remove();
    const deadline = Date.now() + EVENT_TIMEOUT_MS;
    while (reader.card && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const each of readers) each.close();
    nfc.close();
  });
  return { reader, virtual };
}

/** Puts `card` on the reader and resolves with nfc-pcsc's card (its ATR) once connected. */
async function present(reader: Reader, virtual: VirtualReader, card: VirtualDesfireCard) {
  const seen = nextEvent<Card>(reader, 'card');
  await virtual.insert(card);
  return seen;
}

function clientOn(reader: Reader): DesfireClient {
  return new DesfireClient({ transmit: (apdu) => reader.transmit(apdu, 64) });
}

/** A card holding `credits` in a wallet application not personalized yet (zero keys). */
function walletCard(uid: string, credits: number): VirtualDesfireCard {
  return desfireWalletCard(Buffer.from(uid, 'hex'), AID, credits);
}

async function credit(client: DesfireClient, amount: number, record: number): Promise<void> {
  await client.selectApplication(AID);
  await client.authenticate(KEY_TILL, ZERO_AES);
  await client.credit(VALUE_FILE, amount, 'enciphered');
  await client.writeRecord(RECORD_FILE, 0, Buffer.alloc(RECORD_SIZE, record), 'enciphered');
  await client.commitTransaction();
}

function valueOn(card: VirtualDesfireCard): number | undefined {
  const file = card.application(AID)?.files.get(VALUE_FILE);
  return file?.type === 'value' ? file.value : undefined;
}

describe('virtual DESFire card over pcscd and vpcd', () => {
  test("when a DESFire card is presented, then pcscd gives its ATR and the reader's GET UID its 7-byte UID", async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = new VirtualDesfireCard({ uid: Buffer.from('04D1E5F0A1B2C3', 'hex') });
    const seen = await present(reader, virtual, card);
    assert.deepEqual(seen.atr, DESFIRE_ATR);
    const uid = await reader.transmit(Buffer.from('FFCA000000', 'hex'), 12);
    assert.equal(uid.toString('hex').toUpperCase(), '04D1E5F0A1B2C39000');
  });

  test('when the reader side talks to it, then GetVersion, a factory key change and a wallet transaction work end to end', async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = walletCard('04D1E5F0A1B2C4', 100);
    await present(reader, virtual, card);
    const client = clientOn(reader);
    const version = await client.getVersion();
    assert.deepEqual(version.uid, card.uid);
    assert.equal(version.hardware.vendor, 0x04);
    await client.selectApplication(PICC_AID);
    await client.authenticate(0, { type: 'des', key: Buffer.alloc(16) });
    const picc: DesfireKey = { type: 'aes', key: Buffer.alloc(16, 0x5a) };
    await client.changeKey(0, picc, 1);
    await client.authenticate(0, picc);
    await credit(client, 25, 1);
    assert.equal(await client.getValue(VALUE_FILE, 'enciphered'), 125);
    assert.equal(valueOn(card), 125);
    assert.equal(card.piccKey.type, 'aes');
    assert.equal(virtual.counts.commit, 1);
  });

  test('when the card is pulled just before CommitTransaction, then it keeps its old value and record file', async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = walletCard('04D1E5F0A1B2C5', 100);
    await present(reader, virtual, card);
    const fault = card.failAt('commit', 'pull-before');
    await assert.rejects(credit(clientOn(reader), 40, 2));
    assert.ok(fault.fired);
    await virtual.waitForRemoval();
    assert.equal(valueOn(card), 100);
    assert.equal(card.application(AID)?.files.get(RECORD_FILE)?.type, 'cyclic-record');
    const records = card.application(AID)?.files.get(RECORD_FILE);
    assert.deepEqual(records?.type === 'cyclic-record' ? records.records : null, []);
  });

  test('when the card is pulled right after it committed, then the caller sees no answer and the card holds the new value', async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = walletCard('04D1E5F0A1B2C6', 100);
    await present(reader, virtual, card);
    const fault = card.failAt('commit', 'pull-after');
    await assert.rejects(credit(clientOn(reader), 40, 3));
    assert.ok(fault.fired);
    assert.equal(valueOn(card), 140);
    // Back on the reader, a new session reads what was committed.
    await virtual.waitForRemoval();
    const seen = nextEvent<Card>(reader, 'card');
    await virtual.insert(card);
    await seen;
    const client = clientOn(reader);
    await client.selectApplication(AID);
    await client.authenticate(KEY_TILL, ZERO_AES);
    assert.equal(await client.getValue(VALUE_FILE, 'enciphered'), 140);
    const [latest] = await client.readRecords(RECORD_FILE, 0, 1, RECORD_SIZE, 'enciphered');
    assert.deepEqual(latest, Buffer.alloc(RECORD_SIZE, 3));
  });

  test('when the card stalls on a command, then the exchange does not end until the card is taken away', async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = walletCard('04D1E5F0A1B2C7', 10);
    await present(reader, virtual, card);
    const fault = card.failAt('getVersion', 'stall');
    const pending = clientOn(reader).getVersion();
    await fault.triggered;
    const outcome = await Promise.race([
      pending.then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
    ]);
    assert.equal(outcome, 'still waiting');
    await virtual.remove();
    await assert.rejects(pending);
  });

  test('when the card is slow, then its answer comes late but right', async (t) => {
    const { reader, virtual } = await openReader(t);
    const card = walletCard('04D1E5F0A1B2C8', 10);
    await present(reader, virtual, card);
    card.onApdu(() => ({ delayMs: 50 }));
    const started = performance.now();
    const version = await clientOn(reader).getVersion();
    t.diagnostic(
      `GetVersion in 3 frames, 50 ms each: ${(performance.now() - started).toFixed(0)} ms`,
    );
    assert.deepEqual(version.uid, card.uid);
  });

  test("when the service's reader manager sees a DESFire card, then it reports it present by its UID", async (t) => {
    const manager = new ReaderManager({
      keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
      createNfc: () => new NFC(),
      pcscdSocket: rig.socketPath,
      operationTimeoutMs: 3_000,
      queueLimit: 2,
      log: silentLogger,
    });
    t.after(() => manager.stop(0));
    const virtual = new VirtualReader(rig.readers[0]!.port);
    t.after(() => virtual.remove());
    const present = managerEvent(manager, 'card-present');
    const attached = managerEvent(manager, 'reader-attached');
    manager.start();
    await attached;
    await virtual.insert(new VirtualDesfireCard({ uid: Buffer.from('04D1E5F0A1B2C9', 'hex') }));
    const event = await present;
    assert.deepEqual(event, {
      type: 'card-present',
      reader: rig.readers[0]!.name,
      cardId: '04D1E5F0A1B2C9',
    });
    assert.equal(manager.status.problem, null, 'no "AID was not set" problem');
  });
});
