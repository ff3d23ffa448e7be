import { randomBytes } from 'node:crypto';
import { xor } from '../block-cipher.ts';
import {
  AuthenticationChain,
  challengeLength,
  crc32,
  MAC_LENGTH,
  rotateLeft,
  SecureChannel,
  sessionKey,
  type DesfireKey,
  type DesfireKeyType,
} from './desfire-crypto.ts';
import { DESFIRE_STATUS, DesfireProtocolError, DesfireStatusError } from './desfire-status.ts';

/**
 * The reader side of MIFARE DESFire EV1 over PC/SC: native commands wrapped in ISO 7816-4
 * APDUs (CLA 90, INS = the command, P1 P2 00, Lc and data, Le 00; the answer ends 91 and the
 * DESFire status), frames chained with AF both ways, and, once authenticated, EV1 secure
 * messaging on every command: the CMAC of each command and of each answer chained through the
 * session's IV, the answer's CMAC checked, data MACed or enciphered (with CRC32) as the file's
 * communication mode says. A status other than OK is a DesfireStatusError (the card did not do
 * it, and it dropped the authentication); an answer that does not verify is a
 * DesfireProtocolError. Transport failures (the card left) propagate as the transport throws
 * them. Only what the wallet uses is here: AES keys, and 2K3DES keys for the factory PICC key.
 */

/** Sends one command APDU, resolves with the whole answer (data and status word). */
export type Transmit = (apdu: Buffer) => Promise<Buffer>;

/** A file's communication mode (its settings byte): plain, MACed or fully enciphered. */
export type CommMode = 'plain' | 'maced' | 'enciphered';

export const COMM_MODE_BYTES: Record<CommMode, number> = {
  plain: 0x00,
  maced: 0x01,
  enciphered: 0x03,
};

/** Which key may do what with a file: a key number 0-13, 14 free access, 15 never. */
export interface AccessRights {
  read: number;
  write: number;
  readWrite: number;
  change: number;
}

export const FREE_ACCESS = 0xe;
export const NO_ACCESS = 0xf;

/** The 2 bytes of access rights as sent (little-endian of Read Write ReadWrite Change nibbles). */
export function encodeAccessRights(rights: AccessRights): Buffer {
  const value = (rights.read << 12) | (rights.write << 8) | (rights.readWrite << 4) | rights.change;
  const out = Buffer.alloc(2);
  out.writeUInt16LE(value);
  return out;
}

export function decodeAccessRights(bytes: Buffer): AccessRights {
  const value = bytes.readUInt16LE(0);
  return {
    read: (value >> 12) & 0xf,
    write: (value >> 8) & 0xf,
    readWrite: (value >> 4) & 0xf,
    change: value & 0xf,
  };
}

export interface VersionPart {
  vendor: number;
  type: number;
  subtype: number;
  major: number;
  minor: number;
  storageSize: number;
  protocol: number;
}

/** GetVersion's answer. */
export interface DesfireVersion {
  hardware: VersionPart;
  software: VersionPart;
  uid: Buffer;
  batch: Buffer;
  productionWeek: number;
  productionYear: number;
}

export type FileSettings =
  | {
      type: 'value';
      comm: CommMode;
      access: AccessRights;
      lowerLimit: number;
      upperLimit: number;
      limitedCreditValue: number;
      limitedCredit: boolean;
    }
  | {
      type: 'cyclic-record';
      comm: CommMode;
      access: AccessRights;
      recordSize: number;
      maxRecords: number;
      currentRecords: number;
    }
  | { type: 'other'; fileType: number; comm: CommMode; access: AccessRights };

export interface ValueFileSpec {
  fileNo: number;
  comm: CommMode;
  access: AccessRights;
  lowerLimit: number;
  upperLimit: number;
  value: number;
  limitedCredit: boolean;
}

export interface RecordFileSpec {
  fileNo: number;
  comm: CommMode;
  access: AccessRights;
  recordSize: number;
  maxRecords: number;
}

