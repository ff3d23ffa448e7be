// The virtual MIFARE Classic card's access rules, without any transport: keys A and B, the
// access bits of each block as the datasheet gives them, and torn writes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ContactlessFrontEnd,
  VirtualCard,
  accessBits,
  decodeAccessBits,
  trailerBlockOf,
  type CardContact,
} from '../../service/card/simulator/virtual-card.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';

const KEY_A = Buffer.from('A0A1A2A3A4A5', 'hex');
const KEY_B = Buffer.from('B0B1B2B3B4B5', 'hex');
const OK = '9000';
const REFUSED = '6982';
const FAILED = '6300';

function setup(groups?: [number, number, number, number]) {
  const card = new VirtualCard({ uid: Buffer.from('01020304', 'hex') });
  card.setKeys(1, { keyA: KEY_A, keyB: KEY_B });
  if (groups) card.setAccessBits(1, groups);
  const frontEnd = new ContactlessFrontEnd();
  const contact: CardContact = { card, authenticated: null, halted: false };
  const send = (hex: string, torn = false) =>
    frontEnd.execute(contact, Buffer.from(hex.replaceAll(' ', ''), 'hex'), torn).toString('hex');
  send(`FF820000 06 ${KEY_A.toString('hex')}`);
  send(`FF820001 06 ${KEY_B.toString('hex')}`);
  const auth = (block: number, key: 'A' | 'B') =>
    send(
      `FF860000 05 0100${block.toString(16).padStart(2, '0')}${key === 'A' ? '60' : '61'}${key === 'A' ? '00' : '01'}`,
    );
  const read = (block: number) => send(`FFB000${block.toString(16).padStart(2, '0')}10`);
  const write = (block: number, data: Buffer, torn = false) =>
    send(`FFD600${block.toString(16).padStart(2, '0')}10${data.toString('hex')}`, torn);
  return { card, contact, frontEnd, send, auth, read, write };
}

const status = (answer: string) => answer.slice(-4);
const DATA = Buffer.alloc(16, 0x5a);

describe('access bits', () => {
  test('when encoded and decoded, then the transport value is FF 07 80 and every combination round-trips', () => {
    assert.equal(accessBits([0, 0, 0, 1]).toString('hex'), 'ff0780');
    for (let bits = 0; bits < 8; bits++) {
      const groups: [number, number, number, number] = [
        bits,
        (bits + 1) & 7,
        (bits + 3) & 7,
        bits ^ 5,
      ];
      assert.deepEqual(decodeAccessBits(accessBits(groups)), groups);
    }
  });

  test('when the inverted copy does not match, then the bits decode as blocked', () => {
    assert.equal(decodeAccessBits(Buffer.from('ff0781', 'hex')), null);
  });
});

describe('keys A and B', () => {
  test('when key B is readable, as on a transport card, then key B authenticates but reads nothing', () => {
    const { auth, read } = setup();
    assert.equal(auth(4, 'B'), OK);
    assert.equal(read(4), REFUSED);
  });

  test('when key B is not readable (trailer 011), then either key reads and writes the data blocks', () => {
    for (const key of ['A', 'B'] as const) {
      const { auth, read, write } = setup([0, 0, 0, 0b011]);
      assert.equal(auth(4, key), OK);
      assert.equal(status(write(4, DATA)), OK);
      assert.equal(read(4), `${DATA.toString('hex')}${OK}`);
    }
  });

  test('when a wrong key is used, then authentication fails', () => {
    const { card, auth } = setup();
    card.setKeys(1, { keyA: Buffer.alloc(6, 1) });
    assert.equal(auth(4, 'A'), FAILED);
  });

  test('when the trailer is read with key A, then key A reads as zeros and key B as itself', () => {
    const { auth, read } = setup();
    assert.equal(auth(7, 'A'), OK);
    assert.equal(read(7), `000000000000ff078069${KEY_B.toString('hex')}${OK}`);
  });
});

