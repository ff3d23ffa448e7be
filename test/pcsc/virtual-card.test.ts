// The PC/SC test rig end to end: nfc-pcsc in this process -> libpcsclite -> a private pcscd ->
// vpcd -> the virtual MIFARE Classic card. Pins down the rig itself and the nfc-pcsc
// behaviour the reader manager builds on (how removal, tearing and pcscd death surface).
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { after, before, describe, test, type TestContext } from 'node:test';
import nfcPcsc from 'nfc-pcsc';
import type { Card, Reader } from 'nfc-pcsc';
import { startPcscd, type PcscdRig } from '../support/pcscd.ts';
import {
  VirtualCard,
  VirtualReader,
  blockCountOf,
  sectorOfBlock,
  trailerBlockOf,
} from '../support/virtual-card.ts';

const { NFC, AuthenticationError, ReadError, WriteError } = nfcPcsc;

const DEFAULT_KEY = Buffer.from('FFFFFFFFFFFF', 'hex');
const KEY_TYPE_A = 0x60;
const EVENT_TIMEOUT_MS = 3_000;

let rig: PcscdRig;

before(async () => {
  rig = await startPcscd();
  // Before the first NFC: libpcsclite reads it when it first connects.
  process.env.PCSCLITE_CSOCK_NAME = rig.socketPath;
});

after(async () => {
  await rig?.stop();
});

/**
 * Resolves with the next `event` of `emitter`; unlike events.once, ignores 'error'. Resolves
 * from a later macrotask: `card.off`, `error` and `end` are emitted while @pokusew/pcsclite
 * holds the reader's mutex, and the microtasks of that callback run before it lets go, so a
 * reader.close() in an `await` continuation would deadlock the whole process.
 */
function nextEvent<T = unknown>(
  emitter: EventEmitter,
  event: string,
  timeoutMs = EVENT_TIMEOUT_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${event}' within ${timeoutMs} ms; pcscd log:\n${rig.log()}`));
    }, timeoutMs);
    const listener = (value: T) => {
      clearTimeout(timer);
      setImmediate(() => resolve(value));
    };
    emitter.once(event, listener);
  });
}

/** Whether a promise is still pending after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((resolve) => setTimeout(() => resolve(pending), ms)),
  ]);
  return winner === pending;
}

interface Harness {
  /** The nfc-pcsc Reader for a rig reader (index 0 or 1). */
  reader(index?: 0 | 1): Promise<Reader>;
  /** The virtual side of the same reader. */
  virtual(index?: 0 | 1): VirtualReader;
  /** Inserts a card and waits for nfc-pcsc's `card` event. */
  insert(card: VirtualCard, index?: 0 | 1): Promise<Card>;
  /** Every `error` the NFC or a reader emitted. */
  errors: Error[];
}

/**
 * A fresh NFC for one test, closed (with its readers) and with its cards removed when the test
 * ends. Never call it while pcscd is down: `new NFC()` would busy-wait.
 */
function openHarness(t: TestContext): Harness {
  const nfc = new NFC();
  const errors: Error[] = [];
  const readers = new Map<string, Reader>();
  const readerWaiters = new Map<string, ((reader: Reader) => void)[]>();
  const virtuals = new Map<number, VirtualReader>();
  // nfc.close() and reader.close() emit "Command cancelled": keep listeners to the end.
  nfc.on('error', (error) => errors.push(error));
  nfc.on('reader', (reader) => {
    reader.on('error', (error) => errors.push(error));
    readers.set(reader.name, reader);
    for (const resolve of readerWaiters.get(reader.name) ?? []) resolve(reader);
    readerWaiters.delete(reader.name);
  });
  t.after(async () => {
    for (const reader of readers.values()) reader.close();
    nfc.close();
    await Promise.all([...virtuals.values()].map((virtual) => virtual.remove()));
  });

  const harness: Harness = {
    errors,
    reader(index = 0) {
      const name = rig.readers[index]!.name;
      const known = readers.get(name);
      if (known) return Promise.resolve(known);
      return new Promise<Reader>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`reader ${name} did not appear:\n${rig.log()}`)),
          EVENT_TIMEOUT_MS,
        );
        const waiters = readerWaiters.get(name) ?? [];
        waiters.push((reader) => {
          clearTimeout(timer);
          resolve(reader);
        });
        readerWaiters.set(name, waiters);
      });
    },
    virtual(index = 0) {
      const port = rig.readers[index]!.port;
      let virtual = virtuals.get(port);
      if (!virtual) {
        virtual = new VirtualReader(port);
        virtuals.set(port, virtual);
      }
      return virtual;
    },
    async insert(card, index = 0) {
      const reader = await harness.reader(index);
      const detected = nextEvent<Card>(reader, 'card');
      await harness.virtual(index).insert(card);
      return detected;
    },
  };
  return harness;
}

