// The DESFire wallet's movement records and its text at their edges (docs/card-format.md,
// section 9): what a record can hold, the float recharges a card shows (v2 records, newest
// first), and the largest balance and counter a till plans from.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeMovementRecord,
  encodeMovementRecord,
  floatEvidenceOf,
  isDesfireBefore,
  movementIdBytes,
  parseDesfireBefore,
  planDesfireWrite,
  recordOf,
} from '../../service/card/desfire/desfire-wallet-format.ts';

const UUID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const FLOAT_A = '22ea3bfc-5b3b-8000-8000-00000000002a';
const FLOAT_B = '22ea3bfc-5b3b-8000-8000-00000000002b';
const id = movementIdBytes(UUID);

describe('a movement record at its edges', () => {
  test('when a record is given a counter, id or size it cannot hold, then it is a RangeError', () => {
    const fine = { counter: 1, movementId: id, valueAfter: 5 };
    for (const counter of [0, 2 ** 32, 1.5]) {
      assert.throws(() => encodeMovementRecord({ ...fine, counter }), {
        name: 'RangeError',
        message: `a record counter is 1 to 2^32-1, not ${counter}`,
      });
    }
    assert.equal(
      encodeMovementRecord({ ...fine, counter: 2 ** 32 - 1 }).readUInt32LE(0),
      2 ** 32 - 1,
    );
    assert.throws(() => encodeMovementRecord({ ...fine, movementId: id.subarray(0, 15) }), {
      name: 'RangeError',
      message: 'a movement id is 16 bytes',
    });
    assert.throws(() => encodeMovementRecord(fine, 16), {
      name: 'RangeError',
      message: 'a record is 32 or 24 bytes, not 16',
    });
    for (const size of [23, 31, 33]) {
      assert.throws(() => decodeMovementRecord(Buffer.alloc(size)), {
        name: 'RangeError',
        message: 'a record is 32 or 24 bytes',
      });
    }
  });

  test("when a v2 record is written without credits or as no float recharge, then its bytes 24-31 are zero; a float recharge's flag is bit 0 of byte 28", () => {
    const plain = encodeMovementRecord({ counter: 1, movementId: id, valueAfter: 5 });
    assert.deepEqual(plain.subarray(24), Buffer.alloc(8));
    const float = encodeMovementRecord({
      counter: 1,
      movementId: id,
      valueAfter: 5,
      credits: -3,
      float: true,
    });
    assert.equal(float.readInt32LE(24), -3);
    assert.deepEqual([...float.subarray(28)], [1, 0, 0, 0]);
    // Another bit of the flags byte is no float recharge.
    const other = Buffer.from(float);
    other[28] = 0x02;
    assert.equal(decodeMovementRecord(other).float, false);
    other[28] = 0x03;
    assert.equal(decodeMovementRecord(other).float, true);
  });

  test('when a movement id is a UUID in capitals, then its own bytes; an id that only looks like one, its SHA-256 prefix', () => {
    assert.deepEqual(
      movementIdBytes(UUID.toUpperCase()),
      Buffer.from(UUID.replaceAll('-', ''), 'hex'),
    );
    assert.notDeepEqual(
      movementIdBytes(`x${UUID}`),
      Buffer.from(UUID.replaceAll('-', ''), 'hex').subarray(0, 16),
    );
    assert.equal(movementIdBytes(`x${UUID}`).length, 16);
    assert.equal(movementIdBytes(`${UUID}0`).length, 16);
    assert.notDeepEqual(movementIdBytes(`${UUID}0`).subarray(0, 4), Buffer.from('7c9e6679', 'hex'));
  });
});

describe('the float recharges a DESFire card shows', () => {
  const record = (counter: number, movementId: string, credits: number, float: boolean) =>
    encodeMovementRecord({
      counter,
      movementId: movementIdBytes(movementId),
      valueAfter: 100,
      credits,
      float,
    });

  test('when several v2 records are float recharges, then each shows, newest counter first, whatever order they are read in', () => {
    const records = [
      record(7, FLOAT_B, 30, true),
      record(5, UUID, 10, false),
      record(6, FLOAT_A, 20, true),
    ];
    const newestFirst = [
      { movementId: FLOAT_B, credits: 30 },
      { movementId: FLOAT_A, credits: 20 },
    ];
    assert.deepEqual(floatEvidenceOf(records), newestFirst);
    assert.deepEqual(floatEvidenceOf([...records].reverse()), newestFirst);
  });

  test('when a record is flagged a float recharge but moved no credits in, then it shows nothing', () => {
    assert.deepEqual(
      floatEvidenceOf([record(3, FLOAT_A, 0, true), record(4, FLOAT_B, -5, true)]),
      [],
    );
  });

  test("when a float recharge is planned from a card without a wallet, then its record's credits are its whole value", () => {
    const intent = planDesfireWrite('desfire:v1:blank', 40, FLOAT_A, true);
    assert.deepEqual(floatEvidenceOf([recordOf(intent)]), [{ movementId: FLOAT_A, credits: 40 }]);
    const payout = planDesfireWrite('desfire:v1:40:1', 15, UUID);
    assert.equal(decodeMovementRecord(recordOf(payout)).credits, -25);
  });
});

describe("a DESFire wallet's text at its edges", () => {
  test('when the balance or counter is the largest a card holds, then it is a wallet state, and a write is planned from it until the counter runs out', () => {
    for (const text of ['desfire:v1:2147483647:1', 'desfire:v1:0:4294967295']) {
      assert.equal(isDesfireBefore(text), true, text);
      assert.ok(parseDesfireBefore(text), text);
    }
    assert.equal(planDesfireWrite('desfire:v1:5:4294967294', 6, UUID).counter, 4294967295);
    assert.throws(() => planDesfireWrite('desfire:v1:5:4294967295', 6, UUID), {
      name: 'RangeError',
      message: 'the card has no record counter left',
    });
  });

  test('when a balance is planned at the edges, then 0 and the largest are written, a fraction is refused', () => {
    assert.equal(planDesfireWrite('desfire:v1:5:1', 0, UUID).value, 0);
    assert.equal(planDesfireWrite('desfire:v1:5:1', 2147483647, UUID).value, 2147483647);
    assert.throws(() => planDesfireWrite('desfire:v1:5:1', 1.5, UUID), {
      name: 'RangeError',
      message: 'a DESFire balance is 0 to 2147483647, not 1.5',
    });
    assert.throws(() => parseDesfireBefore('desfire:v1:x:1'), {
      name: 'RangeError',
      message: 'not a DESFire wallet state: "desfire:v1:x:1"',
    });
  });
});