describe('value blocks (the reader value operations, FF D7 and FF B1)', () => {
  // The wallet's access bits: both slots 110, the reserved block 100, the trailer 011.
  const WALLET: [number, number, number, number] = [0b110, 0b110, 0b100, 0b011];
  const value = (n: number, address: number) => encodeValueBlock(n, address);
  const op = (block: number, operation: 1 | 2, amount: number) =>
    `FFD700${block.toString(16).padStart(2, '0')}05${operation.toString(16).padStart(2, '0')}${amount.toString(16).padStart(8, '0')}`;
  const restore = (from: number, to: number) =>
    `FFD700${from.toString(16).padStart(2, '0')}0203${to.toString(16).padStart(2, '0')}`;

  test('when key A decrements a slot of the wallet, then the value drops and the generation stays', () => {
    const { card, send, auth } = setup(WALLET);
    card.setBlock(4, value(100, 3));
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(op(4, 2, 30)), OK);
    assert.deepEqual(card.block(4), value(70, 3));
    assert.equal(send('FFB1000404'), `00000046${OK}`);
  });

  test('when key A tries to increment, then the card refuses; key B may', () => {
    const { card, send, auth } = setup(WALLET);
    card.setBlock(4, value(100, 3));
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(op(4, 1, 30)), FAILED);
    assert.deepEqual(card.block(4), value(100, 3));
    assert.equal(auth(4, 'B'), OK);
    assert.equal(send(op(4, 1, 30)), OK);
    assert.deepEqual(card.block(4), value(130, 3));
  });

  test("when key A restores the older slot into the newer one, then the newer slot holds the older balance at its own generation (the wallet's limit)", () => {
    const { card, send, auth } = setup(WALLET);
    card.setBlock(4, value(100, 1));
    card.setBlock(5, value(0, 2));
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(restore(4, 5)), OK);
    assert.deepEqual(card.block(5), value(100, 2));
  });

  test('when the block is not a value block, refuses decrement (100) or lies in another sector, then the card refuses and nothing changes', () => {
    const { card, send, auth } = setup(WALLET);
    card.setBlock(4, value(100, 1));
    card.setBlock(6, value(500, 0));
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(op(5, 2, 1)), FAILED, 'block 5 is blank, not a value block');
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(restore(6, 4)), FAILED, 'block 6 allows no restore');
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(restore(4, 6)), FAILED, 'block 6 allows no transfer');
    assert.equal(auth(4, 'A'), OK);
    assert.equal(send(restore(4, 8)), FAILED, 'block 8 is in sector 2');
    assert.deepEqual([card.block(4), card.block(6)], [value(100, 1), value(500, 0)]);
  });
});

describe('halt after a failed authentication', () => {
  test('when an authentication fails, then the card answers 63 00 to every card command, the right key included, until it is re-activated', () => {
    const { card, contact, frontEnd, send, auth, read, write } = setup([0, 0, 0, 0b011]);
    const before = card.block(4);
    send(`FF820000 06 ${Buffer.alloc(6, 0x77).toString('hex')}`);
    assert.equal(auth(4, 'A'), FAILED);
    send(`FF820000 06 ${KEY_A.toString('hex')}`);
    assert.equal(auth(4, 'A'), FAILED, 'the right key after a wrong one');
    assert.equal(auth(4, 'B'), FAILED);
    assert.equal(read(4), FAILED);
    assert.equal(write(4, DATA), FAILED);
    assert.deepEqual(card.block(4), before, 'nothing written');
    // The reader answers these itself.
    assert.equal(send('FFCA000000'), `01020304${OK}`);
    assert.equal(send(`FF820001 06 ${KEY_B.toString('hex')}`), OK);

    frontEnd.reactivate(contact);
    assert.equal(auth(4, 'A'), OK);
    assert.equal(read(4), `${before.toString('hex')}${OK}`);
  });

  test('when the card is re-activated while authenticated, then it must authenticate again', () => {
    const { contact, frontEnd, auth, read } = setup();
    assert.equal(auth(4, 'A'), OK);
    frontEnd.reactivate(contact);
    assert.equal(read(4), REFUSED);
  });

  test('when the reader refuses an authentication itself (an empty key slot), then the card is not halted', () => {
    const card = new VirtualCard({ uid: Buffer.from('01020304', 'hex') });
    const frontEnd = new ContactlessFrontEnd();
    const contact: CardContact = { card, authenticated: null, halted: false };
    const send = (hex: string) =>
      frontEnd.execute(contact, Buffer.from(hex, 'hex')).toString('hex');
    assert.equal(send('FF860000050100046000'), FAILED, 'slot 0 holds no key');
    assert.equal(contact.halted, false);
    assert.equal(send('FF82000006FFFFFFFFFFFF'), OK);
    assert.equal(send('FF860000050100046000'), OK);
  });

  test('when a blocked sector refuses an authentication, then the card halts too', () => {
    const { card, contact, auth } = setup();
    card.setBlock(trailerBlockOf(1), Buffer.concat([KEY_A, Buffer.from('ff078169', 'hex'), KEY_B]));
    assert.equal(auth(4, 'A'), FAILED);
    assert.equal(contact.halted, true);
  });
});

