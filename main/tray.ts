import type { Menu, MenuItemConstructorOptions, NativeImage, Tray } from 'electron';
import type { StatusSnapshot } from './status-model.ts';
import { trayMenu, trayState, trayTooltip, type TrayState } from './tray-state.ts';

export interface TrayActions {
  openWindow(): void;
  copyUrl(): void;
  copyApiKey(): void;
  /** Sets the Smart Card service to start automatically (asks for an administrator). */
  fixSmartCardService(): void;
  retryReader(): void;
  installUpdate(): void;
  openLogFolder(): void;
  setStartAtLogin(enabled: boolean): void;
  quit(): void;
}

export interface TrayParts {
  tray: Pick<Tray, 'setImage' | 'setToolTip' | 'setContextMenu'>;
  icon: (state: TrayState) => NativeImage;
  buildMenu: (template: MenuItemConstructorOptions[]) => Menu;
}

/**
 * Windows keeps 127 UTF-16 units of a tray tooltip (NOTIFYICONDATA's szTip[128]; Electron's
 * NotifyIcon::SetToolTip copies what fits, shell/browser/ui/win/notify_icon.cc), cutting mid
 * word. A longer one is shortened here at a word, with an ellipsis: the window says it in full.
 */
export const WINDOWS_TOOLTIP_MAX = 127;

export function fitTooltip(text: string, max = WINDOWS_TOOLTIP_MAX): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const cut = room.lastIndexOf(' ');
  // Not inside a surrogate pair: that half would show as a broken character.
  let end = cut > max / 2 ? cut : room.length;
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end -= 1;
  return `${text.slice(0, end).replace(/[\s,;:(]+$/, '')}…`;
}

/**
 * Keeps the tray in step with snapshots, touching it only when its icon, tooltip or menu would
 * change. The service publishes a snapshot on every HTTP request; rebuilding the menu each time
 * closes a menu the operator has open (electron/electron#4796) and makes the icon flicker.
 *
 * On macOS the menu is not attached with setContextMenu: there a left click would both open the
 * menu and fire `click`; instead `popUpMenu()` shows it on right click.
 */
export function trayUpdater(
  parts: TrayParts & { tray: Partial<Pick<Tray, 'popUpContextMenu'>> },
  actions: TrayActions,
  platform: NodeJS.Platform = process.platform,
) {
  let lastImage: string | undefined;
  let lastTooltip: string | undefined;
  let lastMenu: string | undefined;
  let menu: Menu | undefined;
  const click: Record<string, (checked: boolean) => void> = {
    'open-window': () => actions.openWindow(),
    'copy-url': () => actions.copyUrl(),
    'copy-api-key': () => actions.copyApiKey(),
    'reader-fix-service': () => actions.fixSmartCardService(),
    'reader-retry': () => actions.retryReader(),
    'install-update': () => actions.installUpdate(),
    'open-log-folder': () => actions.openLogFolder(),
    'start-at-login': (checked) => {
      // Electron has already ticked the native checkbox: the menu no longer shows our state,
      // so the next update rebuilds it with what was actually saved (the save may fail).
      lastMenu = undefined;
      actions.setStartAtLogin(checked);
    },
    quit: () => actions.quit(),
  };
  return {
    update(snapshot: StatusSnapshot, startAtLogin: boolean): void {
      const state = trayState(snapshot);
      if (state !== lastImage) {
        parts.tray.setImage(parts.icon(state));
        lastImage = state;
      }
      const full = trayTooltip(snapshot);
      const tooltip = platform === 'win32' ? fitTooltip(full) : full;
      if (tooltip !== lastTooltip) {
        parts.tray.setToolTip(tooltip);
        lastTooltip = tooltip;
      }
      const items = trayMenu(snapshot, startAtLogin);
      const key = JSON.stringify(items);
      if (key === lastMenu) return;
      lastMenu = key;
      menu = parts.buildMenu(
        items.map((item) => ({
          label: item.label,
          enabled: item.enabled,
          type: item.type ?? 'normal',
          checked: item.checked,
          click: click[item.id] ? (menuItem) => click[item.id]?.(menuItem.checked) : undefined,
        })),
      );
      if (platform !== 'darwin') parts.tray.setContextMenu(menu);
    },
    /** macOS: shows the menu (on right click). */
    popUpMenu(): void {
      if (menu) parts.tray.popUpContextMenu?.(menu);
    },
  };
}

/** Applies one snapshot to the tray: the icon of its state, the tooltip and the menu. */
export function updateTray(
  parts: TrayParts,
  snapshot: StatusSnapshot,
  startAtLogin: boolean,
  actions: TrayActions,
): void {
  trayUpdater(parts, actions, 'linux').update(snapshot, startAtLogin);
}
