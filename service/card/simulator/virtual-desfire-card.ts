// A MIFARE DESFire EV1 card in Node, with the real cryptography: the card of the built-in
// simulator (`simulator place --type desfire`) and of the PC/SC test rig (presented to a real
// pcscd through vpcd). It speaks the native commands the wallet uses, ISO 7816-4 wrapped
// (CLA 90, answers ending 91 xx), through the same code the reader side runs
// (desfire/desfire-crypto.ts), so a reader that gets a byte wrong fails here as on a card.
//
// Modelled (MIFARE DESFire EV1 datasheet; libfreefare's tests for what a datasheet leaves
// open):
// - the PICC level: its master key (DES / 2K3DES, the factory key all zero, or AES after a
//   ChangeKey flagged 0x80) and key settings, FormatPICC; applications with 1 to 14 AES or
//   DES / 2K3DES keys and their key settings, CreateApplication, DeleteApplication; value files
//   and cyclic record files with communication modes and access rights (key 0-13, E free,
//   F never). A DES key's version is its parity bits, an AES key's a byte of its own;
// - authentication (AA for AES keys, 1A for DES / 2K3DES keys) and EV1 secure messaging: the
//   CMAC of every command and answer chained through the session IV, MACed and enciphered data
//   with CRC32; a command that does not verify is INTEGRITY_ERROR;
// - transactions: Credit, Debit, LimitedCredit and WriteRecord stay pending until
//   CommitTransaction, which applies them all at once, whoever sends it (EV1 sends no CMAC with
//   a plain command); AbortTransaction, SelectApplication, an error status, and power loss (a
//   pull, a tear, a reset) drop them, a new authentication does not (libfreefare's
//   test/test_mifare_desfire.c writes a record under one key and commits it after
//   authenticating another; it also notes that an error aborts the transaction). Reads see
//   committed data only. A cyclic record file holds MaxNumberOfRecords - 1 records, the oldest
//   dropped first;
// - a man in the middle, for tests (intercept): an answer altered, a command swallowed, one
//   injected;
// - any error status ends the authentication; frames chain with AF both ways (at most 59 bytes
//   of an answer per frame).
// Not modelled: legacy (0A) authentication, 3K3DES keys (an application of them can be created,
// never authenticated), standard and backup data files, linear record files, ISO file
// identifiers, SetConfiguration and random UIDs.

import { randomBytes } from 'node:crypto';
import { xor } from '../block-cipher.ts';
import {
  aidBytes,
  commModeOf,
  COMM_MODE_BYTES,
  decodeAccessRights,
  encodeAccessRights,
  FREE_ACCESS,
  INS,
  int32,
  uint24,
  type AccessRights,
  type CommMode,
} from '../desfire/desfire-client.ts';
import {
  AuthenticationChain,
  challengeLength,
  crc32,
  rotateLeft,
  SecureChannel,
  sessionKey,
  type DesfireKey,
  type DesfireKeyType,
} from '../desfire/desfire-crypto.ts';
import { DESFIRE_STATUS as S } from '../desfire/desfire-status.ts';
import { FaultingCard, type ApduCommand } from './card-faults.ts';

/** The ATR a PC/SC reader gives a DESFire EV1 (ISO 14443-4 type A, historical byte 80). */
export const DESFIRE_ATR = Buffer.from('3B8180018080', 'hex');

/** GetVersion's hardware and software parts: NXP, DESFire, EV1 (1.0 / 1.4), 8 KB, ISO 14443-2 and -3. */
const HARDWARE_VERSION = Buffer.from('04010101001A05', 'hex');
const SOFTWARE_VERSION = Buffer.from('04010101041A05', 'hex');
const BATCH = Buffer.from('BA4519E320', 'hex');
const PRODUCTION = Buffer.from([0x49, 0x13]);

/** The most an answer frame carries before the card chains it with AF. */
const MAX_ANSWER_FRAME = 59;
const MAX_APPLICATIONS = 28;
const MAX_FILES = 32;

export interface StoredKey {
  /** 3K3DES only as the key type of an application that can be created, not used. */
  type: DesfireKeyType | '3k3des';
  key: Buffer;
  /** An AES key's version byte; a DES key keeps its version in its parity bits. */
  version: number;
}

export interface DesfireValueFile {
  type: 'value';
  comm: CommMode;
  access: AccessRights;
  lowerLimit: number;
  upperLimit: number;
  value: number;
  limitedCredit: boolean;
  limitedCreditValue: number;
}

export interface DesfireRecordFile {
  type: 'cyclic-record';
  comm: CommMode;
  access: AccessRights;
  recordSize: number;
  maxRecords: number;
  /** Committed records, oldest first. */
  records: Buffer[];
}

export type DesfireFile = DesfireValueFile | DesfireRecordFile;

export interface DesfireApplication {
  aid: number;
  settings: number;
  keyType: StoredKey['type'];
  keys: StoredKey[];
  files: Map<number, DesfireFile>;
}

/** The factory PICC master key: DES, all zero. */
export function factoryPiccKey(): StoredKey {
  return { type: 'des', key: Buffer.alloc(16), version: 0 };
}

/** A card's memory as JSON (the simulator keeps its cards in the data folder). */
export interface DesfireSnapshot {
  piccKey: { type: StoredKey['type']; key: string; version: number };
  piccSettings: number;
  applications: {
    aid: number;
    settings: number;
    keyType: StoredKey['type'];
    keys: { key: string; version: number }[];
    files: (
      | (Omit<DesfireValueFile, 'access'> & { fileNo: number; access: string })
      | (Omit<DesfireRecordFile, 'access' | 'records'> & {
          fileNo: number;
          access: string;
          records: string[];
        })
    )[];
  }[];
}

