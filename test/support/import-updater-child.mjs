// Plain Node, no tsx: imports the built main/platform-updater.js with Node's own ES module
// rules for CommonJS packages, as Electron's main process does (tsx's interop lists getters
// as named exports, so it would hide electron-updater#7976's undefined named export).
// Electron's `electron` module is stood in for in require.cache, where electron-updater's
// require('electron') looks. Prints what it found as JSON.
import { EventEmitter } from 'node:events';
import Module, { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [modulePath, resourcesPath] = process.argv.slice(2);
const fromUpdater = createRequire(createRequire(modulePath).resolve('electron-updater'));
const electronPath = fromUpdater.resolve('electron');
const app = Object.assign(new EventEmitter(), {
  isPackaged: true,
  getVersion: () => '2.0.0',
  getName: () => 'card-wallet-worker',
  getAppPath: () => resourcesPath,
  getPath: () => resourcesPath,
  whenReady: () => Promise.resolve(),
  quit: () => undefined,
  relaunch: () => undefined,
});
const cached = new Module(electronPath);
cached.filename = electronPath;
cached.loaded = true;
cached.exports = { app, autoUpdater: new EventEmitter() };
createRequire(import.meta.url).cache[electronPath] = cached;
Object.assign(process, { resourcesPath });

const namespace = await import('electron-updater');
const { platformUpdater } = await import(pathToFileURL(modulePath).href);
let found;
try {
  const updater = await platformUpdater();
  found = { updater: updater.constructor.name, same: updater === (await platformUpdater()) };
} catch (error) {
  found = { error: error.message };
}
console.log(
  JSON.stringify({
    ...found,
    namedExport: typeof namespace.autoUpdater,
    defaultExport: typeof namespace.default,
  }),
);
