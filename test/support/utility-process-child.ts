// The child side of test/support/electron-mock.ts's FakeUtilityProcess: what Electron gives a
// utility process, process.parentPort, over Node's IPC channel, then the entry module. As in
// Electron, messages wait until a 'message' listener is registered and arrive as
// { data, ports }, after a structured clone (a Buffer arrives as a Uint8Array).
import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';

const [, , entry, ...args] = process.argv;
if (!entry) throw new Error('usage: utility-process-child.ts ENTRY [ARGS...]');
process.argv = [process.argv[0] as string, entry, ...args];

const queued: unknown[] = [];
const parentPort = Object.assign(new EventEmitter(), {
  postMessage(message: unknown) {
    process.send?.(structuredClone(message));
  },
});
process.on('message', (data) => {
  if (parentPort.listenerCount('message') === 0) queued.push(data);
  else parentPort.emit('message', { data: structuredClone(data), ports: [] });
});
parentPort.on('newListener', (event) => {
  if (event !== 'message') return;
  setImmediate(() => {
    for (const data of queued.splice(0))
      parentPort.emit('message', { data: structuredClone(data), ports: [] });
  });
});
Object.assign(process, { parentPort });
await import(pathToFileURL(entry).href);