function newCard(uidHex = '04A1B2C3', size: '1K' | '4K' = '1K'): VirtualCard {
  return new VirtualCard({ uid: Buffer.from(uidHex, 'hex'), size });
}

describe('virtual MIFARE Classic card (no pcscd)', () => {
  test('when a 1K card is new, then trailers hold the transport keys, data blocks are zero and block 0 starts with the UID', () => {
    const card = newCard('04A1B2C3');
    assert.equal(card.id, '04A1B2C3');
    assert.equal(card.blockCount, 64);
    assert.equal(card.block(7).toString('hex').toUpperCase(), 'FFFFFFFFFFFFFF078069FFFFFFFFFFFF');
    assert.deepEqual(card.block(4), Buffer.alloc(16));
    assert.deepEqual(card.block(0).subarray(0, 5), Buffer.from('04A1B2C3D4', 'hex'));
    assert.equal(
      card.atr.toString('hex').toUpperCase(),
      '3B8F8001804F0CA000000306030001000000006A',
    );
  });

  test('when a 4K card is made, then it has 40 sectors and the 4K ATR with a valid checksum', () => {
    const card = newCard('04112233445566', '4K');
    assert.equal(card.blockCount, blockCountOf('4K'));
    assert.equal(card.sectorCount, 40);
    assert.equal(sectorOfBlock(128), 32);
    assert.equal(trailerBlockOf(39), 255);
    assert.equal(card.block(255).toString('hex').toUpperCase(), 'FFFFFFFFFFFFFF078069FFFFFFFFFFFF');
    assert.equal(card.atr[14], 0x02);
    assert.equal(
      card.atr.subarray(1).reduce((xor, byte) => xor ^ byte, 0),
      0,
      'TCK makes the XOR of T0..TCK zero',
    );
  });

  test('when blocks are given, then they override the defaults, and a bad block is refused', () => {
    const card = new VirtualCard({
      uid: Buffer.from('01020304', 'hex'),
      blocks: { 4: Buffer.alloc(16, 7) },
    });
    assert.deepEqual(card.block(4), Buffer.alloc(16, 7));
    assert.throws(() => card.setBlock(64, Buffer.alloc(16)), RangeError);
    assert.throws(() => card.setBlock(4, Buffer.alloc(15)), RangeError);
    assert.throws(() => new VirtualCard({ uid: Buffer.alloc(5) }), RangeError);
  });
});

