import type { Menu, MenuItemConstructorOptions, NativeImage, Tray } from 'electron';
import type { StatusSnapshot } from './status-model.ts';
import { trayMenu, trayState, trayTooltip, type TrayState } from './tray-state.ts';

export interface TrayActions {
  openWindow(): void;
  copyUrl(): void;
  setStartAtLogin(enabled: boolean): void;
  quit(): void;
}

export interface TrayParts {
  tray: Pick<Tray, 'setImage' | 'setToolTip' | 'setContextMenu'>;
  icon: (state: TrayState) => NativeImage;
  buildMenu: (template: MenuItemConstructorOptions[]) => Menu;
}

/** Applies a snapshot to the tray: the icon of its state, the tooltip and the menu. */
export function updateTray(
  parts: TrayParts,
  snapshot: StatusSnapshot,
  startAtLogin: boolean,
  actions: TrayActions,
): void {
  parts.tray.setImage(parts.icon(trayState(snapshot)));
  parts.tray.setToolTip(trayTooltip(snapshot));
  const click: Record<string, (checked: boolean) => void> = {
    'open-window': () => actions.openWindow(),
    'copy-url': () => actions.copyUrl(),
    'start-at-login': (checked) => actions.setStartAtLogin(checked),
    quit: () => actions.quit(),
  };
  parts.tray.setContextMenu(
    parts.buildMenu(
      trayMenu(snapshot, startAtLogin).map((item) => ({
        label: item.label,
        enabled: item.enabled,
        type: item.type ?? 'normal',
        checked: item.checked,
        click: click[item.id] ? (menuItem) => click[item.id]?.(menuItem.checked) : undefined,
      })),
    ),
  );
}
