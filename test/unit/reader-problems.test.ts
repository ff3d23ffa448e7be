import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, test } from 'node:test';
import type { NFC } from 'nfc-pcsc';
import { ReaderManager } from '../../service/card/reader-manager.ts';
import {
  loadProblem,
  readerErrorProblem,
  ReaderProblemError,
} from '../../service/card/reader-problems.ts';
import { silentLogger } from '../../service/logger.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';

// Each reason for "no usable reader" gets its own code, so the tray can say what to do.

class FakeNfc extends EventEmitter {
  close(): void {}
}

const managers: ReaderManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.stop(0)));
});

const flush = () => new Promise((resolve) => setImmediate(resolve));

function manager(createNfc: () => Promise<NFC> | NFC) {
  const started = new ReaderManager({
    keys: new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 }),
    createNfc,
    operationTimeoutMs: 500,
    queueLimit: 2,
    log: silentLogger,
  });
  managers.push(started);
  started.start();
  return started;
}

describe('reader problems', () => {
  test('when the binding cannot load or construct, then the message names the code: library missing, wrong ABI, service stopped', () => {
    assert.equal(
      loadProblem('libpcsclite.so.1: cannot open shared object file').code,
      'library-missing',
    );
    assert.equal(loadProblem("Cannot find module 'bindings'").code, 'library-missing');
    assert.equal(
      loadProblem('was compiled against a different Node.js version using NODE_MODULE_VERSION 128')
        .code,
      'wrong-abi',
    );
    assert.equal(
      loadProblem('SCardEstablishContext error: Service not available.(0x8010001d)').code,
      'service-stopped',
    );
    assert.equal(loadProblem('SCardEstablishContext error: Access denied.').code, 'pcsc-error');
  });

  test("when a reader's error is PC/SC's sharing violation, then it is the reader in use by another program; another error is the card's", () => {
    const inUse = readerErrorProblem(
      'ACS ACR122U: An error occurred while connecting.',
      'SCardConnect error: Sharing violation.(0x8010000b)',
    );
    assert.equal(inUse.code, 'reader-in-use');
    assert.match(inUse.message, /An error occurred while connecting\. \(SCardConnect error/);
    assert.equal(
      readerErrorProblem('Cannot process ISO 14443-4 tag because AID was not set.').code,
      'card-unreadable',
    );
  });

  test('when a card cannot be connected because another program holds the reader, then the status says reader-in-use until a card is read', async () => {
    const nfc = new FakeNfc();
    const readers = manager(() => nfc as unknown as NFC);
    await flush();
    const reader = Object.assign(new EventEmitter(), { name: 'ACS ACR122U', close() {} });
    nfc.emit('reader', reader);
    const connectError = Object.assign(new Error('An error occurred while connecting.'), {
      name: 'ConnectError',
      previous: new Error('SCardConnect error: Sharing violation.(0x8010000b)'),
    });
    reader.emit('error', connectError);
    assert.equal(readers.status.problem?.code, 'reader-in-use');
    assert.equal(readers.status.pcsc, 'ready', 'PC/SC itself is fine');
    reader.emit('card', { uid: '04a1b2c3' });
    assert.equal(readers.status.problem, null);
  });

  test('when the PC/SC stand-in fails with a ReaderProblemError, then that problem is shown as is', async () => {
    const readers = manager(async () => {
      throw new ReaderProblemError({
        code: 'host-not-answering',
        message: 'the PC/SC host did not answer',
      });
    });
    await flush();
    assert.equal(readers.status.problem?.code, 'host-not-answering');
    assert.equal(readers.status.problem?.message, 'the PC/SC host did not answer');
  });
});
