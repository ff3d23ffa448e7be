import { join } from 'node:path';
import type { TrayState } from './tray-state.ts';

/**
 * The app's Windows identity (AppUserModelID): electron-builder.yml's appId, which the NSIS
 * installer gives its shortcuts. Without app.setAppUserModelId the running app has another
 * one, and the taskbar neither groups it with its shortcut nor pins it right.
 */
export const APP_USER_MODEL_ID = 'com.card-wallet-worker.tray';

/**
 * The tray icon of a state: an ICO on Windows (16 to 48 px, sharp at 125% and 150% scaling;
 * Electron's Tray docs recommend ICO there), else the PNG with its @2x beside it.
 */
export function trayIconFile(assets: string, state: TrayState, platform: NodeJS.Platform): string {
  return join(assets, `tray-${state}.${platform === 'win32' ? 'ico' : 'png'}`);
}
