/**
 * reader-answers.ts notes each answer of a reader by wrapping methods of the PC/SC reader that
 * nfc-pcsc's Reader drives (@pokusew/pcsclite's CardReader): nfc-pcsc gives no other hook. So
 * it holds only while nfc-pcsc reaches the card through those methods, and pcsclite answers
 * each through its callback. Both are checked here against the installed packages, so that an
 * upgrade of either that changes the path turns these tests red.
 */
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import readerModule from 'nfc-pcsc/dist/Reader.js';
import { lastAnswerAt, watchAnswers } from '../../service/card/reader-answers.ts';

const require = createRequire(import.meta.url);
/** pcsclite's CardReader: the native class, its JS methods (connect, transmit...) added by lib/pcsclite.js. */
require('@pokusew/pcsclite');
const { CardReader } = require(
  join(dirname(require.resolve('@pokusew/pcsclite/package.json')), 'build/Release/pcsclite.node'),
) as { CardReader: { prototype: object } };

const CLASSIC_ATR = Buffer.from('3b8f8001804f0ca000000306030001000000006a', 'hex');
const OK = Buffer.from([0x90, 0x00]);
const KEY = Buffer.from('ffffffffffff', 'hex');

type Callback = (error?: Error, value?: unknown) => void;

/**
 * A pcsclite CardReader with its own JS methods and, in place of the native calls under them
 * (_connect, _transmit, _control, _disconnect), a card that answers on a later turn. Each
 * native answer is given a time of its own (performance.now() while its callback runs), and
 * `unnoted` lists the native calls whose answer lastAnswerAt does not show.
 */
function pcscReaderOverACard() {
  const answered: string[] = [];
  const unnoted: string[] = [];
  let reader: Reader | undefined;
  let tick = 0;
  const answer = (call: string, callback: Callback, ...value: unknown[]) =>
    setImmediate(() => {
      answered.push(call);
      const now = performance.now;
      const at = 1e12 + (tick += 1);
      performance.now = () => at;
      try {
        callback(...(value as [Error | undefined, unknown]));
      } finally {
        performance.now = now;
      }
      if (reader && lastAnswerAt(reader) !== at) unnoted.push(call);
    });
  const pcsc = Object.create(CardReader.prototype) as EventEmitter & { connected: boolean };
  Object.assign(pcsc, {
    name: 'ACS ACR122U PICC Interface',
    state: 0x10,
    connected: false,
    _connect(_share: number, _protocol: number, callback: Callback) {
      pcsc.connected = true;
      answer('_connect', callback, undefined, 2);
    },
    _disconnect(_disposition: number, callback: Callback) {
      pcsc.connected = false;
      answer('_disconnect', callback, undefined);
    },
    _transmit(data: Buffer, _length: number, _protocol: number, callback: Callback) {
      const [, ins, , , le] = data;
      const response =
        ins === 0xca
          ? Buffer.concat([Buffer.from('04a1b2c3', 'hex'), OK])
          : ins === 0xb0
            ? Buffer.concat([Buffer.alloc(le ?? 0), OK])
            : OK;
      answer('_transmit', callback, undefined, response);
    },
    _control(_data: Buffer, _code: number, output: Buffer, callback: Callback) {
      OK.copy(output);
      answer('_control', callback, undefined, OK.length);
    },
  });
  return {
    pcsc,
    answered,
    unnoted,
    watched(watchedReader: Reader) {
      reader = watchedReader;
    },
  };
}

describe('reader answers over the installed nfc-pcsc and @pokusew/pcsclite', () => {
  test("when nfc-pcsc's Reader takes a card and makes every call the worker makes, then each answer of the PC/SC reader is noted", async () => {
    const card = pcscReaderOverACard();
    const reader = new readerModule.default(card.pcsc) as unknown as Reader;
    watchAnswers(reader);
    card.watched(reader);
    const taken = new Promise((resolve, reject) => {
      reader.once('card', resolve);
      reader.once('error', reject);
    });
    card.pcsc.emit('status', { state: 0x22, atr: CLASSIC_ATR });
    await taken; // connect, then GET UID
    await reader.loadAuthenticationKey(0, KEY);
    await reader.authenticate(4, 0x60, KEY);
    await reader.read(4, 48, 16);
    await reader.write(4, Buffer.alloc(16), 16);
    await reader.transmit(Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]), 12);
    await reader.control(Buffer.from([0xff, 0x00, 0x00, 0x00, 0x00]), 2);
    await reader.disconnect();

    assert.deepEqual(
      [...new Set(card.answered)].sort(),
      ['_connect', '_control', '_disconnect', '_transmit'],
      'a native call was not reached: the card was not driven as the worker drives it',
    );
    assert.deepEqual(card.unnoted, [], `answered: ${card.answered.join(', ')}`);
  });

  test("when nfc-pcsc's source is read, then it calls the PC/SC reader only through the methods reader-answers.ts wraps, and on, and close", () => {
    const dist = dirname(require.resolve('nfc-pcsc/dist/Reader.js'));
    const called = new Set<string>();
    for (const file of readdirSync(dist).filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(join(dist, file), 'utf8');
      for (const match of source.matchAll(/\bthis\.reader\.(\w+)\s*\(/g)) called.add(match[1]!);
    }
    assert.deepEqual(
      [...called].sort(),
      ['close', 'connect', 'control', 'disconnect', 'on', 'transmit'],
      'nfc-pcsc calls the PC/SC reader otherwise: check service/card/reader-answers.ts',
    );
  });
});
