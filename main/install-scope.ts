import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface InstallScopeHost {
  platform: NodeJS.Platform;
  /** process.execPath: the app's executable. */
  execPath: string;
  /** $APPIMAGE: the AppImage file when the app runs from one. */
  appImage: string | undefined;
  /** Whether this user can create files in `folder` (the updater replaces files there). */
  canWrite(folder: string): boolean;
}

/** Creates and removes a file in `folder`: what the updater will do, unelevated. */
export function canWriteFolder(folder: string): boolean {
  const probe = join(folder, `.card-wallet-worker-update-check-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why this copy cannot update itself without an administrator, or null when it can. Updates
 * run as the person at the till: electron-updater starts the installer after the app quits, and
 * an installer that then cannot elevate leaves the till with no service at all. So a copy that
 * cannot replace its own files does not download updates; the window says why.
 *
 * - Windows: tills are installed per user (electron-builder.yml, nsis.oneClick with
 *   perMachine false), in the user's own folder. A copy an earlier installer put in Program
 *   Files "for all users" would need elevation for every update (electron-builder's
 *   installer.nsi asks for it, UAC_RunElevated, when it finds a per-machine install).
 * - Linux: the AppImage is replaced where it lies (AppImageUpdater moves the new file there);
 *   the deb is updated by the system's package manager, as root.
 * - macOS: Squirrel.Mac replaces the app bundle itself.
 */
export function updateBlocker(host: InstallScopeHost): string | null {
  if (host.platform === 'win32') {
    const folder = dirname(host.execPath);
    return host.canWrite(folder)
      ? null
      : `this copy is installed for all users (${folder}), so every update would need an administrator: reinstall it for this user only (see the operator guide, "Installing on Windows")`;
  }
  if (host.platform === 'linux') {
    if (!host.appImage) return 'the deb package is updated with the system (apt), not by the app';
    const folder = dirname(host.appImage);
    return host.canWrite(folder)
      ? null
      : `the AppImage's folder (${folder}) is not writable by this user: move the AppImage to a folder of your own, such as ~/Applications`;
  }
  return null;
}