/** Native command codes used here. */
export const INS = {
  AUTHENTICATE_ISO: 0x1a,
  AUTHENTICATE_AES: 0xaa,
  ADDITIONAL_FRAME: 0xaf,
  CHANGE_KEY_SETTINGS: 0x54,
  GET_KEY_SETTINGS: 0x45,
  CHANGE_KEY: 0xc4,
  GET_KEY_VERSION: 0x64,
  CREATE_APPLICATION: 0xca,
  DELETE_APPLICATION: 0xda,
  FORMAT_PICC: 0xfc,
  GET_APPLICATION_IDS: 0x6a,
  SELECT_APPLICATION: 0x5a,
  GET_VERSION: 0x60,
  GET_FILE_IDS: 0x6f,
  GET_FILE_SETTINGS: 0xf5,
  CREATE_VALUE_FILE: 0xcc,
  CREATE_CYCLIC_RECORD_FILE: 0xc1,
  GET_VALUE: 0x6c,
  CREDIT: 0x0c,
  DEBIT: 0xdc,
  LIMITED_CREDIT: 0x1c,
  WRITE_RECORD: 0x3b,
  READ_RECORDS: 0xbb,
  COMMIT_TRANSACTION: 0xc7,
  ABORT_TRANSACTION: 0xa7,
} as const;

/** The most a native command frame carries (command byte included), as libfreefare sends. */
export const MAX_COMMAND_FRAME = 55;

/** The PICC level's AID: selecting it leaves every application. */
export const PICC_AID = 0x000000;

export function aidBytes(aid: number): Buffer {
  if (!Number.isInteger(aid) || aid < 0 || aid > 0xffffff) {
    throw new RangeError(`an AID is 3 bytes, not ${aid}`);
  }
  const out = Buffer.alloc(3);
  out.writeUIntLE(aid, 0, 3);
  return out;
}

/** A 3-byte length, offset or count as sent (little-endian). */
export function uint24(value: number): Buffer {
  const out = Buffer.alloc(3);
  out.writeUIntLE(value, 0, 3);
  return out;
}

/** A value or amount as sent (int32, little-endian). */
export function int32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeInt32LE(value);
  return out;
}

/** How the answer of a command is protected in a session. */
type AnswerProtection =
  /** Data and a CMAC over data || status (plain and MACed modes alike). */
  | { kind: 'mac' }
  /** Data || CRC32(data || status) || zero padding, enciphered; `length` is the data's. */
  | { kind: 'enciphered'; length: number }
  /** No CMAC: the command ended the session (it changed the key it was authenticated with). */
  | { kind: 'none' };

export interface DesfireClientOptions {
  transmit: Transmit;
  /** The reader's random numbers (RndA); worked examples fix them. */
  random?: (length: number) => Buffer;
}

export class DesfireClient {
  readonly #transmit: Transmit;
  readonly #random: (length: number) => Buffer;
  #session: SecureChannel | null = null;
  #application = PICC_AID;

  constructor(options: DesfireClientOptions) {
    this.#transmit = options.transmit;
    this.#random = options.random ?? randomBytes;
  }

  /** The key number the session is authenticated with, or null. */
  get authenticatedKey(): number | null {
    return this.#session?.keyNo ?? null;
  }

  /** The running IV of the session (for worked examples), or null outside one. */
  get sessionIv(): Buffer | null {
    return this.#session?.iv ?? null;
  }

  get application(): number {
    return this.#application;
  }

  /** Forgets the session, as the card does when it is reset or taken away. */
  reset(): void {
    this.#session = null;
    this.#application = PICC_AID;
  }

  async getVersion(): Promise<DesfireVersion> {
    const data = await this.#command(INS.GET_VERSION);
    if (data.length !== 28)
      throw new DesfireProtocolError(`GetVersion answered ${data.length} bytes`);
    const part = (offset: number): VersionPart => ({
      vendor: data[offset] ?? 0,
      type: data[offset + 1] ?? 0,
      subtype: data[offset + 2] ?? 0,
      major: data[offset + 3] ?? 0,
      minor: data[offset + 4] ?? 0,
      storageSize: data[offset + 5] ?? 0,
      protocol: data[offset + 6] ?? 0,
    });
    return {
      hardware: part(0),
      software: part(7),
      uid: Buffer.from(data.subarray(14, 21)),
      batch: Buffer.from(data.subarray(21, 26)),
      productionWeek: data[26] ?? 0,
      productionYear: data[27] ?? 0,
    };
  }

  /** Selects an application (or the PICC level, AID 0); the card drops any authentication. */
  async selectApplication(aid: number): Promise<void> {
    const frame = Buffer.concat([Buffer.from([INS.SELECT_APPLICATION]), aidBytes(aid)]);
    this.#session = null;
    const { status, data } = await this.#exchange(frame);
    if (status !== DESFIRE_STATUS.OPERATION_OK) throw new DesfireStatusError(frame[0]!, status);
    if (data.length !== 0) throw new DesfireProtocolError('SelectApplication answered data');
    this.#application = aid;
  }

