// The simulator's PC/SC layer: a stand-in for the @pokusew/pcsclite reader object that
// nfc-pcsc's Reader wraps (connect, disconnect, transmit, control, close, `status` and `end`
// events), with virtual cards in its field. nfc-pcsc's real Reader runs on top of it, so
// everything from GET UID and LOAD KEY up (reader manager, card session, wallet format,
// movement engine) is the code that runs with a real reader.
import { EventEmitter } from 'node:events';
import type { NFC, Reader } from 'nfc-pcsc';
import readerModule from 'nfc-pcsc/dist/Reader.js';
import {
  ContactlessFrontEnd,
  classifyApdu,
  type AnyVirtualCard,
  type ApduEvent,
  type CardContact,
} from './virtual-card.ts';

export const SIMULATED_READER_NAME = 'Card Wallet Simulator 00 00';

// pcsclite's constants (PC/SC lite's pcsclite.h), which nfc-pcsc reads off the reader object.
const SCARD_STATE_EMPTY = 0x10;
const SCARD_STATE_PRESENT = 0x20;
const SCARD_PROTOCOL_T1 = 2;

/** What pcsclite reports when the card left during or before a transmit (SCARD_W_REMOVED_CARD). */
function removedCard(): Error {
  return new Error('SCardTransmit error: The smart card has been removed.(0x80100069)');
}

interface Contact extends CardContact {
  apduCount: number;
  gone: boolean;
  /** Settles the transmits of a stalled card when it is taken away. */
  readonly onGone: (() => void)[];
  /** Called once the reader has answered the card's first APDU (nfc-pcsc's GET UID). */
  seen: (() => void) | undefined;
}

/** How long insert() waits for nfc-pcsc to read the UID when nobody is listening. */
const SEEN_WAIT_MS = 1_000;

/** A contactless reader slot holding at most one virtual card, shaped like pcsclite's reader. */
export class SimulatedPcscReader extends EventEmitter {
  readonly name = SIMULATED_READER_NAME;
  readonly SCARD_STATE_EMPTY = SCARD_STATE_EMPTY;
  readonly SCARD_STATE_PRESENT = SCARD_STATE_PRESENT;
  readonly SCARD_SHARE_SHARED = 2;
  readonly SCARD_SHARE_DIRECT = 3;
  readonly SCARD_LEAVE_CARD = 0;
  readonly SCARD_RESET_CARD = 1;
  readonly SCARD_UNPOWER_CARD = 2;
  readonly IOCTL_CCID_ESCAPE = 0x42000001;
  state = SCARD_STATE_EMPTY;
  connected = false;
  readonly #frontEnd = new ContactlessFrontEnd();
  #contact: Contact | null = null;
  #queue: Promise<void> = Promise.resolve();
  /** Called after every APDU that changed what a card keeps, so its memory can be kept. */
  onCardWritten: (card: AnyVirtualCard) => void = () => {};

  get card(): AnyVirtualCard | null {
    return this.#contact?.card ?? null;
  }

  /**
   * Puts a card in the field; nfc-pcsc connects and reads its UID as with a real reader.
   * Resolves once it has (so a control call that placed a card answers when the service sees
   * it), or after a second when no PC/SC context is listening.
   */
  insert(card: AnyVirtualCard): Promise<void> {
    if (this.#contact) throw new Error('the simulated reader already holds a card');
    let seen!: () => void;
    const wasSeen = new Promise<void>((resolve) => (seen = resolve));
    const timer = setTimeout(seen, SEEN_WAIT_MS);
    this.#contact = {
      card,
      authenticated: null,
      halted: false,
      apduCount: 0,
      gone: false,
      onGone: [seen],
      seen: () => {
        clearTimeout(timer);
        // After nfc-pcsc's continuation that emits `card`.
        setImmediate(seen);
      },
    };
    this.#setState(SCARD_STATE_PRESENT, card.atr);
    return wasSeen;
  }

  /** Takes the card out of the field; a transmit in flight fails as on a real reader. */
  remove(): void {
    const contact = this.#contact;
    if (!contact) return;
    contact.gone = true;
    this.#contact = null;
    this.connected = false;
    for (const settle of contact.onGone.splice(0)) settle();
    this.#setState(SCARD_STATE_EMPTY);
  }

