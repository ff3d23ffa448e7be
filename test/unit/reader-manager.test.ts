import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, test } from 'node:test';
import type { NFC } from 'nfc-pcsc';
import { ReaderManager, type ReaderEvent } from '../../service/card/reader-manager.ts';
import { silentLogger } from '../../service/logger.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';

/** Stand-ins for nfc-pcsc's NFC and Reader: emitters driven by the test. */
class FakeReader extends EventEmitter {
  card: { uid?: string } | null = null;
  closed = false;
  constructor(readonly name: string) {
    super();
  }
  close() {
    this.closed = true;
  }
  insert(uid: string) {
    this.card = { uid };
    this.emit('card', { uid });
  }
  removeCard() {
    const card = this.card;
    this.card = null;
    this.emit('card.off', card);
  }
}

class FakeNfc extends EventEmitter {
  closed = false;
  close() {
    this.closed = true;
  }
  attach(name: string): FakeReader {
    const reader = new FakeReader(name);
    this.emit('reader', reader);
    return reader;
  }
}

const managers: ReaderManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.stop(0)));
});

function createManager(options: { readerName?: string } = {}) {
  const nfcs: FakeNfc[] = [];
  const events: ReaderEvent[] = [];
  const manager = new ReaderManager({
    readerName: options.readerName,
    keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
    createNfc: () => {
      const nfc = new FakeNfc();
      nfcs.push(nfc);
      return nfc as unknown as NFC;
    },
    operationTimeoutMs: 500,
    queueLimit: 2,
    probeIntervalMs: 10,
    log: silentLogger,
  });
  manager.on('event', (event) => events.push(event));
  managers.push(manager);
  manager.start();
  return { manager, nfcs, events };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('ReaderManager', () => {
  test('when a dual reader appears, then its SAM slot is ignored and the PICC slot is used', async () => {
    const { manager, nfcs } = createManager();
    await settle();
    nfcs[0]!.attach('ACS ACR1281 1S Dual Reader SAM 0');
    nfcs[0]!.attach('ACS ACR1281 1S Dual Reader PICC 0');
    assert.deepEqual(manager.status.readers, ['ACS ACR1281 1S Dual Reader PICC 0']);
    assert.equal(manager.status.reader, 'ACS ACR1281 1S Dual Reader PICC 0');
  });

  test('when a reader name is configured, then only the reader containing it is used', async () => {
    const { manager, nfcs } = createManager({ readerName: 'Omnikey' });
    await settle();
    nfcs[0]!.attach('ACS ACR122U PICC Interface');
    nfcs[0]!.attach('HID Global Omnikey 5022 Smart Card Reader');
    assert.equal(manager.status.reader, 'HID Global Omnikey 5022 Smart Card Reader');
  });

  test('when a card arrives and leaves, then it is reported with its id in uppercase hex', async () => {
    const { manager, nfcs, events } = createManager();
    await settle();
    const reader = nfcs[0]!.attach('Reader A');
    reader.insert('04a1b2c3');
    assert.equal(manager.status.card?.cardId, '04A1B2C3');
    reader.removeCard();
    assert.equal(manager.status.card, null);
    assert.deepEqual(
      events.filter((event) => event.type.startsWith('card')),
      [
        { type: 'card-present', reader: 'Reader A', cardId: '04A1B2C3' },
        { type: 'card-removed', reader: 'Reader A', cardId: '04A1B2C3' },
      ],
    );
  });

  test('when a card is on a reader that is not the chosen one, then it is not the card', async () => {
    const { manager, nfcs } = createManager({ readerName: 'A' });
    await settle();
    nfcs[0]!.attach('Reader A');
    const other = nfcs[0]!.attach('Other B');
    other.insert('04a1b2c3');
    assert.equal(manager.status.card, null);
  });

  test('when the chosen reader is unplugged, then the next contactless reader takes over', async () => {
    const { manager, nfcs } = createManager();
    await settle();
    const first = nfcs[0]!.attach('Reader 1');
    nfcs[0]!.attach('Reader 2');
    first.insert('04a1b2c3');
    first.emit('end');
    assert.equal(manager.status.reader, 'Reader 2');
    assert.equal(manager.status.card, null);
  });

  test('when pcscd drops the connection, then the context is rebuilt with a new NFC', async () => {
    const { manager, nfcs } = createManager();
    await settle();
    const reader = nfcs[0]!.attach('Reader A');
    reader.emit('error', new Error('SCardGetStatusChange error: RPC transport error.(0x80100013)'));
    assert.equal(manager.status.pcsc, 'unavailable');
    assert.equal(manager.status.reader, null);
    await settle();
    assert.equal(nfcs.length, 2);
    assert.equal(nfcs[0]!.closed, true);
    assert.equal(reader.closed, true);
    assert.equal(manager.status.pcsc, 'ready');
    // Late events from the dead context change nothing.
    reader.insert('04a1b2c3');
    assert.equal(manager.status.card, null);
  });

  test('when a reader reports an unreadable card, then it is a problem, not a crash', async () => {
    const { manager, nfcs } = createManager();
    await settle();
    const reader = nfcs[0]!.attach('Reader A');
    reader.emit('error', new Error('Cannot process ISO 14443-4 tag because AID was not set.'));
    assert.equal(manager.status.pcsc, 'ready');
    assert.match(manager.status.problem?.message ?? '', /ISO 14443-4/);
  });

  test('when there is no reader or no card, then card operations fail with NoReader / NoCard', async () => {
    const { manager, nfcs } = createManager();
    await settle();
    await assert.rejects(
      manager.withCard(async () => 1),
      { code: 'NoReader' },
    );
    nfcs[0]!.attach('Reader A');
    await assert.rejects(
      manager.withCard(async () => 1),
      { code: 'NoCard' },
    );
  });

  test('when PC/SC cannot be created, then the manager keeps trying without throwing', async () => {
    let attempts = 0;
    const manager = new ReaderManager({
      keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
      createNfc: () => {
        attempts += 1;
        throw new Error('SCardEstablishContext error: Service not available.(0x8010001d)');
      },
      operationTimeoutMs: 500,
      queueLimit: 2,
      probeIntervalMs: 5,
      log: silentLogger,
    });
    managers.push(manager);
    manager.start();
    await settle();
    assert.ok(attempts >= 2, `attempts: ${attempts}`);
    assert.equal(manager.status.pcsc, 'unavailable');
  });
});