  /**
   * Mutual authentication with key `keyNo` of the selected application (or the PICC): AES keys
   * with AA, DES and 2K3DES keys in ISO mode with 1A. Fails with DesfireStatusError
   * AUTHENTICATION_ERROR when the card holds another key (or no such key), and with
   * DesfireProtocolError when the card's proof of RndA is wrong.
   */
  async authenticate(keyNo: number, key: DesfireKey): Promise<void> {
    this.#session = null;
    const ins = key.type === 'aes' ? INS.AUTHENTICATE_AES : INS.AUTHENTICATE_ISO;
    const length = challengeLength(key);
    const first = await this.#exchange(Buffer.from([ins, keyNo]));
    if (first.status !== DESFIRE_STATUS.ADDITIONAL_FRAME) {
      throw new DesfireStatusError(ins, first.status);
    }
    if (first.data.length !== length) {
      throw new DesfireProtocolError(`the card's challenge is ${first.data.length} bytes`);
    }
    const chain = new AuthenticationChain(key);
    const rndB = chain.decrypt(first.data);
    const rndA = this.#random(length);
    const token = chain.encrypt(Buffer.concat([rndA, rotateLeft(rndB)]));
    const second = await this.#exchange(
      Buffer.concat([Buffer.from([INS.ADDITIONAL_FRAME]), token]),
    );
    if (second.status !== DESFIRE_STATUS.OPERATION_OK) {
      throw new DesfireStatusError(ins, second.status);
    }
    if (second.data.length !== length) {
      throw new DesfireProtocolError(`the card's answer is ${second.data.length} bytes`);
    }
    if (!chain.decrypt(second.data).equals(rotateLeft(rndA))) {
      throw new DesfireProtocolError('the card did not prove that it holds the key');
    }
    this.#session = new SecureChannel(keyNo, sessionKey(key, rndA, rndB));
  }

  async getKeySettings(): Promise<{ settings: number; keyCount: number; keyType: number }> {
    const data = await this.#command(INS.GET_KEY_SETTINGS);
    if (data.length !== 2) throw new DesfireProtocolError('GetKeySettings answered badly');
    return { settings: data[0]!, keyCount: data[1]! & 0x0f, keyType: data[1]! & 0xc0 };
  }

  async getKeyVersion(keyNo: number): Promise<number> {
    const data = await this.#command(INS.GET_KEY_VERSION, Buffer.from([keyNo]));
    if (data.length !== 1) throw new DesfireProtocolError('GetKeyVersion answered badly');
    return data[0]!;
  }

  /** ChangeKeySettings: the new settings byte, enciphered with its CRC32. */
  async changeKeySettings(settings: number): Promise<void> {
    const session = this.#requireSession();
    const head = Buffer.from([INS.CHANGE_KEY_SETTINGS]);
    const plain = Buffer.from([settings]);
    const sealed = session.encrypt(
      session.pad(Buffer.concat([plain, crc32(Buffer.concat([head, plain]))])),
    );
    await this.#secured(Buffer.concat([head, sealed]), { kind: 'mac' });
  }

  /**
   * ChangeKey of key `keyNo` to `newKey` (AES keys carry `version`). Changing the key the
   * session is authenticated with ends the session; any other key needs its current value
   * (`oldKey`, default all zero) and is sent XORed with it, with the new key's own CRC32. At
   * the PICC level an AES key is flagged 0x80 (the factory PICC key is DES).
   */
  async changeKey(
    keyNo: number,
    newKey: DesfireKey,
    version: number,
    oldKey: DesfireKey = { type: newKey.type, key: Buffer.alloc(16) },
  ): Promise<void> {
    const session = this.#requireSession();
    const keyByte = keyNo | (this.#application === PICC_AID && newKey.type === 'aes' ? 0x80 : 0);
    const head = Buffer.from([INS.CHANGE_KEY, keyByte]);
    const same = (keyNo & 0x0f) === session.keyNo;
    const keyData = same ? newKey.key : xor(newKey.key, oldKey.key);
    const body = Buffer.concat([
      keyData,
      newKey.type === 'aes' ? Buffer.from([version]) : Buffer.alloc(0),
    ]);
    const parts = [body, crc32(Buffer.concat([head, body]))];
    if (!same) parts.push(crc32(newKey.key));
    const sealed = session.encrypt(session.pad(Buffer.concat(parts)));
    await this.#secured(Buffer.concat([head, sealed]), same ? { kind: 'none' } : { kind: 'mac' });
    if (same) this.#session = null;
  }

  /**
   * CreateApplication with `keyCount` keys of `keyType` (all zero, version 0, until changed):
   * the wallet's are AES.
   */
  async createApplication(
    aid: number,
    settings: number,
    keyCount: number,
    keyType: DesfireKeyType | '3k3des' = 'aes',
  ): Promise<void> {
    const flags = keyType === 'aes' ? 0x80 : keyType === '3k3des' ? 0x40 : 0x00;
    await this.#command(
      INS.CREATE_APPLICATION,
      Buffer.concat([aidBytes(aid), Buffer.from([settings, flags | keyCount])]),
    );
  }

  /** DeleteApplication (at the PICC level). */
  async deleteApplication(aid: number): Promise<void> {
    await this.#command(INS.DELETE_APPLICATION, aidBytes(aid));
  }

  /** FormatPICC: every application and file is gone; the PICC master key stays. */
  async formatPicc(): Promise<void> {
    await this.#command(INS.FORMAT_PICC);
  }

  async getApplicationIds(): Promise<number[]> {
    const data = await this.#command(INS.GET_APPLICATION_IDS);
    if (data.length % 3 !== 0) throw new DesfireProtocolError('GetApplicationIDs answered badly');
    const aids: number[] = [];
    for (let offset = 0; offset < data.length; offset += 3) aids.push(data.readUIntLE(offset, 3));
    return aids;
  }

  async getFileIds(): Promise<number[]> {
    return [...(await this.#command(INS.GET_FILE_IDS))];
  }

  async getFileSettings(fileNo: number): Promise<FileSettings> {
    const data = await this.#command(INS.GET_FILE_SETTINGS, Buffer.from([fileNo]));
    if (data.length < 4) throw new DesfireProtocolError('GetFileSettings answered badly');
    const comm = commModeOf(data[1]!);
    const access = decodeAccessRights(data.subarray(2, 4));
    if (data[0] === 0x02 && data.length === 17) {
      return {
        type: 'value',
        comm,
        access,
        lowerLimit: data.readInt32LE(4),
        upperLimit: data.readInt32LE(8),
        limitedCreditValue: data.readInt32LE(12),
        limitedCredit: (data[16]! & 0x01) === 0x01,
      };
    }
    if (data[0] === 0x04 && data.length === 13) {
      return {
        type: 'cyclic-record',
        comm,
        access,
        recordSize: data.readUIntLE(4, 3),
        maxRecords: data.readUIntLE(7, 3),
        currentRecords: data.readUIntLE(10, 3),
      };
    }
    return { type: 'other', fileType: data[0]!, comm, access };
  }

  async createValueFile(spec: ValueFileSpec): Promise<void> {
    await this.#command(
      INS.CREATE_VALUE_FILE,
      Buffer.concat([
        Buffer.from([spec.fileNo, COMM_MODE_BYTES[spec.comm]]),
        encodeAccessRights(spec.access),
        int32(spec.lowerLimit),
        int32(spec.upperLimit),
        int32(spec.value),
        Buffer.from([spec.limitedCredit ? 0x01 : 0x00]),
      ]),
    );
  }

  async createCyclicRecordFile(spec: RecordFileSpec): Promise<void> {
    await this.#command(
      INS.CREATE_CYCLIC_RECORD_FILE,
      Buffer.concat([
        Buffer.from([spec.fileNo, COMM_MODE_BYTES[spec.comm]]),
        encodeAccessRights(spec.access),
        uint24(spec.recordSize),
        uint24(spec.maxRecords),
      ]),
    );
  }

  /** The value file's committed value. */
  async getValue(fileNo: number, comm: CommMode): Promise<number> {
    const data = await this.#command(INS.GET_VALUE, Buffer.from([fileNo]), answerIn(comm, 4));
    if (data.length !== 4) throw new DesfireProtocolError('GetValue answered badly');
    return data.readInt32LE(0);
  }

  /** Credit (pending until CommitTransaction). */
  async credit(fileNo: number, amount: number, comm: CommMode): Promise<void> {
    await this.#fileCommand(INS.CREDIT, Buffer.from([fileNo]), int32(amount), comm);
  }

  /** Debit (pending until CommitTransaction). */
  async debit(fileNo: number, amount: number, comm: CommMode): Promise<void> {
    await this.#fileCommand(INS.DEBIT, Buffer.from([fileNo]), int32(amount), comm);
  }

  async limitedCredit(fileNo: number, amount: number, comm: CommMode): Promise<void> {
    await this.#fileCommand(INS.LIMITED_CREDIT, Buffer.from([fileNo]), int32(amount), comm);
  }

  /** WriteRecord into the transaction's new record (pending until CommitTransaction). */
  async writeRecord(fileNo: number, offset: number, data: Buffer, comm: CommMode): Promise<void> {
    const header = Buffer.concat([Buffer.from([fileNo]), uint24(offset), uint24(data.length)]);
    await this.#fileCommand(INS.WRITE_RECORD, header, data, comm);
  }

  /**
   * ReadRecords: `count` records (at least 1) from the `offset`-th newest one back in time,
   * answered oldest first. BOUNDARY_ERROR when the file holds fewer than offset + count.
   */
  async readRecords(
    fileNo: number,
    offset: number,
    count: number,
    recordSize: number,
    comm: CommMode,
  ): Promise<Buffer[]> {
    if (!Number.isInteger(count) || count < 1) throw new RangeError('read at least one record');
    const header = Buffer.concat([Buffer.from([fileNo]), uint24(offset), uint24(count)]);
    const data = await this.#command(INS.READ_RECORDS, header, answerIn(comm, count * recordSize));
    if (data.length !== count * recordSize) {
      throw new DesfireProtocolError(`ReadRecords answered ${data.length} bytes`);
    }
    const records: Buffer[] = [];
    for (let start = 0; start < data.length; start += recordSize) {
      records.push(Buffer.from(data.subarray(start, start + recordSize)));
    }
    return records;
  }

  /** CommitTransaction: every pending change of the application at once, or none. */
  async commitTransaction(): Promise<void> {
    await this.#command(INS.COMMIT_TRANSACTION);
  }

  async abortTransaction(): Promise<void> {
    await this.#command(INS.ABORT_TRANSACTION);
  }

  #requireSession(): SecureChannel {
    if (!this.#session)
      throw new DesfireProtocolError('the command needs an authenticated session');
    return this.#session;
  }

  /**
   * A command whose data a file's communication mode protects: plain (the CMAC only moves the
   * IV), MACed (the CMAC's first 8 bytes follow the data) or enciphered (data and its CRC32 over
   * the whole command, padded and encrypted; the header stays plain).
   */
  async #fileCommand(ins: number, header: Buffer, data: Buffer, comm: CommMode): Promise<void> {
    const session = this.#session;
    const plain = Buffer.concat([Buffer.from([ins]), header, data]);
    if (!session || comm === 'plain') {
      await this.#secured(plain, { kind: 'mac' }, session ? 'mac-only' : 'none');
      return;
    }
    if (comm === 'maced') {
      await this.#secured(Buffer.concat([plain, session.mac(plain)]), { kind: 'mac' }, 'none');
      return;
    }
    const sealed = session.encrypt(session.pad(Buffer.concat([data, crc32(plain)])));
    await this.#secured(
      Buffer.concat([Buffer.from([ins]), header, sealed]),
      { kind: 'mac' },
      'none',
    );
  }

  /** A plain command: in a session its CMAC moves the IV; the answer is checked. */
  async #command(
    ins: number,
    data: Buffer = Buffer.alloc(0),
    answer: AnswerProtection = { kind: 'mac' },
  ): Promise<Buffer> {
    return this.#secured(Buffer.concat([Buffer.from([ins]), data]), answer, 'mac-only');
  }

  /**
   * Sends a whole command (chained into frames as needed), collects the whole answer (chained
   * frames too), and checks it against the session. `macCommand` 'mac-only': CMAC the command
   * to move the IV before sending (plain commands); 'none': the caller already protected it.
   */
  async #secured(
    command: Buffer,
    answer: AnswerProtection,
    macCommand: 'mac-only' | 'none' = 'none',
  ): Promise<Buffer> {
    const session = this.#session;
    if (session && macCommand === 'mac-only') session.mac(command);
    const ins = command[0]!;
    const { status, data } = await this.#chained(command);
    if (status !== DESFIRE_STATUS.OPERATION_OK) {
      // Any error ends the card's authentication, and with it the session's IV.
      this.#session = null;
      throw new DesfireStatusError(ins, status);
    }
    if (!session) return data;
    try {
      return openAnswer(session, data, answer);
    } catch (error) {
      this.#session = null;
      throw error;
    }
  }

  /** Command chaining (AF frames out) and answer chaining (AF frames in). */
  async #chained(command: Buffer): Promise<{ status: number; data: Buffer }> {
    let offset = Math.min(command.length, MAX_COMMAND_FRAME);
    let reply = await this.#exchange(command.subarray(0, offset));
    while (offset < command.length) {
      if (reply.status !== DESFIRE_STATUS.ADDITIONAL_FRAME || reply.data.length !== 0) {
        return reply;
      }
      const next = Math.min(command.length, offset + MAX_COMMAND_FRAME - 1);
      reply = await this.#exchange(
        Buffer.concat([Buffer.from([INS.ADDITIONAL_FRAME]), command.subarray(offset, next)]),
      );
      offset = next;
    }
    const parts = [reply.data];
    while (reply.status === DESFIRE_STATUS.ADDITIONAL_FRAME) {
      reply = await this.#exchange(Buffer.from([INS.ADDITIONAL_FRAME]));
      parts.push(reply.data);
    }
    return { status: reply.status, data: Buffer.concat(parts) };
  }

  /** One native frame in one ISO 7816-4 APDU: 90 INS 00 00 [Lc data] 00 -> data 91 status. */
  async #exchange(frame: Buffer): Promise<{ status: number; data: Buffer }> {
    const answer = await this.#transmit(wrapApdu(frame));
    return unwrapAnswer(answer);
  }
}

