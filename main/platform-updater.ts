import type { UpdaterLike } from './updates.ts';

/**
 * electron-updater's updater for this OS (NsisUpdater, MacUpdater, AppImageUpdater or, for a
 * deb, DebUpdater), made on first use.
 *
 * Taken from the package's default export: electron-updater 6.8.10 defines `autoUpdater` with
 * `Object.defineProperty(exports, "autoUpdater", { get: () => {...} })`
 * (node_modules/electron-updater/out/main.js, lines 78-83), a form Node's CommonJS lexer does
 * not list as a named export, so `(await import('electron-updater')).autoUpdater` is undefined
 * in an ES module while `.default.autoUpdater` is the updater
 * (electron-userland/electron-builder#7976).
 */
export async function platformUpdater(): Promise<UpdaterLike> {
  const { default: electronUpdater } = await import('electron-updater');
  const updater = electronUpdater.autoUpdater as unknown as UpdaterLike | undefined;
  if (!updater) throw new Error('electron-updater has no updater for this system');
  return updater;
}
