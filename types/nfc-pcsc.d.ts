// Typings for nfc-pcsc 0.8.1, which ships none. Only what the project uses, checked against
// node_modules/nfc-pcsc/src/{NFC,Reader,errors}.js. The package is CommonJS compiled by Babel:
// from ESM use `import nfcPcsc from 'nfc-pcsc'` and destructure.
declare module 'nfc-pcsc' {
  import { EventEmitter } from 'node:events';

  export type TagStandard = 'TAG_ISO_14443_3' | 'TAG_ISO_14443_4';

  export interface Card {
    atr?: Buffer;
    standard?: TagStandard;
    type?: TagStandard;
    /** Lowercase hex, set for ISO 14443-3 tags after GET UID. */
    uid?: string;
    data?: Buffer;
  }

  export interface Logger {
    log(...args: unknown[]): void;
    debug(...args: unknown[]): void;
    info(...args: unknown[]): void;
    warn(...args: unknown[]): void;
    error(...args: unknown[]): void;
  }

  /** The @pokusew/pcsclite CardReader under a Reader. */
  export interface PcscCardReader extends EventEmitter {
    name: string;
    state: number;
    connected: boolean;
    SCARD_STATE_EMPTY: number;
    SCARD_STATE_PRESENT: number;
    /** SCardDisconnect's disposition that resets the card (a warm reset). */
    SCARD_RESET_CARD: number;
    /**
     * SCardDisconnect with a disposition (Reader.disconnect always leaves the card as it is);
     * calls back at once when not connected. The Reader's `connection` is then stale.
     */
    disconnect(disposition: number, callback: (error?: Error | null) => void): void;
    close(): void;
  }

  export class Reader extends EventEmitter {
    readonly name: string;
    readonly reader: PcscCardReader;
    card: Card | null;
    connection: { type: string; protocol: number } | null;
    autoProcessing: boolean;
    aid: Buffer | string | ((card: Card) => Buffer) | null;
    logger: Logger;
    /** SCardConnect (shared by default); sets `connection`. */
    connect(mode?: 'CONNECT_MODE_CARD' | 'CONNECT_MODE_DIRECT'): Promise<unknown>;
    disconnect(): Promise<boolean>;
    transmit(data: Buffer, responseMaxLength: number): Promise<Buffer>;
    control(data: Buffer, responseMaxLength: number): Promise<Buffer>;
    loadAuthenticationKey(keyNumber: 0 | 1, key: Buffer | number[] | string): Promise<number>;
    /**
     * A key given as the same Buffer object is found in the reader's key slots by identity and
     * not loaded again; a string is converted on every call and so loaded every time.
     */
    authenticate(
      blockNumber: number,
      keyType: number,
      key: Buffer | number[] | string,
      obsolete?: boolean,
    ): Promise<true>;
    /** For MIFARE Classic pass blockSize 16: `read(4, 16, 16)`. Longer reads split per packet. */
    read(
      blockNumber: number,
      length: number,
      blockSize?: number,
      packetSize?: number,
      readClass?: number,
    ): Promise<Buffer>;
    /** Defaults to 4-byte blocks (Ultralight); for MIFARE Classic: `write(4, buf16, 16)`. */
    write(blockNumber: number, data: Buffer, blockSize?: number): Promise<boolean | boolean[]>;
    close(): void;

    on(event: 'card', listener: (card: Card) => void): this;
    on(event: 'card.off', listener: (card: Card) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'end', listener: () => void): this;
    once(event: 'card', listener: (card: Card) => void): this;
    once(event: 'card.off', listener: (card: Card) => void): this;
    once(event: 'error', listener: (error: Error) => void): this;
    once(event: 'end', listener: () => void): this;
  }

  export class ACR122Reader extends Reader {}

  export class NFC extends EventEmitter {
    /** Creates a PC/SC context at once: busy-waits while pcscd is unreachable. */
    constructor(logger?: Logger);
    readonly readers: Record<string, PcscCardReader>;
    close(): void;
    on(event: 'reader', listener: (reader: Reader) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    once(event: 'reader', listener: (reader: Reader) => void): this;
    once(event: 'error', listener: (error: Error) => void): this;
  }

  export const TAG_ISO_14443_3: 'TAG_ISO_14443_3';
  export const TAG_ISO_14443_4: 'TAG_ISO_14443_4';
  export const KEY_TYPE_A: 0x60;
  export const KEY_TYPE_B: 0x61;
  export const CONNECT_MODE_CARD: 'CONNECT_MODE_CARD';
  export const CONNECT_MODE_DIRECT: 'CONNECT_MODE_DIRECT';

  export const UNKNOWN_ERROR: 'unknown_error';
  export const FAILURE: 'failure';
  export const CARD_NOT_CONNECTED: 'card_not_connected';
  export const OPERATION_FAILED: 'operation_failed';

  export class BaseError extends Error {
    /** e.g. 'operation_failed', 'card_not_connected', 'failure', 'unable_to_load_key', or null. */
    code: string | null;
    /** The error this one wraps (e.g. a TransmitError under a ReadError). */
    previous?: Error;
    constructor(code?: string | null, message?: string | null, previousError?: Error);
  }
  export class TransmitError extends BaseError {}
  export class ControlError extends BaseError {}
  export class ReadError extends BaseError {}
  export class WriteError extends BaseError {}
  export class LoadAuthenticationKeyError extends BaseError {}
  export class AuthenticationError extends BaseError {}
  export class ConnectError extends BaseError {}
  export class DisconnectError extends BaseError {}
  export class GetUIDError extends BaseError {}

  const nfcPcsc: {
    NFC: typeof NFC;
    Reader: typeof Reader;
    ACR122Reader: typeof ACR122Reader;
    KEY_TYPE_A: typeof KEY_TYPE_A;
    KEY_TYPE_B: typeof KEY_TYPE_B;
    BaseError: typeof BaseError;
    TransmitError: typeof TransmitError;
    ReadError: typeof ReadError;
    WriteError: typeof WriteError;
    AuthenticationError: typeof AuthenticationError;
    LoadAuthenticationKeyError: typeof LoadAuthenticationKeyError;
    GetUIDError: typeof GetUIDError;
  };
  export default nfcPcsc;
}