/** The ISO 7816-4 APDU that carries one native DESFire frame. */
export function wrapApdu(frame: Buffer): Buffer {
  const [ins = 0] = frame;
  const data = frame.subarray(1);
  if (data.length > 255) throw new RangeError('a DESFire frame carries at most 255 bytes');
  return Buffer.concat([
    Buffer.from([0x90, ins, 0x00, 0x00]),
    data.length > 0 ? Buffer.concat([Buffer.from([data.length]), data]) : Buffer.alloc(0),
    Buffer.from([0x00]),
  ]);
}

/** An ISO-wrapped answer: data, then 91 and the DESFire status. */
export function unwrapAnswer(answer: Buffer): { status: number; data: Buffer } {
  if (answer.length < 2 || answer[answer.length - 2] !== 0x91) {
    const sw = answer.length >= 2 ? answer.subarray(-2).toString('hex').toUpperCase() : 'nothing';
    throw new DesfireProtocolError(`not a DESFire answer (status word ${sw})`);
  }
  return { status: answer[answer.length - 1]!, data: Buffer.from(answer.subarray(0, -2)) };
}

export function commModeOf(byte: number): CommMode {
  switch (byte & 0x03) {
    case 0x01:
      return 'maced';
    case 0x03:
      return 'enciphered';
    default:
      return 'plain';
  }
}

