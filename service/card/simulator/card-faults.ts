// What every virtual card shares, whatever its type: its UID and the faults a test (or the
// simulator's control API) arms on it: pull it away before or after an APDU, tear a write,
// stall, answer late. The PC/SC stand-ins (simulated-pcsc.ts, the test rig's vpcd transport)
// ask the card in the field what to do with each APDU (decide) before they execute it.

/**
 * The commands a card is told apart by, for fault triggers and APDU counts: the PC/SC part 3
 * storage-card APDUs of a MIFARE Classic card (GET UID, LOAD KEY, AUTHENTICATE, READ BINARY,
 * UPDATE BINARY: 'write', and the reader's value block operations: 'value'), and the native commands of a MIFARE DESFire card (ISO-wrapped,
 * CLA 90). DESFire's 'authenticate' is AA or 1A; the frames that continue a command or an answer
 * are 'additionalFrame'.
 */
export const APDU_COMMANDS = [
  'getUid',
  'loadKey',
  'authenticate',
  'read',
  'write',
  'value',
  'getVersion',
  'selectApplication',
  'additionalFrame',
  'changeKey',
  'changeKeySettings',
  'getKeySettings',
  'getKeyVersion',
  'createApplication',
  'getApplicationIds',
  'getFileIds',
  'getFileSettings',
  'createFile',
  'getValue',
  'credit',
  'debit',
  'limitedCredit',
  'writeRecord',
  'readRecords',
  'commit',
  'abort',
  'other',
] as const;

export type ApduCommand = (typeof APDU_COMMANDS)[number];

/** What a fault handler sees for each command APDU the card receives. */
export interface ApduEvent {
  /** A copy of the command APDU. */
  readonly apdu: Buffer;
  /** 0-based count of APDUs this card received since it was inserted (GET UID is usually 0). */
  readonly index: number;
  readonly command: ApduCommand;
  /** The block addressed by authenticate, read and write. */
  readonly block?: number;
}

/**
 * What the card does with an APDU:
 * - 'answer': execute it and answer (the default);
 * - 'pull-before': the card leaves the field before the command takes effect: nothing is
 *   executed;
 * - 'pull-after': the command takes effect (a write is committed), then the card leaves before
 *   answering;
 * - 'tear': the card leaves in the middle of a write: on a MIFARE Classic card the first 8 bytes
 *   of the block are written, the rest keeps its old contents (other commands: as 'pull-after');
 *   a MIFARE DESFire card's anti-tearing keeps every command all or nothing, so a torn command
 *   has not taken effect;
 * - 'stall': never answer; the card stays present, silent, until removed;
 * - `{ delayMs }`: answer late. The command takes effect when the answer is sent, so a card
 *   removed during the delay has not executed it.
 */
export type FaultAction =
  'answer' | 'pull-before' | 'pull-after' | 'tear' | 'stall' | { delayMs: number };

/** A persistent handler: return an action, or nothing to answer normally. */
export type ApduHandler = (event: ApduEvent) => FaultAction | undefined | void;

/**
 * Which APDU a one-shot fault hits:
 * - a command name: its next occurrence, e.g. `'write'`;
 * - `{ command, block?, nth? }`: the nth (1-based, default 1) occurrence of that command (on that
 *   block) counted from when the fault was armed;
 * - `{ index }`: the APDU with that index since insertion (see ApduEvent.index).
 */
export type FaultTrigger =
  ApduCommand | { command: ApduCommand; block?: number; nth?: number } | { index: number };

/** A one-shot fault armed with `card.failAt`. */
export interface Fault {
  /** Whether it has hit an APDU. Assert it, so a test cannot pass without its fault. */
  readonly fired: boolean;
  /** The APDU it hit. */
  readonly event: ApduEvent | undefined;
  /** Resolves with the APDU it hit, when it hits (e.g. to remove a stalled card afterwards). */
  readonly triggered: Promise<ApduEvent>;
  /** Disarms it if it has not fired. */
  cancel(): void;
}

interface ArmedFault {
  trigger: FaultTrigger;
  action: FaultAction;
  matches: number;
  fired: boolean;
  event: ApduEvent | undefined;
  resolve: (event: ApduEvent) => void;
}

/** A card in a virtual reader's field: its UID, ATR and armed faults. */
export abstract class FaultingCard {
  readonly uid: Buffer;
  readonly #handlers = new Set<ApduHandler>();
  #faults: ArmedFault[] = [];
  /** Counts the changes to what the card keeps, so a reader knows when to save it. */
  #revision = 0;

  constructor(uid: Buffer) {
    if (uid.length !== 4 && uid.length !== 7) {
      throw new RangeError(`a card UID has 4 or 7 bytes, got ${uid.length}`);
    }
    this.uid = Buffer.from(uid);
  }

  abstract readonly atr: Buffer;

  /** The UID as the service's cardId: uppercase hex, no separators. */
  get id(): string {
    return this.uid.toString('hex').toUpperCase();
  }

  /** Grows with every change to the card's persistent memory. */
  get revision(): number {
    return this.#revision;
  }

  protected changed(): void {
    this.#revision += 1;
  }

  /**
   * Arms a one-shot fault, e.g. `card.failAt('write', 'pull-after')` (next write commits, then
   * the card is gone), `card.failAt({ command: 'read', nth: 2 }, 'stall')`,
   * `card.failAt({ index: 3 }, { delayMs: 500 })`. Faults stay armed across removal and
   * insertion until they fire or are cancelled; the earliest armed one wins an APDU.
   */
  failAt(trigger: FaultTrigger, action: FaultAction): Fault {
    let resolve!: (event: ApduEvent) => void;
    const triggered = new Promise<ApduEvent>((r) => (resolve = r));
    const armed: ArmedFault = {
      trigger,
      action,
      matches: 0,
      fired: false,
      event: undefined,
      resolve,
    };
    this.#faults.push(armed);
    return {
      get fired() {
        return armed.fired;
      },
      get event() {
        return armed.event;
      },
      triggered,
      cancel: () => {
        this.#faults = this.#faults.filter((fault) => fault !== armed);
      },
    };
  }

  /** Adds a persistent handler consulted for every APDU after the one-shot faults. */
  onApdu(handler: ApduHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** Disarms every fault and handler. */
  clearFaults(): void {
    this.#faults = [];
    this.#handlers.clear();
  }

  /** What the card does with this APDU: the earliest matching one-shot fault, then handlers. */
  decide(event: ApduEvent): FaultAction {
    let action: FaultAction | undefined;
    for (const fault of this.#faults) {
      if (!matches(fault, event)) continue;
      fault.fired = true;
      fault.event = event;
      fault.resolve(event);
      action ??= fault.action;
    }
    this.#faults = this.#faults.filter((fault) => !fault.fired);
    if (action !== undefined) return action;
    for (const handler of this.#handlers) {
      const result = handler(event);
      if (result !== undefined && result !== 'answer') return result;
    }
    return 'answer';
  }
}

function matches(fault: ArmedFault, event: ApduEvent): boolean {
  const trigger = typeof fault.trigger === 'string' ? { command: fault.trigger } : fault.trigger;
  if ('index' in trigger) return event.index === trigger.index;
  if (trigger.command !== event.command) return false;
  if (trigger.block !== undefined && trigger.block !== event.block) return false;
  fault.matches += 1;
  return fault.matches === (trigger.nth ?? 1);
}