/** What the card holds only while powered: the selected application, a session, a transaction. */
export interface DesfireVolatile {
  application: DesfireApplication | null;
  session: SecureChannel | null;
  /** Between the two steps of an authentication. */
  authenticating: {
    keyNo: number;
    key: DesfireKey;
    chain: AuthenticationChain;
    rndB: Buffer;
  } | null;
  /** A command arriving in several frames. */
  incoming: { frame: Buffer; expected: number } | null;
  /** Answer frames not sent yet (the last one ends with the status). */
  outgoing: { frames: Buffer[]; status: number } | null;
  /** Pending changes of the selected application, by file number. */
  transaction: Map<number, { value?: number; record?: Buffer }>;
}

export function powerOn(): DesfireVolatile {
  return {
    application: null,
    session: null,
    authenticating: null,
    incoming: null,
    outgoing: null,
    transaction: new Map(),
  };
}

/** An error status: the command is refused and, with it, the authentication and transaction. */
class Refusal {
  constructor(readonly status: number) {}
}

function refuse(status: number): never {
  throw new Refusal(status);
}

/**
 * What a man in the middle does with one command (VirtualDesfireCard.intercept):
 * - 'tamper-cmac': the card executes it; one bit of its answer's CMAC is flipped on the way;
 * - 'drop-cmac': the card executes it; its answer reaches the reader without the CMAC;
 * - 'forge-error': the card executes it; the reader gets `91 9E` (PARAMETER_ERROR) instead;
 * - 'swallow': the card never gets it; the reader gets `91 00`;
 * - `{ inject }`: the card gets `inject` first (its answer goes nowhere), then the command.
 */
export type Interception =
  'tamper-cmac' | 'drop-cmac' | 'forge-error' | 'swallow' | { inject: Buffer };

/** An answer as the reader gets it after 'tamper-cmac', 'drop-cmac' or 'forge-error'. */
function alterAnswer(answer: Buffer, interception: Interception): Buffer {
  const ok = answer.length >= 2 + 8 && answer.at(-2) === 0x91 && answer.at(-1) === S.OPERATION_OK;
  switch (interception) {
    case 'forge-error':
      return Buffer.from([0x91, S.PARAMETER_ERROR]);
    case 'tamper-cmac': {
      if (!ok) return answer;
      const altered = Buffer.from(answer);
      altered[altered.length - 3]! ^= 0x01;
      return altered;
    }
    case 'drop-cmac':
      return ok ? Buffer.concat([answer.subarray(0, -10), answer.subarray(-2)]) : answer;
    default:
      return answer;
  }
}

export interface VirtualDesfireCardOptions {
  /** 7 bytes, as every DESFire EV1 has (4 for a random-ID card is not modelled). */
  uid: Buffer;
  /** The card's random numbers (RndB); worked examples fix them. */
  random?: (length: number) => Buffer;
}

export class VirtualDesfireCard extends FaultingCard {
  readonly atr = DESFIRE_ATR;
  readonly #random: (length: number) => Buffer;
  #piccKey: StoredKey = factoryPiccKey();
  #piccSettings = 0x0f;
  readonly #applications = new Map<number, DesfireApplication>();
  #interceptions: { command: ApduCommand; nth: number; what: Interception; fired: boolean }[] = [];
  /** An answer's alteration waiting for the last frame of its command (see execute). */
  #carried: Interception | undefined;

  constructor(options: VirtualDesfireCardOptions) {
    if (options.uid.length !== 7) {
      throw new RangeError(`a DESFire UID has 7 bytes, got ${options.uid.length}`);
    }
    super(options.uid);
    this.#random = options.random ?? randomBytes;
  }

