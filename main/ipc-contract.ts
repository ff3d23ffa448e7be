import type { StatusSnapshot } from './status-model.ts';

/**
 * The one IPC contract between main and the window's preload: channel -> signature. main/ipc.ts
 * handles exactly these; main/preload.cts exposes exactly these as verbs on window.cardWallet.
 */
export interface InvokeContract {
  'status:get': () => StatusSnapshot;
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
  copyServiceUrl(): Promise<void>;
  /** Calls `listener` with every new snapshot; returns the unsubscribe function. */
  onStatus(listener: (snapshot: StatusSnapshot) => void): () => void;
}
