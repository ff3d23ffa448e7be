import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import readerModule from 'nfc-pcsc/dist/Reader.js';

// patches/ (applied by patch-package at npm install, then the binding is rebuilt): the PC/SC
// binding's constructor neither asks for elevation nor spins while the service is away, and
// nfc-pcsc says when it cannot connect to a card. See patches/README.md.

const require = createRequire(import.meta.url);

describe('the patched PC/SC binding (@pokusew/pcsclite 0.6.0)', () => {
  test('when its source is read, then the constructor has no elevated sc.exe and no retry loop', () => {
    const source = readFileSync(require.resolve('@pokusew/pcsclite/src/pcsclite.cpp'), 'utf8');
    const constructor = source.slice(
      source.indexOf('PCSCLite::PCSCLite()'),
      source.indexOf('PCSCLite::~PCSCLite()'),
    );
    assert.doesNotMatch(constructor, /runas|ShellExecute|WaitForSingleObject/);
    assert.doesNotMatch(constructor, /while\s*\(\s*result\s*==\s*SCARD_E_NO_SERVICE/);
  });

  test('when it is constructed while the smart-card service is away, then it throws SCARD_E_NO_SERVICE at once instead of spinning', () => {
    // The built binding, in its own process: unpatched, this never returns (100% CPU), so a
    // hang guard ends it; patched, it throws and the process exits on its own.
    const program = `try { require('@pokusew/pcsclite')(); console.log('constructed'); } catch (error) { console.log(error.message); }`;
    const result = spawnSync(process.execPath, ['-e', program], {
      encoding: 'utf8',
      env: { ...process.env, PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' },
      timeout: 60_000,
    });
    assert.equal(
      result.signal,
      null,
      `the constructor did not return (killed by the hang guard): ${result.stderr}`,
    );
    assert.match(result.stdout, /SCardEstablishContext error: .*\(0x8010001d\)/);
  });
});

describe('the patched nfc-pcsc (0.8.1) Reader', () => {
  test("when a card is put on a reader another program holds, then the Reader emits error with PC/SC's sharing violation", async () => {
    // A pcsclite reader whose SCardConnect fails as Windows and pcsc-lite answer while another
    // program has the reader exclusively.
    const pcsc = Object.assign(new EventEmitter(), {
      name: 'ACS ACR122U PICC Interface',
      state: 0x10,
      SCARD_STATE_EMPTY: 0x10,
      SCARD_STATE_PRESENT: 0x20,
      SCARD_SHARE_SHARED: 2,
      SCARD_SHARE_DIRECT: 3,
      connect(_options: object, callback: (error: Error) => void) {
        setImmediate(() =>
          callback(new Error('SCardConnect error: Sharing violation.(0x8010000b)')),
        );
      },
    });
    const reader = new readerModule.default(pcsc);
    const error = new Promise<Error & { previous?: Error }>((resolve) =>
      reader.once('error', resolve),
    );
    pcsc.emit('status', {
      state: 0x22,
      atr: Buffer.from('3b8f8001804f0ca000000306030001000000006a', 'hex'),
    });
    const emitted = await error;
    assert.equal(emitted.name, 'ConnectError');
    assert.match(emitted.previous?.message ?? '', /0x8010000b/);
  });
});
