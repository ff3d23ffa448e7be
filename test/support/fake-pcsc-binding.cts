// A stand-in for @pokusew/pcsclite's module function, for the PC/SC host's supervision tests
// (test/unit/main/pcsc-host.test.ts): the host (main/pcsc-host.ts) loads it in place of the
// native binding (test/support/pcsc-host-with-binding.ts). FAKE_PCSC_BEHAVIOUR says how it
// misbehaves: `card` (one reader, one card that answers GET UID), `hang-on-construct` (spins
// in the constructor, as the unpatched binding does without a service), `no-service` (throws as
// the patched one does), `hang-on-transmit` (answers GET UID, then never answers again: a call
// stuck in SCardTransmit), `exit-on-transmit` (the process dies under a card call). With
// FAKE_PCSC_ANSWERED, it writes there how many transmits it has answered (each after the host
// sent the answer on), so a test that stalls the main process can wait for an answer sent.
import events = require('node:events');
import fs = require('node:fs');

const { EventEmitter } = events;

const behaviour = process.env.FAKE_PCSC_BEHAVIOUR ?? 'card';
const ATR = Buffer.from('3b8f8001804f0ca000000306030001000000006a', 'hex');
const GET_UID = Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]);

type Callback = (error?: Error, value?: unknown) => void;

const answeredFile = process.env.FAKE_PCSC_ANSWERED;
let answered = 0;

/** Answers a transmit as the binding does (on a later turn), then counts it. */
function answer(callback: Callback, value: Buffer): void {
  setImmediate(() => {
    callback(undefined, value);
    answered += 1;
    if (answeredFile) fs.writeFileSync(answeredFile, String(answered));
  });
}

class FakeReader extends EventEmitter {
  SCARD_STATE_EMPTY = 0x10;
  SCARD_STATE_PRESENT = 0x20;
  SCARD_SHARE_SHARED = 2;
  SCARD_SHARE_DIRECT = 3;
  SCARD_LEAVE_CARD = 0;
  SCARD_RESET_CARD = 1;
  SCARD_UNPOWER_CARD = 2;
  state = 0x10;
  connected = false;
  constructor(readonly name: string) {
    super();
  }
  connect(_options: object, callback: Callback) {
    this.connected = true;
    setImmediate(() => callback(undefined, 2));
  }
  disconnect(_disposition: number, callback: Callback) {
    this.connected = false;
    setImmediate(() => callback());
  }
  transmit(data: Buffer, _maxLength: number, _protocol: number, callback: Callback) {
    if (Buffer.compare(data, GET_UID) === 0) {
      answer(callback, Buffer.from('04a1b2c39000', 'hex'));
      return;
    }
    if (behaviour === 'hang-on-transmit') return;
    if (behaviour === 'exit-on-transmit') process.exit(70);
    answer(callback, Buffer.from('9000', 'hex'));
  }
  control(_data: Buffer, _code: number, _maxLength: number, callback: Callback) {
    setImmediate(() => callback(new Error('SCardControl error: not supported')));
  }
  close() {
    this.emit('end');
  }
}

export = function pcsclite() {
  if (behaviour === 'hang-on-construct') for (;;);
  if (behaviour === 'no-service')
    throw new Error('SCardEstablishContext error: Service not available.(0x8010001d)');
  const pcsc = Object.assign(new EventEmitter(), { readers: {}, close: () => undefined });
  process.nextTick(() => {
    const reader = new FakeReader('Fake Reader PICC 00');
    pcsc.emit('reader', reader);
    setImmediate(() => {
      reader.emit('status', { state: 0x22, atr: ATR });
      reader.state = 0x22;
    });
  });
  return pcsc;
};
