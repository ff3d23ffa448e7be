// The DESFire wallet against the test vectors of docs/card-format.md ("DESFire test vectors"):
// per-card keys, access rights, movement records and the decision of a write, so the page a
// vending-machine maker implements from and the code cannot drift apart.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeAccessRights,
  encodeAccessRights,
} from '../../service/card/desfire/desfire-client.ts';
import {
  desfireCardKeyFromRoleMaster,
  desfireCardKeys,
  desfireDiversificationInput,
  desfireRoleMaster,
  DESFIRE_KEY_ROLES,
  FACTORY_PICC_KEY,
  type DesfireKeyRole,
} from '../../service/card/desfire/desfire-keys.ts';
import {
  cardRecordOf,
  decideDesfireWrite,
  decodeMovementRecord,
  desfireBefore,
  encodeMovementRecord,
  floatEvidenceOf,
  isDesfireBefore,
  parseDesfireBefore,
  movementIdBytes,
  planDesfireWrite,
  recordOf,
  RECORD_FILE_ACCESS,
  VALUE_FILE_ACCESS,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { readDocVectors } from '../support/doc-vectors.ts';

interface RoleVector {
  roleMaster: string;
  input: string;
  key: string;
}

interface Vectors {
  cardKeys: ({ name: string; masterKey: string; uid: string; aid: string } & Record<
    DesfireKeyRole,
    RoleVector
  >)[];
  accessRights: {
    name: string;
    read: number;
    write: number;
    readWrite: number;
    change: number;
    bytes: string;
  }[];
  records: {
    name: string;
    counter: number;
    movementId: string;
    valueAfter: number;
    credits?: number;
    float?: boolean;
    record: string;
  }[];
  decisions: {
    name: string;
    intent: { counter: number; movementId: string; value: number };
    records: [number, string, number][];
    expected: string;
  }[];
}

const vectors = readDocVectors<Vectors>('card-format.md', 'DESFire test vectors');
const hex = (text: string) => Buffer.from(text, 'hex');
const upper = (bytes: Buffer) => bytes.toString('hex').toUpperCase();

describe('DESFire per-card keys', () => {
  for (const card of vectors.cardKeys) {
    test(`when the keys of "${card.name}" are derived, then every role master, input and key is the page's`, () => {
      const master = hex(card.masterKey);
      const uid = hex(card.uid);
      const aid = Number.parseInt(card.aid, 16);
      const roles = Object.keys(DESFIRE_KEY_ROLES) as DesfireKeyRole[];
      for (const role of roles) {
        const roleMaster = desfireRoleMaster(master, role);
        const keyAid = role === 'picc' ? 0 : aid;
        assert.equal(upper(roleMaster), card[role].roleMaster, `${role} master`);
        assert.equal(
          upper(desfireDiversificationInput(uid, keyAid, DESFIRE_KEY_ROLES[role].keyNo)),
          card[role].input,
          `${role} input`,
        );
        assert.equal(
          upper(desfireCardKeyFromRoleMaster(roleMaster, uid, aid, role)),
          card[role].key,
          `${role} key`,
        );
      }
      const keys = desfireCardKeys(master, uid, aid);
      assert.deepEqual(
        roles.map((role) => upper(keys[role].key)),
        roles.map((role) => card[role].key),
      );
      assert.equal(keys.version, 1);
    });
  }

  test('when no master key is configured, then the wallet keeps the trial keys: zero AES keys and the factory PICC key', () => {
    const keys = desfireCardKeys(undefined, hex('04A1B2C3D4E580'), 0x435701);
    assert.deepEqual(keys.picc, FACTORY_PICC_KEY);
    assert.deepEqual(keys.till, { type: 'aes', key: Buffer.alloc(16) });
    assert.equal(keys.version, 0);
  });

  test('when the UID is not 7 bytes, then no key is derived', () => {
    assert.throws(() => desfireDiversificationInput(hex('04A1B2C3'), 0x435701, 1), RangeError);
  });
});

describe('DESFire access rights', () => {
  for (const vector of vectors.accessRights) {
    test(`when the ${vector.name}'s access rights are encoded, then they are ${vector.bytes}`, () => {
      const { name: _name, bytes, ...rights } = vector;
      assert.equal(upper(encodeAccessRights(rights)), bytes);
      assert.deepEqual(decodeAccessRights(hex(bytes)), rights);
    });
  }

  test("when the wallet's files are made, then they carry the page's access rights", () => {
    assert.equal(upper(encodeAccessRights(VALUE_FILE_ACCESS)), vectors.accessRights[0]!.bytes);
    assert.equal(upper(encodeAccessRights(RECORD_FILE_ACCESS)), vectors.accessRights[1]!.bytes);
  });
});

describe('movement records', () => {
  for (const vector of vectors.records) {
    const size = vector.record.length / 2;
    test(`when "${vector.name}" is encoded, then its ${size} bytes are the page's, and they decode back`, () => {
      const movementId = movementIdBytes(vector.movementId);
      const record = encodeMovementRecord({ ...vector, movementId }, size);
      assert.equal(upper(record), vector.record);
      const v2 = size === 32 ? { credits: vector.credits, float: vector.float } : {};
      assert.deepEqual(decodeMovementRecord(record), {
        counter: vector.counter,
        movementId,
        valueAfter: vector.valueAfter,
        ...v2,
      });
    });
  }

  test('when records of a wallet are read for float recharges, then v2 float records show, newest first, and v1 records say nothing', () => {
    const record = (vector: (typeof vectors.records)[number]) => Buffer.from(vector.record, 'hex');
    const all = vectors.records.map(record);
    assert.deepEqual(floatEvidenceOf(all), [
      { movementId: '22ea3bfc-5b3b-8000-8000-00000000002a', credits: 20 },
    ]);
    assert.deepEqual(floatEvidenceOf(all.filter((bytes) => bytes.length === 24)), []);
  });

  test("when a record is shown to the ledger (cardRecord), then its movement's 16 bytes read as a UUID: a UUID's own, any other id's SHA-256 prefix", () => {
    const [uuid, , hashed] = vectors.records;
    assert.deepEqual(cardRecordOf(Buffer.from(uuid!.record, 'hex')), {
      counter: 1,
      movementId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      valueAfter: 150,
    });
    assert.deepEqual(cardRecordOf(Buffer.from(hashed!.record, 'hex')), {
      counter: 4294967295,
      movementId: 'a461b472-cb41-a9ec-3dee-5c90cf8e4a78',
      valueAfter: 0,
    });
  });

  test('when a write is planned, then its record takes the next counter, and a balance out of range is refused', () => {
    const intent = planDesfireWrite('desfire:v1:10:0', 150, '7c9e6679-7425-40de-944b-e07fc1f90ae7');
    assert.deepEqual(intent, {
      type: 'desfire',
      counter: 1,
      movementId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      value: 150,
      previousBalance: 10,
    });
    assert.equal(upper(recordOf(intent, 24)), vectors.records[0]!.record);
    assert.equal(upper(recordOf(intent)), vectors.records[3]!.record);
    const float = planDesfireWrite(
      'desfire:v1:150:8',
      170,
      '22ea3bfc-5b3b-8000-8000-00000000002a',
      true,
    );
    assert.equal(float.float, true);
    assert.equal(upper(recordOf(float)), vectors.records[4]!.record);
    assert.throws(() => planDesfireWrite('desfire:v1:0:0', -1, 'x'), RangeError);
    assert.throws(() => planDesfireWrite('desfire:v1:0:0', 2 ** 31, 'x'), RangeError);
  });
});

describe("a DESFire wallet's state as text (the card face's before)", () => {
  test('when a wallet is written as text and planned from, then the plan is the same as from the wallet', () => {
    assert.equal(desfireBefore({ balance: 70, counter: 41 }), 'desfire:v1:70:41');
    assert.equal(desfireBefore(null), 'desfire:v1:blank');
    assert.deepEqual(parseDesfireBefore('desfire:v1:70:41'), { balance: 70, counter: 41 });
    assert.equal(parseDesfireBefore('desfire:v1:blank'), null);
    const fromBlank = planDesfireWrite('desfire:v1:blank', 5, 'm-1');
    assert.deepEqual([fromBlank.counter, fromBlank.previousBalance], [1, null]);
    assert.equal(planDesfireWrite('desfire:v1:70:41', 0, 'm-2').counter, 42);
  });

  for (const text of [
    'desfire:v1:-1:0',
    'desfire:v1:2147483648:0',
    'desfire:v1:1:4294967296',
    'desfire:v2:1:1',
    'classic:v1:blank',
    'desfire:v1:1',
    'xdesfire:v1:1:1',
    'desfire:v1:1:1 ',
  ]) {
    test(`when the text is "${text}", then it is not a DESFire wallet state`, () => {
      assert.equal(isDesfireBefore(text), false);
      assert.throws(() => parseDesfireBefore(text), RangeError);
    });
  }
});

describe('deciding a DESFire write', () => {
  for (const vector of vectors.decisions) {
    test(`when ${vector.name}, then the write is ${vector.expected}`, () => {
      const records = vector.records.map(([counter, id, valueAfter]) =>
        encodeMovementRecord({ counter, movementId: movementIdBytes(id), valueAfter }),
      );
      const intent = { type: 'desfire' as const, previousBalance: 0, ...vector.intent };
      assert.equal(decideDesfireWrite(intent, records), vector.expected);
    });
  }
});