function answerIn(comm: CommMode, length: number): AnswerProtection {
  return comm === 'enciphered' ? { kind: 'enciphered', length } : { kind: 'mac' };
}

/** Checks an answer's protection and returns its data. */
function openAnswer(session: SecureChannel, data: Buffer, answer: AnswerProtection): Buffer {
  const okStatus = Buffer.from([DESFIRE_STATUS.OPERATION_OK]);
  switch (answer.kind) {
    case 'none':
      if (data.length !== 0) throw new DesfireProtocolError('unexpected data after a key change');
      return data;
    case 'mac': {
      if (data.length < MAC_LENGTH) throw new DesfireProtocolError('the answer carries no CMAC');
      const body = data.subarray(0, data.length - MAC_LENGTH);
      const mac = session.mac(Buffer.concat([body, okStatus]));
      if (!mac.equals(data.subarray(data.length - MAC_LENGTH))) {
        throw new DesfireProtocolError("the answer's CMAC does not verify");
      }
      return Buffer.from(body);
    }
    case 'enciphered': {
      const plain = session.decrypt(data);
      const payload = plain.subarray(0, answer.length);
      const crc = plain.subarray(answer.length, answer.length + 4);
      const padding = plain.subarray(answer.length + 4);
      if (
        crc.length === 4 &&
        crc.equals(crc32(Buffer.concat([payload, okStatus]))) &&
        padding.every((byte) => byte === 0)
      ) {
        return Buffer.from(payload);
      }
      throw new DesfireProtocolError("the enciphered answer's CRC does not verify");
    }
  }
}