  static fromSnapshot(uid: Buffer, snapshot: DesfireSnapshot): VirtualDesfireCard {
    const card = new VirtualDesfireCard({ uid });
    card.#piccKey = { ...snapshot.piccKey, key: Buffer.from(snapshot.piccKey.key, 'hex') };
    card.#piccSettings = snapshot.piccSettings;
    for (const app of snapshot.applications) {
      const files = new Map<number, DesfireFile>();
      for (const { fileNo, ...file } of app.files) {
        const access = decodeAccessRights(Buffer.from(file.access, 'hex'));
        files.set(
          fileNo,
          file.type === 'value'
            ? { ...file, access }
            : { ...file, access, records: file.records.map((r) => Buffer.from(r, 'hex')) },
        );
      }
      card.#applications.set(app.aid, {
        aid: app.aid,
        settings: app.settings,
        keyType: app.keyType,
        keys: app.keys.map((k) => ({
          type: app.keyType,
          key: Buffer.from(k.key, 'hex'),
          version: k.version,
        })),
        files,
      });
    }
    return card;
  }

  snapshot(): DesfireSnapshot {
    return {
      piccKey: { ...this.#piccKey, key: this.#piccKey.key.toString('hex') },
      piccSettings: this.#piccSettings,
      applications: [...this.#applications.values()].map((app) => ({
        aid: app.aid,
        settings: app.settings,
        keyType: app.keyType,
        keys: app.keys.map((k) => ({ key: k.key.toString('hex'), version: k.version })),
        files: [...app.files].map(([fileNo, file]) =>
          file.type === 'value'
            ? { ...file, fileNo, access: encodeAccessRights(file.access).toString('hex') }
            : {
                ...file,
                fileNo,
                access: encodeAccessRights(file.access).toString('hex'),
                records: file.records.map((r) => r.toString('hex')),
              },
        ),
      })),
    };
  }

  // ----- Inspection and setup (tests, the simulator's control API) -----------------------

  get piccKey(): StoredKey {
    return { ...this.#piccKey, key: Buffer.from(this.#piccKey.key) };
  }

  get piccSettings(): number {
    return this.#piccSettings;
  }

  application(aid: number): DesfireApplication | undefined {
    return this.#applications.get(aid);
  }

  get applicationIds(): number[] {
    return [...this.#applications.keys()];
  }

  /** Puts an application on the card directly (setup: a card made elsewhere). */
  installApplication(app: DesfireApplication): void {
    this.#applications.set(app.aid, app);
    this.changed();
  }

  /** Sets the PICC master key directly (setup, or a fault: a key the service does not know). */
  setPiccKey(key: StoredKey, settings = this.#piccSettings): void {
    this.#piccKey = { ...key, key: Buffer.from(key.key) };
    this.#piccSettings = settings;
    this.changed();
  }

  /** Sets an application's key directly (setup, or a fault: a key the service does not know). */
  setApplicationKey(aid: number, keyNo: number, key: Buffer, version = 0): void {
    const app = this.#applications.get(aid);
    const slot = app?.keys[keyNo];
    if (!app || !slot) throw new RangeError(`no key ${keyNo} in application ${aid.toString(16)}`);
    app.keys[keyNo] = { type: app.keyType, key: Buffer.from(key), version };
    this.changed();
  }

  /** Drops every file of every application (the simulator's 'corrupt' fault). */
  dropFiles(): void {
    for (const app of this.#applications.values()) app.files.clear();
    this.changed();
  }

  // ----- The card's side of the air interface ---------------------------------------------

  /**
   * Arms what a man in the middle does to the next command of a kind (or its `nth`, counted
   * from now), for the tests of docs/card-security.md: EV1 secure messaging MACs no plain
   * command and nothing outside a session, so someone between the reader and the card can
   * alter an answer, swallow a command and answer it `91 00` themselves, or send a command of
   * their own (a CommitTransaction: `90 C7 00 00 00`) before the reader's next one.
   */
  intercept(
    trigger: ApduCommand | { command: ApduCommand; nth?: number },
    what: Interception,
  ): { readonly fired: boolean; cancel(): void } {
    const armed = {
      command: typeof trigger === 'string' ? trigger : trigger.command,
      nth: typeof trigger === 'string' ? 1 : (trigger.nth ?? 1),
      what,
      fired: false,
    };
    this.#interceptions.push(armed);
    return {
      get fired() {
        return armed.fired;
      },
      cancel: () => {
        this.#interceptions = this.#interceptions.filter((other) => other !== armed);
      },
    };
  }

  /**
   * Executes one ISO-wrapped command APDU and returns the answer (data + SW1 SW2). `torn`: the
   * card lost power during it; its anti-tearing keeps the command all or nothing, so nothing
   * changed (the caller drops the card and the answer). What an armed interception does
   * happens on the way in and out.
   */
  execute(state: DesfireVolatile, apdu: Buffer, torn = false): Buffer {
    let interception = this.#interceptionOf(apdu);
    if (interception === undefined && apdu[1] === INS.ADDITIONAL_FRAME) {
      interception = this.#carried;
      this.#carried = undefined;
    }
    if (interception === 'swallow') return Buffer.from([0x91, S.OPERATION_OK]);
    if (typeof interception === 'object') this.#execute(state, interception.inject);
    const answer = this.#execute(state, apdu, torn);
    if (interception === undefined) return answer;
    // A command sent in several frames (an enciphered 32-byte WriteRecord) is answered, CMAC
    // and all, after its last frame: the alteration waits for that answer.
    const more = answer.length === 2 && answer[0] === 0x91 && answer[1] === S.ADDITIONAL_FRAME;
    if (more && typeof interception === 'string') {
      this.#carried = interception;
      return answer;
    }
    return alterAnswer(answer, interception);
  }

  #interceptionOf(apdu: Buffer): Interception | undefined {
    const command = VirtualDesfireCard.classify(apdu);
    let found: Interception | undefined;
    for (const armed of this.#interceptions) {
      if (armed.command !== command) continue;
      armed.nth -= 1;
      if (armed.nth > 0 || found !== undefined) continue;
      armed.fired = true;
      found = armed.what;
    }
    this.#interceptions = this.#interceptions.filter((armed) => !armed.fired);
    return found;
  }

  #execute(state: DesfireVolatile, apdu: Buffer, torn = false): Buffer {
    if (apdu[0] !== 0x90) return Buffer.from([0x6e, 0x00]);
    if (apdu.length < 5 || apdu[2] !== 0 || apdu[3] !== 0) return Buffer.from([0x6a, 0x86]);
    const lc = apdu.length === 5 ? 0 : (apdu[4] ?? 0);
    if (apdu.length !== 5 && apdu.length !== 6 + lc && apdu.length !== 5 + lc) {
      return Buffer.from([0x67, 0x00]);
    }
    if (torn) return Buffer.alloc(0);
    const frame = Buffer.concat([apdu.subarray(1, 2), apdu.subarray(5, 5 + lc)]);
    try {
      return this.#frame(state, frame);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      state.session = null;
      state.authenticating = null;
      state.incoming = null;
      state.outgoing = null;
      state.transaction.clear();
      return Buffer.from([0x91, error.status]);
    }
  }

  #frame(state: DesfireVolatile, frame: Buffer): Buffer {
    const ins = frame[0]!;
    if (ins === INS.ADDITIONAL_FRAME) {
      if (state.outgoing) return this.#nextAnswerFrame(state);
      if (state.authenticating) return this.#authenticateSecond(state, frame);
      const incoming = state.incoming;
      if (!incoming) refuse(S.ILLEGAL_COMMAND_CODE);
      incoming.frame = Buffer.concat([incoming.frame, frame.subarray(1)]);
      if (incoming.frame.length < incoming.expected) return Buffer.from([0x91, S.ADDITIONAL_FRAME]);
      state.incoming = null;
      return this.#command(state, incoming.frame);
    }
    state.outgoing = null;
    state.authenticating = null;
    state.incoming = null;
    const expected = this.#expectedLength(state, frame);
    if (frame.length < expected) {
      state.incoming = { frame, expected };
      return Buffer.from([0x91, S.ADDITIONAL_FRAME]);
    }
    return this.#command(state, frame);
  }

  /** How long a WriteRecord is, with its protection: the only command sent in several frames. */
  #expectedLength(state: DesfireVolatile, frame: Buffer): number {
    if (frame[0] !== INS.WRITE_RECORD || frame.length < 8) return frame.length;
    const length = frame.readUIntLE(5, 3);
    const file = state.application?.files.get(frame[1]!);
    const comm = file && state.session ? this.#commFor(state, file.access, 'write', file) : 'plain';
    if (comm === 'maced') return 8 + length + 8;
    if (comm === 'enciphered') {
      const size = state.session!.blockSize;
      return 8 + Math.ceil((length + 4) / size) * size;
    }
    return 8 + length;
  }

  #command(state: DesfireVolatile, frame: Buffer): Buffer {
    const ins = frame[0]!;
    switch (ins) {
      case INS.GET_VERSION:
        this.#macIn(state, frame);
        return this.#answer(
          state,
          Buffer.concat([HARDWARE_VERSION, SOFTWARE_VERSION, this.uid, BATCH, PRODUCTION]),
          [7, 7],
        );
      case INS.SELECT_APPLICATION:
        return this.#select(state, frame);
      case INS.AUTHENTICATE_AES:
      case INS.AUTHENTICATE_ISO:
        return this.#authenticateFirst(state, frame);
      case INS.GET_KEY_SETTINGS:
        return this.#getKeySettings(state, frame);
      case INS.GET_KEY_VERSION:
        return this.#getKeyVersion(state, frame);
      case INS.CHANGE_KEY_SETTINGS:
        return this.#changeKeySettings(state, frame);
      case INS.CHANGE_KEY:
        return this.#changeKey(state, frame);
      case INS.CREATE_APPLICATION:
        return this.#createApplication(state, frame);
      case INS.DELETE_APPLICATION:
        return this.#deleteApplication(state, frame);
      case INS.FORMAT_PICC:
        this.#macIn(state, frame);
        if (state.application) refuse(S.PERMISSION_DENIED);
        this.#requireMaster(state, false);
        this.#applications.clear();
        this.changed();
        return this.#answer(state, Buffer.alloc(0));
      case INS.GET_APPLICATION_IDS: {
        this.#macIn(state, frame);
        if (state.application) refuse(S.PERMISSION_DENIED);
        this.#requireMaster(state, (this.#piccSettings & 0x02) !== 0);
        return this.#answer(state, Buffer.concat([...this.#applications.keys()].map(aidBytes)));
      }
      case INS.GET_FILE_IDS: {
        this.#macIn(state, frame);
        const app = this.#requireApplication(state);
        this.#requireMaster(state, (app.settings & 0x02) !== 0);
        return this.#answer(state, Buffer.from([...app.files.keys()]));
      }
      case INS.GET_FILE_SETTINGS:
        return this.#getFileSettings(state, frame);
      case INS.CREATE_VALUE_FILE:
      case INS.CREATE_CYCLIC_RECORD_FILE:
        return this.#createFile(state, frame);
      case INS.GET_VALUE:
        return this.#getValue(state, frame);
      case INS.CREDIT:
      case INS.DEBIT:
      case INS.LIMITED_CREDIT:
        return this.#changeValue(state, frame);
      case INS.WRITE_RECORD:
        return this.#writeRecord(state, frame);
      case INS.READ_RECORDS:
        return this.#readRecords(state, frame);
      case INS.COMMIT_TRANSACTION:
        this.#macIn(state, frame);
        this.#requireApplication(state);
        this.#commit(state);
        return this.#answer(state, Buffer.alloc(0));
      case INS.ABORT_TRANSACTION:
        this.#macIn(state, frame);
        this.#requireApplication(state);
        state.transaction.clear();
        return this.#answer(state, Buffer.alloc(0));
      default:
        return refuse(S.ILLEGAL_COMMAND_CODE);
    }
  }

  // ----- Secure messaging, the card's side -----------------------------------------------

  /** A plain command in a session: its CMAC moves the IV. */
  #macIn(state: DesfireVolatile, frame: Buffer): void {
    state.session?.mac(frame);
  }

  /**
   * An OK answer: in a session, `data` with the CMAC of data || 00 (or, `enciphered`, data and
   * its CRC32 encrypted); chained in frames of at most 59 bytes, or at the `splits` given.
   */
  #answer(state: DesfireVolatile, data: Buffer, splits: number[] = [], enciphered = false): Buffer {
    const session = state.session;
    const ok = Buffer.from([S.OPERATION_OK]);
    let body = data;
    if (session && enciphered) {
      body = session.encrypt(session.pad(Buffer.concat([data, crc32(Buffer.concat([data, ok]))])));
    } else if (session) {
      body = Buffer.concat([data, session.mac(Buffer.concat([data, ok]))]);
    }
    const frames: Buffer[] = [];
    let offset = 0;
    for (const split of splits) {
      frames.push(body.subarray(offset, offset + split));
      offset += split;
    }
    while (body.length - offset > MAX_ANSWER_FRAME) {
      frames.push(body.subarray(offset, offset + MAX_ANSWER_FRAME));
      offset += MAX_ANSWER_FRAME;
    }
    frames.push(body.subarray(offset));
    state.outgoing = { frames, status: S.OPERATION_OK };
    return this.#nextAnswerFrame(state);
  }

  #nextAnswerFrame(state: DesfireVolatile): Buffer {
    const outgoing = state.outgoing!;
    const frame = outgoing.frames.shift() ?? Buffer.alloc(0);
    if (outgoing.frames.length > 0)
      return Buffer.concat([frame, Buffer.from([0x91, S.ADDITIONAL_FRAME])]);
    state.outgoing = null;
    return Buffer.concat([frame, Buffer.from([0x91, outgoing.status])]);
  }

  /**
   * The data of a command a file's communication mode protects: `header` bytes plain after
   * the command byte, then `length` bytes of data, MACed or enciphered per `comm`.
   */
  #openData(
    state: DesfireVolatile,
    frame: Buffer,
    header: number,
    length: number,
    comm: CommMode,
  ): Buffer {
    const session = state.session;
    const head = frame.subarray(0, 1 + header);
    const rest = frame.subarray(1 + header);
    if (!session || comm === 'plain') {
      if (rest.length !== length) refuse(S.LENGTH_ERROR);
      session?.mac(frame);
      return rest;
    }
    if (comm === 'maced') {
      if (rest.length !== length + 8) refuse(S.LENGTH_ERROR);
      const data = rest.subarray(0, length);
      const mac = session.mac(Buffer.concat([head, data]));
      if (!mac.equals(rest.subarray(length))) refuse(S.INTEGRITY_ERROR);
      return data;
    }
    return this.#openEnciphered(session, head, rest, length, true);
  }

  /** Decrypts `sealed`: data (`length` bytes), CRC32 of head || data when `crc`, zero padding. */
  #openEnciphered(
    session: SecureChannel,
    head: Buffer,
    sealed: Buffer,
    length: number,
    crc: boolean,
  ): Buffer {
    const size = session.blockSize;
    const padded = Math.max(size, Math.ceil((length + (crc ? 4 : 0)) / size) * size);
    if (sealed.length !== padded) refuse(S.LENGTH_ERROR);
    const plain = session.decrypt(sealed);
    const data = plain.subarray(0, length);
    const end = crc ? length + 4 : length;
    if (crc && !plain.subarray(length, end).equals(crc32(Buffer.concat([head, data])))) {
      refuse(S.INTEGRITY_ERROR);
    }
    if (!plain.subarray(end).every((byte) => byte === 0)) refuse(S.INTEGRITY_ERROR);
    return Buffer.from(plain.subarray(0, end));
  }

  // ----- Levels, keys, authentication -----------------------------------------------------

  #select(state: DesfireVolatile, frame: Buffer): Buffer {
    if (frame.length !== 4) refuse(S.LENGTH_ERROR);
    state.session = null;
    state.transaction.clear();
    const aid = frame.readUIntLE(1, 3);
    if (aid === 0) {
      state.application = null;
    } else {
      const app = this.#applications.get(aid);
      state.application = null;
      if (!app) refuse(S.APPLICATION_NOT_FOUND);
      state.application = app;
    }
    return Buffer.from([0x91, S.OPERATION_OK]);
  }

  #keyOf(state: DesfireVolatile, keyNo: number): StoredKey {
    if (!state.application) return keyNo === 0 ? this.#piccKey : refuse(S.NO_SUCH_KEY);
    return state.application.keys[keyNo] ?? refuse(S.NO_SUCH_KEY);
  }

  #authenticateFirst(state: DesfireVolatile, frame: Buffer): Buffer {
    state.session = null;
    if (frame.length !== 2) refuse(S.LENGTH_ERROR);
    const keyNo = frame[1]!;
    const stored = this.#keyOf(state, keyNo);
    // AA takes AES keys, 1A DES and 2K3DES keys here (3K3DES is not modelled).
    const wanted: DesfireKeyType = frame[0] === INS.AUTHENTICATE_AES ? 'aes' : 'des';
    if (stored.type !== wanted) refuse(S.AUTHENTICATION_ERROR);
    const key: DesfireKey = { type: stored.type, key: stored.key };
    const chain = new AuthenticationChain(key);
    const rndB = this.#random(challengeLength(key));
    state.authenticating = { keyNo, key, chain, rndB };
    return Buffer.concat([chain.encrypt(rndB), Buffer.from([0x91, S.ADDITIONAL_FRAME])]);
  }

  #authenticateSecond(state: DesfireVolatile, frame: Buffer): Buffer {
    const { keyNo, key, chain, rndB } = state.authenticating!;
    state.authenticating = null;
    const length = challengeLength(key);
    if (frame.length !== 1 + 2 * length) refuse(S.LENGTH_ERROR);
    const token = chain.decrypt(frame.subarray(1));
    const rndA = token.subarray(0, length);
    if (!token.subarray(length).equals(rotateLeft(rndB))) refuse(S.AUTHENTICATION_ERROR);
    const proof = chain.encrypt(rotateLeft(rndA));
    state.session = new SecureChannel(keyNo, sessionKey(key, rndA, rndB));
    return Buffer.concat([proof, Buffer.from([0x91, S.OPERATION_OK])]);
  }

  /** The level's master key must be authenticated, unless `free` (a key settings bit) says not. */
  #requireMaster(state: DesfireVolatile, free: boolean): void {
    if (free) return;
    if (state.session?.keyNo !== 0) refuse(S.AUTHENTICATION_ERROR);
  }

  #requireApplication(state: DesfireVolatile): DesfireApplication {
    return state.application ?? refuse(S.PERMISSION_DENIED);
  }

  #getKeySettings(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    const app = state.application;
    const settings = app ? app.settings : this.#piccSettings;
    this.#requireMaster(state, (settings & 0x02) !== 0);
    const keys = app
      ? TYPE_FLAGS[app.keyType] | app.keys.length
      : TYPE_FLAGS[this.#piccKey.type] | 1;
    return this.#answer(state, Buffer.from([settings, keys]));
  }

  #getKeyVersion(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    if (frame.length !== 2) refuse(S.LENGTH_ERROR);
    const key = this.#keyOf(state, frame[1]! & 0x3f);
    const version = key.type === 'des' ? desKeyVersion(key.key) : key.version;
    return this.#answer(state, Buffer.from([version]));
  }

  #changeKeySettings(state: DesfireVolatile, frame: Buffer): Buffer {
    const session = state.session ?? refuse(S.AUTHENTICATION_ERROR);
    if (session.keyNo !== 0) refuse(S.AUTHENTICATION_ERROR);
    const current = state.application ? state.application.settings : this.#piccSettings;
    if ((current & 0x08) === 0) refuse(S.PERMISSION_DENIED);
    const [settings] = this.#openEnciphered(
      session,
      frame.subarray(0, 1),
      frame.subarray(1),
      1,
      true,
    );
    if (state.application) state.application.settings = settings!;
    else this.#piccSettings = settings!;
    this.changed();
    return this.#answer(state, Buffer.alloc(0));
  }

  #changeKey(state: DesfireVolatile, frame: Buffer): Buffer {
    const session = state.session ?? refuse(S.AUTHENTICATION_ERROR);
    if (frame.length < 2) refuse(S.LENGTH_ERROR);
    const keyByte = frame[1]!;
    const keyNo = keyByte & 0x0f;
    const app = state.application;
    let newType: DesfireKeyType;
    if (!app) {
      if (keyNo !== 0) refuse(S.NO_SUCH_KEY);
      if (keyByte !== 0x00 && keyByte !== 0x80) refuse(S.PARAMETER_ERROR);
      newType = keyByte === 0x80 ? 'aes' : 'des';
      if (session.keyNo !== 0) refuse(S.AUTHENTICATION_ERROR);
      if ((this.#piccSettings & 0x01) === 0) refuse(S.PERMISSION_DENIED);
    } else {
      if (keyByte !== keyNo || app.keyType === '3k3des') refuse(S.PARAMETER_ERROR);
      newType = app.keyType;
      if (keyNo >= app.keys.length) refuse(S.NO_SUCH_KEY);
      const changeKey = app.settings >> 4;
      if (keyNo === 0) {
        if (session.keyNo !== 0) refuse(S.AUTHENTICATION_ERROR);
        if ((app.settings & 0x01) === 0) refuse(S.PERMISSION_DENIED);
      } else if (changeKey === 0x0f) {
        refuse(S.PERMISSION_DENIED);
      } else if (session.keyNo !== (changeKey === 0x0e ? keyNo : changeKey)) {
        refuse(S.AUTHENTICATION_ERROR);
      }
    }
    const same = session.keyNo === keyNo;
    const bodyLength = 16 + (newType === 'aes' ? 1 : 0);
    const head = frame.subarray(0, 2);
    const size = session.blockSize;
    const sealedLength = Math.ceil((bodyLength + (same ? 4 : 8)) / size) * size;
    if (frame.length !== 2 + sealedLength) refuse(S.LENGTH_ERROR);
    const plain = session.decrypt(frame.subarray(2));
    const body = plain.subarray(0, bodyLength);
    let end = bodyLength + 4;
    if (!plain.subarray(bodyLength, end).equals(crc32(Buffer.concat([head, body])))) {
      refuse(S.INTEGRITY_ERROR);
    }
    let newKey: Buffer = Buffer.from(body.subarray(0, 16));
    if (!same) {
      newKey = xor(newKey, this.#keyOf(state, keyNo).key);
      if (!plain.subarray(end, end + 4).equals(crc32(newKey))) refuse(S.INTEGRITY_ERROR);
      end += 4;
    }
    if (!plain.subarray(end).every((byte) => byte === 0)) refuse(S.INTEGRITY_ERROR);
    const stored: StoredKey = {
      type: newType,
      key: newKey,
      version: newType === 'aes' ? body[16]! : 0,
    };
    if (app) app.keys[keyNo] = stored;
    else this.#piccKey = stored;
    this.changed();
    if (same) {
      // The session's own key changed: the card ends the session and MACs nothing.
      state.session = null;
      return Buffer.from([0x91, S.OPERATION_OK]);
    }
    return this.#answer(state, Buffer.alloc(0));
  }

  #createApplication(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    if (state.application) refuse(S.PERMISSION_DENIED);
    if (frame.length !== 6) refuse(S.LENGTH_ERROR);
    this.#requireMaster(state, (this.#piccSettings & 0x04) !== 0);
    const aid = frame.readUIntLE(1, 3);
    const keyCount = frame[5]! & 0x0f;
    const keyType = KEY_TYPES.get(frame[5]! & 0xc0);
    if (aid === 0 || !keyType || keyCount < 1 || keyCount > 14) refuse(S.PARAMETER_ERROR);
    if (this.#applications.has(aid)) refuse(S.DUPLICATE_ERROR);
    if (this.#applications.size >= MAX_APPLICATIONS) refuse(S.COUNT_ERROR);
    this.#applications.set(aid, {
      aid,
      settings: frame[4]!,
      keyType,
      keys: Array.from({ length: keyCount }, () => ({
        type: keyType,
        key: Buffer.alloc(keyType === '3k3des' ? 24 : 16),
        version: 0,
      })),
      files: new Map(),
    });
    this.changed();
    return this.#answer(state, Buffer.alloc(0));
  }

  #deleteApplication(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    if (state.application) refuse(S.PERMISSION_DENIED);
    if (frame.length !== 4) refuse(S.LENGTH_ERROR);
    this.#requireMaster(state, (this.#piccSettings & 0x04) !== 0);
    if (!this.#applications.delete(frame.readUIntLE(1, 3))) refuse(S.APPLICATION_NOT_FOUND);
    this.changed();
    return this.#answer(state, Buffer.alloc(0));
  }

  // ----- Files ------------------------------------------------------------------------------

  #file(state: DesfireVolatile, fileNo: number): DesfireFile {
    const app = this.#requireApplication(state);
    return app.files.get(fileNo) ?? refuse(S.FILE_NOT_FOUND);
  }

  /**
   * The communication mode a command on a file runs in, or a refusal when the session's key
   * may not: `right` names which access rights allow it. Free access (E) runs plain.
   */
  #commFor(
    state: DesfireVolatile,
    access: AccessRights,
    right: 'read' | 'write' | 'readWrite',
    file?: DesfireFile,
  ): CommMode {
    const allowed =
      right === 'readWrite'
        ? [access.readWrite]
        : right === 'write'
          ? [access.write, access.readWrite]
          : file?.type === 'value'
            ? [access.read, access.write, access.readWrite]
            : [access.read, access.readWrite];
    const keyNo = state.session?.keyNo;
    if (keyNo !== undefined && allowed.includes(keyNo)) {
      return (file ?? { comm: 'plain' as CommMode }).comm;
    }
    if (allowed.includes(FREE_ACCESS)) return 'plain';
    return refuse(S.AUTHENTICATION_ERROR);
  }

  #getFileSettings(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    const app = this.#requireApplication(state);
    this.#requireMaster(state, (app.settings & 0x02) !== 0);
    if (frame.length !== 2) refuse(S.LENGTH_ERROR);
    const file = this.#file(state, frame[1]!);
    const common = Buffer.concat([
      Buffer.from([file.type === 'value' ? 0x02 : 0x04, COMM_MODE_BYTES[file.comm]]),
      encodeAccessRights(file.access),
    ]);
    const specific =
      file.type === 'value'
        ? Buffer.concat([
            int32(file.lowerLimit),
            int32(file.upperLimit),
            int32(file.limitedCreditValue),
            Buffer.from([file.limitedCredit ? 1 : 0]),
          ])
        : Buffer.concat([
            uint24(file.recordSize),
            uint24(file.maxRecords),
            uint24(file.records.length),
          ]);
    return this.#answer(state, Buffer.concat([common, specific]));
  }

  #createFile(state: DesfireVolatile, frame: Buffer): Buffer {
    this.#macIn(state, frame);
    const app = this.#requireApplication(state);
    this.#requireMaster(state, (app.settings & 0x04) !== 0);
    const value = frame[0] === INS.CREATE_VALUE_FILE;
    if (frame.length !== (value ? 18 : 11)) refuse(S.LENGTH_ERROR);
    const fileNo = frame[1]!;
    if (fileNo >= MAX_FILES) refuse(S.PARAMETER_ERROR);
    if (app.files.has(fileNo)) refuse(S.DUPLICATE_ERROR);
    const comm = commModeOf(frame[2]!);
    const access = decodeAccessRights(frame.subarray(3, 5));
    let file: DesfireFile;
    if (value) {
      const [lowerLimit, upperLimit, initial] = [5, 9, 13].map((at) => frame.readInt32LE(at));
      if (lowerLimit! > upperLimit! || initial! < lowerLimit! || initial! > upperLimit!) {
        refuse(S.BOUNDARY_ERROR);
      }
      file = {
        type: 'value',
        comm,
        access,
        lowerLimit: lowerLimit!,
        upperLimit: upperLimit!,
        value: initial!,
        limitedCredit: (frame[17]! & 0x01) === 0x01,
        limitedCreditValue: 0,
      };
    } else {
      const recordSize = frame.readUIntLE(5, 3);
      const maxRecords = frame.readUIntLE(8, 3);
      if (recordSize < 1 || maxRecords < 2) refuse(S.PARAMETER_ERROR);
      file = { type: 'cyclic-record', comm, access, recordSize, maxRecords, records: [] };
    }
    app.files.set(fileNo, file);
    this.changed();
    return this.#answer(state, Buffer.alloc(0));
  }

  #valueFile(state: DesfireVolatile, fileNo: number): DesfireValueFile {
    const file = this.#file(state, fileNo);
    return file.type === 'value' ? file : refuse(S.PARAMETER_ERROR);
  }

  #getValue(state: DesfireVolatile, frame: Buffer): Buffer {
    if (frame.length !== 2) refuse(S.LENGTH_ERROR);
    const file = this.#valueFile(state, frame[1]!);
    const comm = this.#commFor(state, file.access, 'read', file);
    this.#macIn(state, frame);
    return this.#answer(state, int32(file.value), [], comm === 'enciphered');
  }

  #changeValue(state: DesfireVolatile, frame: Buffer): Buffer {
    const ins = frame[0]!;
    if (frame.length < 2) refuse(S.LENGTH_ERROR);
    const fileNo = frame[1]!;
    const file = this.#valueFile(state, fileNo);
    const right = ins === INS.CREDIT ? 'readWrite' : ins === INS.DEBIT ? 'read' : 'write';
    const comm = this.#commFor(state, file.access, right, file);
    const amount = this.#openData(state, frame, 1, 4, comm).readInt32LE(0);
    if (amount < 0) refuse(S.PARAMETER_ERROR);
    if (ins === INS.LIMITED_CREDIT && !file.limitedCredit) refuse(S.PERMISSION_DENIED);
    const pending = state.transaction.get(fileNo) ?? {};
    const current = pending.value ?? file.value;
    const next = ins === INS.DEBIT ? current - amount : current + amount;
    if (next < file.lowerLimit || next > file.upperLimit) refuse(S.BOUNDARY_ERROR);
    state.transaction.set(fileNo, { ...pending, value: next });
    return this.#answer(state, Buffer.alloc(0));
  }

  #recordFile(state: DesfireVolatile, fileNo: number): DesfireRecordFile {
    const file = this.#file(state, fileNo);
    return file.type === 'cyclic-record' ? file : refuse(S.PARAMETER_ERROR);
  }

  #writeRecord(state: DesfireVolatile, frame: Buffer): Buffer {
    if (frame.length < 8) refuse(S.LENGTH_ERROR);
    const fileNo = frame[1]!;
    const file = this.#recordFile(state, fileNo);
    const comm = this.#commFor(state, file.access, 'write', file);
    const offset = frame.readUIntLE(2, 3);
    const length = frame.readUIntLE(5, 3);
    const data = this.#openData(state, frame, 7, length, comm).subarray(0, length);
    if (length === 0 || offset + length > file.recordSize) refuse(S.BOUNDARY_ERROR);
    const pending = state.transaction.get(fileNo) ?? {};
    const record = pending.record ?? Buffer.alloc(file.recordSize);
    data.copy(record, offset);
    state.transaction.set(fileNo, { ...pending, record });
    return this.#answer(state, Buffer.alloc(0));
  }

  #readRecords(state: DesfireVolatile, frame: Buffer): Buffer {
    if (frame.length !== 8) refuse(S.LENGTH_ERROR);
    const file = this.#recordFile(state, frame[1]!);
    const comm = this.#commFor(state, file.access, 'read', file);
    this.#macIn(state, frame);
    const offset = frame.readUIntLE(2, 3);
    const held = file.records.length;
    const count = frame.readUIntLE(5, 3) || held - offset;
    if (held === 0 || count < 1 || offset + count > held) refuse(S.BOUNDARY_ERROR);
    const records = file.records.slice(held - offset - count, held - offset);
    return this.#answer(state, Buffer.concat(records), [], comm === 'enciphered');
  }

  #commit(state: DesfireVolatile): void {
    const app = state.application!;
    if (state.transaction.size === 0) return;
    for (const [fileNo, pending] of state.transaction) {
      const file = app.files.get(fileNo);
      if (file?.type === 'value' && pending.value !== undefined) file.value = pending.value;
      if (file?.type === 'cyclic-record' && pending.record) {
        file.records.push(pending.record);
        // One record of a cyclic file is the transaction's spare: it holds MaxNumberOfRecords - 1.
        while (file.records.length > file.maxRecords - 1) file.records.shift();
      }
    }
    state.transaction.clear();
    this.changed();
  }

  /** The command name of an APDU, for fault triggers and counts. */
  static classify(apdu: Buffer): ApduCommand {
    if (apdu[0] !== 0x90) return 'other';
    return COMMAND_NAMES.get(apdu[1] ?? 0) ?? 'other';
  }
}

