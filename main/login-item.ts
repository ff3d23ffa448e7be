import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Started at login with this flag, the app starts in the tray without opening its window. */
export const HIDDEN_FLAG = '--hidden';

export interface LoginItemHost {
  platform: NodeJS.Platform;
  /** Electron's app.setLoginItemSettings: macOS and Windows only (a no-op on Linux). */
  setLoginItemSettings(settings: { openAtLogin: boolean; args?: string[] }): void;
  /** The program to start: the AppImage itself when run from one, else the executable. */
  executable: string;
  /** $XDG_CONFIG_HOME, or ~/.config. */
  configHome: string;
}

/** The freedesktop autostart entry that starts the app at login on Linux. */
export function autostartEntry(executable: string): string {
  // Exec quoting per the Desktop Entry spec: a path with spaces is double-quoted, and `"`,
  // `` ` ``, `$` and `\` inside the quotes are escaped with a backslash.
  const quoted = `"${executable.replace(/(["`$\\])/g, '\\$1')}"`;
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Card Wallet Worker',
    `Exec=${quoted} ${HIDDEN_FLAG}`,
    'X-GNOME-Autostart-enabled=true',
    'Terminal=false',
    '',
  ].join('\n');
}

export const AUTOSTART_FILE = 'card-wallet-worker.desktop';

/**
 * Turns "start at login" on or off. Electron documents setLoginItemSettings for macOS and
 * Windows only (on Linux it does nothing), so there the app writes or removes an XDG autostart entry, which
 * GNOME, KDE, Xfce and most other desktops read.
 */
export async function setStartAtLogin(host: LoginItemHost, enabled: boolean): Promise<void> {
  if (host.platform !== 'linux') {
    host.setLoginItemSettings({ openAtLogin: enabled, args: [HIDDEN_FLAG] });
    return;
  }
  const folder = join(host.configHome, 'autostart');
  const file = join(folder, AUTOSTART_FILE);
  if (!enabled) {
    await rm(file, { force: true });
    return;
  }
  await mkdir(folder, { recursive: true });
  await writeFile(file, autostartEntry(host.executable));
}
