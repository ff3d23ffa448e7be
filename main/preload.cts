// The window's only way out: verbs on window.cardWallet, each one channel of the IPC contract
// (main/ipc-contract.ts). Sandboxed preloads are CommonJS and may require only 'electron'.
// ipcRenderer itself is never exposed.
import electron = require('electron');
import type { CardWalletBridge } from './ipc-contract.ts';

const { contextBridge, ipcRenderer } = electron;

type Snapshot = unknown;

// Checked against the contract: a verb missing or one too many does not compile.
const bridge = {
  getStatus: () => ipcRenderer.invoke('status:get'),
  getSettings: () => ipcRenderer.invoke('settings:get'),
  saveSettings: (settings: unknown) => ipcRenderer.invoke('settings:save', settings),
  copyServiceUrl: () => ipcRenderer.invoke('service:copy-url'),
  placeSimulatedCard: (request: unknown) => ipcRenderer.invoke('simulator:place', request),
  takeAwaySimulatedCard: () => ipcRenderer.invoke('simulator:take-away'),
  putBackSimulatedCard: (request: unknown) => ipcRenderer.invoke('simulator:put-back', request),
  armSimulatorFault: (request: unknown) => ipcRenderer.invoke('simulator:fault', request),
  personalizeCard: () => ipcRenderer.invoke('card:personalize'),
  settleCard: () => ipcRenderer.invoke('card:settle'),
  copyApiKey: () => ipcRenderer.invoke('settings:copy-api-key'),
  unlockSettings: () => ipcRenderer.invoke('settings:unlock'),
  fixSmartCardService: () => ipcRenderer.invoke('reader:fix-service'),
  retryReader: () => ipcRenderer.invoke('reader:retry'),
  openLogFolder: () => ipcRenderer.invoke('app:open-log-folder'),
  openBackOffice: () => ipcRenderer.invoke('app:open-back-office'),
  installUpdate: () => ipcRenderer.invoke('update:install'),
  dismissNotice: (id: unknown) => ipcRenderer.invoke('notice:dismiss', id),
  onStatus: (listener: (snapshot: Snapshot) => void) => {
    const forward = (_event: unknown, snapshot: Snapshot) => listener(snapshot);
    ipcRenderer.on('status:changed', forward);
    return () => ipcRenderer.removeListener('status:changed', forward);
  },
} satisfies Record<keyof CardWalletBridge, unknown>;

contextBridge.exposeInMainWorld('cardWallet', bridge);