describe('PC/SC rig through nfc-pcsc', () => {
  test('when a card is inserted, then the reader emits card with its UID (uppercased, the cardId)', async (t) => {
    const harness = openHarness(t);
    const card = newCard('04A1B2C3');
    const started = performance.now();
    const detected = await harness.insert(card);
    t.diagnostic(`insert -> card event: ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(detected.uid, '04a1b2c3', 'nfc-pcsc gives lowercase hex');
    assert.equal(detected.uid?.toUpperCase(), card.id);

    const sevenByte = newCard('04112233445566', '4K');
    const detected7 = await harness.insert(sevenByte, 1);
    assert.equal(detected7.uid?.toUpperCase(), '04112233445566');
  });

  test('when authenticated with the default key, then a block written with write(4, buf, 16) reads back with read(4, 16, 16)', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    const data = Buffer.from('00112233445566778899AABBCCDDEEFF', 'hex');

    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    await reader.write(4, data, 16);
    assert.deepEqual(await reader.read(4, 16, 16), data);
    assert.deepEqual(card.block(4), data);
    // Key A never reads back from a trailer.
    assert.equal(
      (await reader.read(7, 16, 16)).toString('hex').toUpperCase(),
      '000000000000FF078069FFFFFFFFFFFF',
    );
    const { getUid, loadKey, authenticate, read, write, ...others } = harness.virtual().counts;
    assert.deepEqual(
      { getUid, loadKey, authenticate, read, write },
      {
        getUid: 1,
        loadKey: 1,
        authenticate: 1,
        read: 2,
        write: 1,
      },
    );
    assert.ok(
      Object.values(others).every((count) => count === 0),
      JSON.stringify(others),
    );
  });

  test('when a 4K card is used above block 128, then sectors of 16 blocks are authenticated and written', async (t) => {
    const harness = openHarness(t);
    const card = newCard('04112233445566', '4K');
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(200, KEY_TYPE_A, DEFAULT_KEY);
    await reader.write(200, Buffer.alloc(16, 0x5a), 16);
    assert.deepEqual(card.block(200), Buffer.alloc(16, 0x5a));
    // Block 143 is the trailer of sector 32; block 144 is sector 33, not authenticated.
    await assert.rejects(
      reader.read(144, 16, 16),
      (error: Error) => error instanceof ReadError && /0x6982/.test(error.message),
    );
  });

  test('when the key is wrong, then authenticate rejects with AuthenticationError and the card halts until pcscd resets it', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    const key = Buffer.from('A0A1A2A3A4A5', 'hex');
    card.setKeys(1, { keyA: key });
    await harness.insert(card);
    const reader = await harness.reader();
    const virtual = harness.virtual();
    virtual.resetApduLog();

    await assert.rejects(reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY), (error: Error) => {
      assert.ok(error instanceof AuthenticationError);
      assert.equal((error as InstanceType<typeof AuthenticationError>).code, 'operation_failed');
      assert.match(error.message, /0x6300/);
      return true;
    });
    // Halted: every card command answers 63 00, the right key included.
    await assert.rejects(
      reader.read(4, 16, 16),
      (error: Error) => error instanceof ReadError && /0x6300/.test(error.message),
    );
    await assert.rejects(reader.authenticate(4, KEY_TYPE_A, key), /0x6300/);

    // SCardDisconnect with SCARD_RESET_CARD reaches the card as vpcd's reset (02), in place.
    const cardEvents: string[] = [];
    reader.on('card', () => cardEvents.push('card'));
    reader.on('card.off', () => cardEvents.push('card.off'));
    await new Promise<void>((resolve, reject) =>
      reader.reader.disconnect(reader.reader.SCARD_RESET_CARD, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    reader.connection = null;
    await reader.connect();
    assert.equal(virtual.resets, 1);
    await reader.authenticate(4, KEY_TYPE_A, key);
    assert.deepEqual(await reader.read(4, 16, 16), Buffer.alloc(16));
    assert.deepEqual(cardEvents, [], 'the card stayed present');
  });

  test('when the card is pulled before a write takes effect, then the write rejects and the block is unchanged', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    const fault = card.failAt('write', 'pull-before');

    await assert.rejects(reader.write(4, Buffer.alloc(16, 0xab), 16), (error: Error) => {
      // vpcd returns an empty response when the card leaves mid-APDU.
      assert.ok(error instanceof WriteError);
      assert.match(error.message, /Invalid response length 0/);
      return true;
    });
    assert.ok(fault.fired);
    assert.equal(fault.event?.block, 4);
    assert.deepEqual(card.block(4), Buffer.alloc(16));
    assert.equal(harness.virtual().card, null);
  });

  test('when the card is pulled after a write took effect, then the write rejects but the block is changed', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    const fault = card.failAt({ command: 'write', block: 5 }, 'pull-after');

    await reader.write(4, Buffer.alloc(16, 0x11), 16);
    await assert.rejects(reader.write(5, Buffer.alloc(16, 0x22), 16), WriteError);
    assert.ok(fault.fired);
    assert.deepEqual(card.block(4), Buffer.alloc(16, 0x11));
    assert.deepEqual(card.block(5), Buffer.alloc(16, 0x22));
  });

  test('when the card stalls, then the call does not settle until the card is removed', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    const fault = card.failAt({ command: 'read', nth: 2 }, 'stall');

    await reader.read(4, 16, 16);
    const stalled = reader.read(4, 16, 16);
    stalled.catch(() => {});
    await fault.triggered;
    assert.ok(await stillPending(stalled, 1_000), 'no timeout anywhere: the read waits');

    await harness.virtual().remove();
    await assert.rejects(stalled, ReadError);
  });

  test('when one reader stalls, then the other reader keeps working but later calls on the stalled one queue', async (t) => {
    const harness = openHarness(t);
    const stalledCard = newCard('04A1B2C3');
    const otherCard = newCard('04D1D2D3');
    await harness.insert(stalledCard, 0);
    await harness.insert(otherCard, 1);
    const [stalledReader, otherReader] = [await harness.reader(0), await harness.reader(1)];
    await stalledReader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    await otherReader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);

    const fault = stalledCard.failAt('read', 'stall');
    const stalled = stalledReader.read(4, 16, 16);
    stalled.catch(() => {});
    await fault.triggered;

    assert.deepEqual(await otherReader.read(4, 16, 16), Buffer.alloc(16));
    const queued = stalledReader.read(5, 16, 16);
    queued.catch(() => {});
    assert.ok(await stillPending(queued, 500), 'pcscd runs one transmit at a time per reader');

    await harness.virtual(0).remove();
    await assert.rejects(stalled, ReadError);
    // The queued transmit reaches the reader after the card is gone.
    await assert.rejects(queued, ReadError);
  });

  test('when an answer is delayed, then the call resolves late with the answer', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    card.failAt('read', { delayMs: 300 });

    const started = performance.now();
    assert.deepEqual(await reader.read(4, 16, 16), Buffer.alloc(16));
    assert.ok(performance.now() - started >= 290);
  });

  test('when a fault handler watches every APDU, then it sees indexes since insertion and can pull at any of them', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    const seen: string[] = [];
    card.onApdu((event) => {
      seen.push(
        `${event.index}:${event.command}${event.block === undefined ? '' : `@${event.block}`}`,
      );
      return event.index === 4 ? 'pull-before' : undefined;
    });
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    await reader.read(4, 16, 16);
    await assert.rejects(reader.read(5, 16, 16), ReadError);
    assert.deepEqual(seen, ['0:getUid', '1:loadKey', '2:authenticate@4', '3:read@4', '4:read@5']);
  });

  test('when the card is removed, then the reader emits card.off and later calls fail with card_not_connected', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    const off = nextEvent<Card>(reader, 'card.off');
    const started = performance.now();
    await harness.virtual().remove();
    assert.equal((await off).uid, '04a1b2c3');
    t.diagnostic(`remove -> card.off: ${(performance.now() - started).toFixed(0)} ms`);
    await assert.rejects(reader.read(4, 16, 16), (error: Error) => {
      assert.equal((error as InstanceType<typeof ReadError>).code, 'card_not_connected');
      return true;
    });
  });

  test('when pcscd is killed, then every reader emits error and end, and the virtual card is ejected', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const readers = [await harness.reader(0), await harness.reader(1)];
    const ends = readers.map((reader) => nextEvent(reader, 'end'));
    const errors = readers.map((reader) => nextEvent<Error>(reader, 'error'));
    try {
      await rig.kill();
      assert.equal(rig.running, false);
      // Usually "RPC transport error (0x80100013)", sometimes "Access denied (0x8010006A)":
      // any status error followed by `end` means pcscd is gone.
      for (const error of await Promise.all(errors)) {
        assert.match(error.message, /^SCardGetStatusChange error/);
        t.diagnostic(`reader error after pcscd died: ${error.message}`);
      }
      await Promise.all(ends);
      await harness.virtual().waitForRemoval();
      assert.equal(harness.virtual().card, null);
    } finally {
      await rig.start();
    }
  });

  test('when pcscd is started again, then a new NFC instance sees the readers and cards', async (t) => {
    await rig.kill();
    await rig.start();
    assert.equal(rig.running, true);
    const harness = openHarness(t);
    const card = newCard('0A0B0C0D');
    const detected = await harness.insert(card);
    assert.equal(detected.uid?.toUpperCase(), '0A0B0C0D');
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    assert.deepEqual(await reader.read(4, 16, 16), Buffer.alloc(16));
  });

  test('when 100 READ BINARY APDUs run with tcpNoDelay, then each takes a fraction of a millisecond', async (t) => {
    const harness = openHarness(t);
    const card = newCard();
    await harness.insert(card);
    const reader = await harness.reader();
    await reader.authenticate(4, KEY_TYPE_A, DEFAULT_KEY);
    harness.virtual().resetApduLog();

    const started = performance.now();
    for (let i = 0; i < 100; i++) await reader.read(4, 16, 16);
    const elapsed = performance.now() - started;
    t.diagnostic(
      `100 READ BINARY: ${elapsed.toFixed(1)} ms, ${(elapsed / 100).toFixed(3)} ms per APDU`,
    );
    assert.equal(harness.virtual().counts.read, 100);
  });
});