describe('access conditions of data blocks', () => {
  // Sector 1: block 4 read A|B write B (100), block 5 read-only (010), block 6 nothing (111),
  // trailer 011 (key B writes keys and bits, key B not readable: it may authenticate).
  const groups: [number, number, number, number] = [0b100, 0b010, 0b111, 0b011];

  test('when key A writes a block that only key B may write, then it is refused and nothing changes', () => {
    const { card, auth, write, read } = setup(groups);
    const before = card.block(4);
    assert.equal(auth(4, 'A'), OK);
    assert.equal(read(4).slice(-4), OK);
    assert.equal(write(4, DATA), REFUSED);
    assert.deepEqual(card.block(4), before);
  });

  test('when key B writes it, then it is written; a read-only block stays read-only for both', () => {
    const { card, auth, write } = setup(groups);
    assert.equal(auth(4, 'B'), OK);
    assert.equal(write(4, DATA), OK);
    assert.deepEqual(card.block(4), DATA);
    assert.equal(auth(5, 'B'), OK);
    assert.equal(write(5, DATA), REFUSED);
  });

  test('when a block allows nothing, then neither key reads it', () => {
    const { auth, read } = setup(groups);
    for (const key of ['A', 'B'] as const) {
      assert.equal(auth(6, key), OK);
      assert.equal(read(6), REFUSED);
    }
  });

  test('when key B is readable (trailer 000), then key B authenticates but may do nothing', () => {
    const { auth, read, write } = setup([0, 0, 0, 0]);
    assert.equal(auth(4, 'B'), OK);
    assert.equal(read(4), REFUSED);
    assert.equal(auth(4, 'B'), OK);
    assert.equal(write(4, DATA), REFUSED);
  });
});

describe('sector trailer writes', () => {
  test('when key A writes the trailer under 011, then it is refused; key B changes the keys', () => {
    const { card, auth, write } = setup([0, 0, 0, 0b011]);
    const trailer = Buffer.concat([
      Buffer.alloc(6, 0x11),
      accessBits([0, 0, 0, 0b011]),
      Buffer.from([0x69]),
      Buffer.alloc(6, 0x22),
    ]);
    assert.equal(auth(7, 'A'), OK);
    assert.equal(write(7, trailer), REFUSED);
    assert.equal(auth(7, 'B'), OK);
    assert.equal(write(7, trailer), OK);
    assert.deepEqual(card.keyA(1), Buffer.alloc(6, 0x11));
    assert.deepEqual(card.keyB(1), Buffer.alloc(6, 0x22));
  });

  test('when a trailer write tears, then the access bits no longer match their copy and the sector is blocked for good', () => {
    const { card, auth, write } = setup();
    const trailer = Buffer.concat([
      KEY_A,
      accessBits([0b100, 0b100, 0b100, 0b011]),
      Buffer.from([0x69]),
      KEY_B,
    ]);
    assert.equal(auth(7, 'A'), OK);
    assert.equal(write(7, trailer, true), OK);
    // Bytes 0-7 landed (key A, two of the three access bytes), 8-15 kept the old values.
    assert.deepEqual(card.block(trailerBlockOf(1)).subarray(0, 8), trailer.subarray(0, 8));
    assert.equal(card.accessConditionOf(4), null);
    assert.equal(auth(4, 'A'), FAILED);
    assert.equal(auth(4, 'B'), FAILED);
  });

  test('when a data write tears, then only the first half of the block is new', () => {
    const { card, auth, write } = setup();
    const before = card.block(4);
    assert.equal(auth(4, 'A'), OK);
    write(4, DATA, true);
    assert.deepEqual(card.block(4), Buffer.concat([DATA.subarray(0, 8), before.subarray(8)]));
  });
});

describe('faults', () => {
  test('when faults are armed, then the earliest matching one fires once and handlers come after', () => {
    const { card } = setup();
    const event = (command: 'write' | 'read', index: number) => ({
      apdu: Buffer.alloc(0),
      index,
      command,
      block: 4,
    });
    const fault = card.failAt('write', 'pull-after');
    card.onApdu(() => ({ delayMs: 5 }));
    assert.deepEqual(card.decide(event('read', 0)), { delayMs: 5 });
    assert.equal(card.decide(event('write', 1)), 'pull-after');
    assert.equal(fault.fired, true);
    assert.deepEqual(card.decide(event('write', 2)), { delayMs: 5 });
    card.clearFaults();
    assert.equal(card.decide(event('write', 3)), 'answer');
  });

  test('when a card is rebuilt from its memory, then it is the same card', () => {
    const { card } = setup([0b100, 0, 0, 0b011]);
    const copy = VirtualCard.fromMemory(card.uid, card.dump());
    assert.deepEqual(copy.dump(), card.dump());
    assert.equal(copy.id, '01020304');
  });
});
