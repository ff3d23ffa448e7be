import type { MenuItemConstructorOptions } from 'electron';

/**
 * The application menu of the installed app (Menu.setApplicationMenu, before `ready`).
 * Electron's default menu has View > Toggle Developer Tools and puts a menu bar on the window;
 * the installed app has none. On Windows and Linux that is `null`. On macOS `null` would also
 * take Cmd+C, Cmd+V, Cmd+A away from the settings fields (electron/electron#3787,
 * electron/electron#49807: the shortcuts live in the Edit menu's roles), and the operator
 * pastes the API key there, so macOS keeps the app menu (Quit) and Edit, nothing else.
 */
export function installedAppMenu(platform: NodeJS.Platform): MenuItemConstructorOptions[] | null {
  if (platform !== 'darwin') return null;
  return [{ role: 'appMenu' }, { role: 'editMenu' }];
}