  connect(_options: object, callback: (error: Error | null, protocol?: number) => void): void {
    const present = this.#contact !== null;
    setImmediate(() => {
      if (!present || !this.#contact) {
        callback(new Error('SCardConnect error: No smart card inserted.(0x8010000c)'));
        return;
      }
      this.connected = true;
      callback(null, SCARD_PROTOCOL_T1);
    });
  }

  /** With SCARD_RESET_CARD or SCARD_UNPOWER_CARD the card is re-activated, as pcscd does. */
  disconnect(disposition: number, callback: (error: Error | null) => void): void {
    const contact = this.#contact;
    const reset = disposition === this.SCARD_RESET_CARD || disposition === this.SCARD_UNPOWER_CARD;
    if (contact && this.connected && reset) this.#frontEnd.reactivate(contact);
    this.connected = false;
    setImmediate(() => callback(null));
  }

  transmit(
    data: Buffer,
    _maxLength: number,
    _protocol: number,
    callback: (error: Error | null, response?: Buffer) => void,
  ): void {
    const contact = this.#contact;
    const apdu = Buffer.from(data);
    // One APDU at a time, in order, as over a real reader's single channel.
    this.#queue = this.#queue.then(async () => {
      if (!contact || contact.gone) {
        callback(removedCard());
        return;
      }
      const response = await this.#exchange(contact, apdu);
      if (response) callback(null, response);
      else callback(removedCard());
      contact.seen?.();
      contact.seen = undefined;
    });
  }

  control(
    _data: Buffer,
    _code: number,
    _maxLength: number,
    callback: (error: Error | null, response?: Buffer) => void,
  ): void {
    setImmediate(() => callback(new Error('SCardControl error: not supported by the simulator')));
  }

  close(): void {
    this.emit('end');
    this.removeAllListeners();
  }

  /** The answer, or null when the card left before answering. */
  async #exchange(contact: Contact, apdu: Buffer): Promise<Buffer | null> {
    const { command, block } = classifyApdu(apdu);
    const event: ApduEvent = {
      apdu,
      index: contact.apduCount++,
      command,
      ...(block !== undefined ? { block } : {}),
    };
    const action = contact.card.decide(event);
    if (action === 'stall') {
      // Silent until taken away; the card session's deadline answers the caller meanwhile.
      await new Promise<void>((resolve) => contact.onGone.push(resolve));
      return null;
    }
    if (action === 'pull-before') {
      this.remove();
      return null;
    }
    if (typeof action === 'object') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, action.delayMs);
        contact.onGone.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (contact.gone) return null;
    }
    const revision = contact.card.revision;
    const response = this.#frontEnd.execute(contact, apdu, action === 'tear');
    if (contact.card.revision !== revision) this.onCardWritten(contact.card);
    if (action === 'pull-after' || action === 'tear') {
      this.remove();
      return null;
    }
    return response;
  }

  #setState(state: number, atr?: Buffer): void {
    // pcsclite emits the new status, then records it: nfc-pcsc compares the two.
    this.emit('status', atr ? { state, atr } : { state });
    this.state = state;
  }
}

const NfcReader = readerModule.default;

/**
 * An NFC (nfc-pcsc's PC/SC context) whose one reader is the simulated one. The reader manager
 * makes a new one after each teardown; the simulated reader and its card outlive them.
 */
export class SimulatedNfc extends EventEmitter {
  readonly #device: SimulatedPcscReader;
  #reader: Reader | undefined;

  constructor(device: SimulatedPcscReader) {
    super();
    this.#device = device;
    // Like pcsclite, the reader is announced after the caller has added its listeners.
    setImmediate(() => {
      const reader = new NfcReader(device);
      this.#reader = reader;
      this.emit('reader', reader);
      // A card already in the field is seen as inserted, as when pcscd starts with a card.
      const card = device.card;
      if (card) {
        device.state = SCARD_STATE_EMPTY;
        device.emit('status', { state: SCARD_STATE_PRESENT, atr: card.atr });
        device.state = SCARD_STATE_PRESENT;
      }
    });
  }

  get readers(): Record<string, never> {
    return {};
  }

  close(): void {
    this.#reader?.removeAllListeners();
    this.#device.removeAllListeners();
  }

  /** As nfc-pcsc's NFC, for the reader manager. */
  asNfc(): NFC {
    return this as unknown as NFC;
  }
}