/** CreateApplication's key type bits, and GetKeySettings' answer of them. */
const KEY_TYPES = new Map<number, StoredKey['type']>([
  [0x00, 'des'],
  [0x40, '3k3des'],
  [0x80, 'aes'],
]);
const TYPE_FLAGS: Record<StoredKey['type'], number> = { des: 0x00, '3k3des': 0x40, aes: 0x80 };

/** A DES key's version: the parity bits (lowest) of its first 8 bytes, the first the highest. */
function desKeyVersion(key: Buffer): number {
  let version = 0;
  for (let i = 0; i < 8; i += 1) version = (version << 1) | ((key[i] ?? 0) & 1);
  return version;
}

const COMMAND_NAMES = new Map<number, ApduCommand>([
  [INS.GET_VERSION, 'getVersion'],
  [INS.SELECT_APPLICATION, 'selectApplication'],
  [INS.AUTHENTICATE_AES, 'authenticate'],
  [INS.AUTHENTICATE_ISO, 'authenticate'],
  [INS.ADDITIONAL_FRAME, 'additionalFrame'],
  [INS.CHANGE_KEY, 'changeKey'],
  [INS.CHANGE_KEY_SETTINGS, 'changeKeySettings'],
  [INS.GET_KEY_SETTINGS, 'getKeySettings'],
  [INS.GET_KEY_VERSION, 'getKeyVersion'],
  [INS.CREATE_APPLICATION, 'createApplication'],
  [INS.GET_APPLICATION_IDS, 'getApplicationIds'],
  [INS.GET_FILE_IDS, 'getFileIds'],
  [INS.GET_FILE_SETTINGS, 'getFileSettings'],
  [INS.CREATE_VALUE_FILE, 'createFile'],
  [INS.CREATE_CYCLIC_RECORD_FILE, 'createFile'],
  [INS.GET_VALUE, 'getValue'],
  [INS.CREDIT, 'credit'],
  [INS.DEBIT, 'debit'],
  [INS.LIMITED_CREDIT, 'limitedCredit'],
  [INS.WRITE_RECORD, 'writeRecord'],
  [INS.READ_RECORDS, 'readRecords'],
  [INS.COMMIT_TRANSACTION, 'commit'],
  [INS.ABORT_TRANSACTION, 'abort'],
]);
