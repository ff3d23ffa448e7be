// The PC/SC host: the entry point of an Electron utility process (main/pcsc-host-client.ts forks
// it), and the only place the native PC/SC binding (@pokusew/pcsclite) is loaded. Every call
// that can block in native code runs here: the binding's constructor, SCardConnect,
// SCardTransmit, SCardControl, and close(), which joins a thread. If one hangs, this process
// stops answering main/'s heartbeat or a call's deadline passes, and main/ kills it and starts
// another; the tray, the window and the HTTP service in the main process never wait on it.
//
// It serves @pokusew/pcsclite's own API, one message per call (main/pcsc-host-protocol.ts);
// nfc-pcsc runs in main/ over a proxy of it, as it runs over the simulator's reader.
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { asBuffer, type FromHost, type ReaderMethod, type ToHost } from './pcsc-host-protocol.ts';

/** Electron's process.parentPort in a utility process. */
interface ParentPort {
  on(event: 'message', listener: (event: { data: ToHost }) => void): void;
  postMessage(message: FromHost): void;
}

type Callback = (error?: Error | null, value?: unknown) => void;

/** @pokusew/pcsclite's CardReader, as used here. */
interface PcscReader extends EventEmitter {
  name: string;
  state?: number;
  connected: boolean;
  connect(options: object, callback: Callback): void;
  disconnect(disposition: number, callback: Callback): void;
  transmit(data: Buffer, maxLength: number, protocol: number, callback: Callback): void;
  control(data: Buffer, code: number, maxLength: number, callback: Callback): void;
  close(): void;
}

/** @pokusew/pcsclite's PCSCLite (what its module function returns). */
interface Pcsc extends EventEmitter {
  close(): void;
}

const port = (process as unknown as { parentPort?: ParentPort }).parentPort;
if (!port) throw new Error('the PC/SC host runs only as an Electron utility process');
const parent: ParentPort = port;

/**
 * The binding's module. main/ passes nothing in the app; the tests pass a stand-in that hangs
 * or crashes, to exercise main/'s supervision with this very host.
 */
const bindingModule = process.argv[2] ?? '@pokusew/pcsclite';
const require = createRequire(import.meta.url);

let context: { id: number; pcsc: Pcsc } | undefined;
const readers = new Map<number, PcscReader>();
let nextReader = 1;

function send(message: FromHost): void {
  parent.postMessage(message);
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A reader's numeric constants (SCARD_*, IOCTL_*), own or from its prototype. */
function constantsOf(reader: object): Record<string, number> {
  const constants: Record<string, number> = {};
  for (let object: object | null = reader; object; object = Object.getPrototypeOf(object)) {
    for (const key of Object.getOwnPropertyNames(object)) {
      const value = (reader as Record<string, unknown>)[key];
      if (/^(SCARD|IOCTL)_/.test(key) && typeof value === 'number') constants[key] = value;
    }
  }
  return constants;
}

function attach(contextId: number, reader: PcscReader): void {
  const id = nextReader++;
  readers.set(id, reader);
  reader.on('status', (status: { state: number; atr?: Buffer }) =>
    send({
      kind: 'status',
      reader: id,
      state: status.state,
      ...(status.atr ? { atr: status.atr } : {}),
      connected: reader.connected,
    }),
  );
  reader.on('end', () => {
    readers.delete(id);
    send({ kind: 'reader-end', reader: id });
  });
  reader.on('error', (error: Error) =>
    send({ kind: 'reader-error', reader: id, message: messageOf(error) }),
  );
  send({
    kind: 'reader',
    context: contextId,
    reader: id,
    name: reader.name,
    state: reader.state ?? 0,
    constants: constantsOf(reader),
  });
}

function closeContext(): void {
  const open = context;
  context = undefined;
  if (!open) return;
  try {
    open.pcsc.close();
  } catch {
    // A context the service already dropped: gone either way.
  }
}

function openContext(id: number, contextId: number): void {
  closeContext();
  let pcsc: Pcsc;
  try {
    // Loading fails without the PC/SC library or with a binding built for another ABI;
    // constructing fails while the smart-card service is away (patched: no retry loop).
    pcsc = (require(bindingModule) as () => Pcsc)();
  } catch (error) {
    send({ kind: 'reply', id, error: messageOf(error) });
    return;
  }
  context = { id: contextId, pcsc };
  pcsc.on('reader', (reader: PcscReader) => attach(contextId, reader));
  pcsc.on('error', (error: Error) =>
    send({ kind: 'error', context: contextId, message: messageOf(error) }),
  );
  send({ kind: 'reply', id });
}

function call(id: number, readerId: number, method: ReaderMethod, args: unknown[]): void {
  const reader = readers.get(readerId);
  const reply: Callback = (error, value) =>
    send({
      kind: 'reply',
      id,
      ...(error ? { error: messageOf(error) } : {}),
      ...(value === undefined ? {} : { value }),
      connected: reader?.connected ?? false,
    });
  if (!reader) {
    reply(new Error('the reader is gone'));
    return;
  }
  try {
    if (method === 'connect') reader.connect(args[0] as object, reply);
    else if (method === 'disconnect') reader.disconnect(args[0] as number, reply);
    else if (method === 'transmit')
      reader.transmit(asBuffer(args[0]) as Buffer, args[1] as number, args[2] as number, reply);
    else reader.control(asBuffer(args[0]) as Buffer, args[1] as number, args[2] as number, reply);
  } catch (error) {
    reply(error as Error);
  }
}

parent.on('message', ({ data: message }) => {
  switch (message.kind) {
    case 'ping':
      send({ kind: 'pong', id: message.id });
      return;
    case 'open':
      openContext(message.id, message.context);
      return;
    case 'call':
      call(message.id, message.reader, message.method, message.args);
      return;
    case 'close-reader':
      try {
        readers.get(message.reader)?.close();
      } catch {
        // Already closed by PC/SC.
      }
      return;
    case 'close':
      if (context?.id === message.context) closeContext();
      return;
  }
});
