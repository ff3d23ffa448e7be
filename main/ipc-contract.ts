import type { Settings, SettingsProblem } from './settings.ts';
import type { StatusSnapshot } from './status-model.ts';

/** The settings as the window edits them, and whether the key is stored encrypted. */
export interface SettingsView {
  settings: Settings;
  /** True when the OS offers no encryption: the key is stored as plain text (shown as a warning). */
  plainTextKeyStorage: boolean;
  /** Why the saved settings were set aside at start (defaults in use, key to enter again). */
  recovery: string | null;
}

export type SaveResult =
  { ok: true; restarted: boolean } | { ok: false; problems: SettingsProblem[] };

/**
 * The one IPC contract between main and the window's preload: channel -> signature. main/ipc.ts
 * handles exactly these; main/preload.cts exposes exactly these as verbs on window.cardWallet.
 */
export interface InvokeContract {
  'status:get': () => StatusSnapshot;
  'settings:get': () => SettingsView;
  'settings:save': (settings: Settings) => SaveResult;
  'service:copy-url': () => void;
}

/** Channels main pushes to the window. */
export interface PushContract {
  'status:changed': (snapshot: StatusSnapshot) => void;
}

export type InvokeChannel = keyof InvokeContract;
export type PushChannel = keyof PushContract;

/** What the preload exposes on `window.cardWallet` (the renderer's only way out). */
export interface CardWalletBridge {
  getStatus(): Promise<StatusSnapshot>;
  getSettings(): Promise<SettingsView>;
  saveSettings(settings: Settings): Promise<SaveResult>;
  copyServiceUrl(): Promise<void>;
  /** Calls `listener` with every new snapshot; returns the unsubscribe function. */
  onStatus(listener: (snapshot: StatusSnapshot) => void): () => void;
}
