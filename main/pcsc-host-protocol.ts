// The messages between main/ and the PC/SC host (main/pcsc-host.ts, an Electron utility process
// that alone loads the native binding). They cross Electron's structured clone: plain data
// only, and a Buffer arrives as a Uint8Array.

/** The calls of @pokusew/pcsclite's CardReader that go to the host. */
export type ReaderMethod = 'connect' | 'disconnect' | 'transmit' | 'control';

export type ToHost =
  /** Creates the PC/SC context (the binding's constructor); closes the previous one first. */
  | { kind: 'open'; id: number; context: number }
  /** One CardReader call; answered with `reply`. */
  | { kind: 'call'; id: number; reader: number; method: ReaderMethod; args: unknown[] }
  | { kind: 'close-reader'; reader: number }
  | { kind: 'close'; context: number }
  /** The heartbeat: answered with `pong` by a host whose event loop runs. */
  | { kind: 'ping'; id: number };

export type FromHost =
  | { kind: 'ready' }
  | { kind: 'pong'; id: number }
  /** `connected`: the reader's state after the call (pcsclite keeps it on the object). */
  | {
      kind: 'reply';
      id: number;
      error?: string;
      value?: unknown;
      connected?: boolean;
    }
  /** A reader appeared; `constants` are its SCARD_* and IOCTL_* numbers. */
  | {
      kind: 'reader';
      context: number;
      reader: number;
      name: string;
      state: number;
      constants: Record<string, number>;
    }
  | {
      kind: 'status';
      reader: number;
      state: number;
      atr?: Uint8Array;
      connected: boolean;
    }
  | { kind: 'reader-end'; reader: number }
  | { kind: 'reader-error'; reader: number; message: string }
  /** The context failed (the service stopped, pcscd went away). */
  | { kind: 'error'; context: number; message: string }
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; message: string };

/** A Buffer again from what structured clone made of one. */
export function asBuffer(value: unknown): Buffer | undefined {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}
