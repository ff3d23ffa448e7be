import type { SimulatorFault, SimulatorStatus } from '../service/card/simulator/card-simulator.ts';
import type { PersonalizeAnswer } from '../service/wallet/personalize-card.ts';
import type { SettleAnswer } from '../service/wallet/settle-card.ts';
import type { SettingsEdit, SettingsProblem, WindowSettings } from './settings.ts';
import type { StatusSnapshot } from './status-model.ts';

/** The settings as the window edits them, and whether the key is stored encrypted. */
export interface SettingsView {
  /** Without the card master key: the window is told only whether one is set. */
  settings: WindowSettings;
  /** True when the OS offers no encryption: the key is stored as plain text (shown as a warning). */
  plainTextKeyStorage: boolean;
  /** Why the saved settings were set aside at start (defaults in use, key to enter again). */
  recovery: string | null;
  /**
   * Why the stored keys cannot be read now (keychain denied, keyring locked): the settings
   * shown are the stored ones without the keys; Retry, or enter the key again and save.
   */
  locked: string | null;
  /** The stored card master key is among the locked keys: type it again or clear it to save. */
  masterKeyLocked: boolean;
}

/** What an action of the window (Retry, the smart-card service fix) came to. */
export interface ActionResult {
  ok: boolean;
  message: string;
}

/** A field's problem, or (field null) the save's own: storing the settings failed. */
export interface SaveProblem {
  field: SettingsProblem['field'] | null;
  message: string;
}

export type SaveResult = { ok: true; restarted: boolean } | { ok: false; problems: SaveProblem[] };

/** What the simulator panel sends: the bodies of the HTTP control API (docs/integrators.md). */
export interface SimulatorPlaceRequest {
  /** 8 or 14 hex digits; absent: a random 4-byte UID. */
  uid?: string;
  /** Absent: a blank card. */
  credits?: number;
}
export interface SimulatorPutBackRequest {
  cardId: string;
}
export interface SimulatorFaultRequest {
  fault: SimulatorFault;
  /** For `slow`: how late each exchange answers. */
  delayMs?: number;
}

/** A simulator action's outcome: the simulator after it, or why nothing changed. */
export type SimulatorResult = { ok: true; status: SimulatorStatus } | { ok: false; error: string };

/** A card button's outcome: its endpoint's answer, or why not in words. */
export type CardActionResult<T> = { ok: true; answer: T } | { ok: false; error: string };
/** Personalizing the card on the reader: the answer of POST /cards/personalize, or why not. */
export type PersonalizeResult = CardActionResult<PersonalizeAnswer>;
/** Settling the card on the reader: the answer of POST /cards/settle, or why not. */
export type SettleResult = CardActionResult<SettleAnswer>;

/**
 * The one IPC contract between main and the window's preload: channel -> signature. main/ipc.ts
 * handles exactly these; main/preload.cts exposes exactly these as verbs on window.cardWallet.
 */
export interface InvokeContract {
  'status:get': () => StatusSnapshot;
  'settings:get': () => SettingsView;
  'settings:save': (settings: SettingsEdit) => SaveResult;
  'service:copy-url': () => void;
  'simulator:place': (request: SimulatorPlaceRequest) => SimulatorResult;
  'simulator:take-away': () => SimulatorResult;
  'simulator:put-back': (request: SimulatorPutBackRequest) => SimulatorResult;
  'simulator:fault': (request: SimulatorFaultRequest) => SimulatorResult;
  'card:personalize': () => PersonalizeResult;
  'card:settle': () => SettleResult;
  /** Copies the API key to the clipboard (the window never needs to read it for that). */
  'settings:copy-api-key': () => boolean;
  /** Reads the locked keys again (after the operator unlocked the keychain or keyring). */
  'settings:unlock': () => ActionResult;
  'reader:fix-service': () => ActionResult;
  'reader:retry': () => void;
  'app:open-log-folder': () => ActionResult;
  /** Opens the back office in the browser: its setup link while there is one, else its page. */
  'app:open-back-office': () => ActionResult;
  'update:install': () => boolean;
  'notice:dismiss': (id: string) => void;
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
  saveSettings(settings: SettingsEdit): Promise<SaveResult>;
  copyServiceUrl(): Promise<void>;
  placeSimulatedCard(request: SimulatorPlaceRequest): Promise<SimulatorResult>;
  takeAwaySimulatedCard(): Promise<SimulatorResult>;
  putBackSimulatedCard(request: SimulatorPutBackRequest): Promise<SimulatorResult>;
  armSimulatorFault(request: SimulatorFaultRequest): Promise<SimulatorResult>;
  personalizeCard(): Promise<PersonalizeResult>;
  settleCard(): Promise<SettleResult>;
  copyApiKey(): Promise<boolean>;
  unlockSettings(): Promise<ActionResult>;
  fixSmartCardService(): Promise<ActionResult>;
  retryReader(): Promise<void>;
  openLogFolder(): Promise<ActionResult>;
  openBackOffice(): Promise<ActionResult>;
  installUpdate(): Promise<boolean>;
  dismissNotice(id: string): Promise<void>;
  /** Calls `listener` with every new snapshot; returns the unsubscribe function. */
  onStatus(listener: (snapshot: StatusSnapshot) => void): () => void;
}
