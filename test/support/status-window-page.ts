import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { SettingsView } from '../../main/ipc-contract.ts';
import { saveSettings, type SaveSteps } from '../../main/save-settings.ts';
import {
  DEFAULT_SETTINGS,
  windowSettings,
  type Settings,
  type SettingsEdit,
} from '../../main/settings.ts';
import type { StatusSnapshot } from '../../main/status-model.ts';
import type { ConfigInput } from '../../service/config.ts';
import type { FakeIpcMain } from './electron-mock.ts';
import { launchChromium } from './browser.ts';
import { ROOMY_LIMITS } from './card-rig.ts';
import { serveFolder, type StaticServer } from './static-server.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from './test-ledger.ts';
import { startTestService, type TestService } from './test-service.ts';

const rendererFolder = fileURLToPath(new URL('../../renderer', import.meta.url));

// In the page: window.cardWallet over an exposed binding, verb for verb as main/preload.cts
// builds it over ipcRenderer.
const BRIDGE = `
  const invoke = (...args) => window.__cardWalletInvoke(...args);
  const listeners = new Set();
  window.cardWallet = Object.freeze({
    getStatus: () => invoke('status:get'),
    getSettings: () => invoke('settings:get'),
    saveSettings: (settings) => invoke('settings:save', settings),
    copyServiceUrl: () => invoke('service:copy-url'),
    placeSimulatedCard: (request) => invoke('simulator:place', request),
    takeAwaySimulatedCard: () => invoke('simulator:take-away'),
    putBackSimulatedCard: (request) => invoke('simulator:put-back', request),
    armSimulatorFault: (request) => invoke('simulator:fault', request),
    personalizeCard: () => invoke('card:personalize'),
    settleCard: () => invoke('card:settle'),
    copyApiKey: () => invoke('settings:copy-api-key'),
    unlockSettings: () => invoke('settings:unlock'),
    fixSmartCardService: () => invoke('reader:fix-service'),
    retryReader: () => invoke('reader:retry'),
    openLogFolder: () => invoke('app:open-log-folder'),
    openBackOffice: () => invoke('app:open-back-office'),
    installUpdate: () => invoke('update:install'),
    dismissNotice: (id) => invoke('notice:dismiss', id),
    onStatus: (listener) => { listeners.add(listener); return () => listeners.delete(listener); },
  });
  window.__cardWalletPush = (snapshot) => { for (const listener of listeners) listener(snapshot); };
`;

export interface StatusWindowPage {
  page: Page;
  /** The window's page, to `page.goto`. */
  url: string;
  /** Main's push of a new snapshot (the 'status:changed' channel). */
  push(snapshot: StatusSnapshot): void;
  close(): Promise<void>;
}

/**
 * The status window (renderer/) in Debian's Chromium, served over HTTP, with the test playing
 * main/'s part: `invoke` answers each channel of main/ipc-contract.ts. The page is not loaded
 * yet: the caller starts its status feed (pushing with `push`), then calls `page.goto(url)`.
 */
export async function openStatusWindow(
  invoke: (channel: string, args: unknown[]) => unknown,
): Promise<StatusWindowPage> {
  let server: StaticServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await serveFolder(rendererFolder, '127.0.0.1');
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 900, height: 1100 } });
    await page.exposeFunction('__cardWalletInvoke', (channel: string, ...args: unknown[]) =>
      invoke(channel, args),
    );
    await page.addInitScript(BRIDGE);
    const opened = { server, browser };
    return {
      page,
      url: `${server.origin}/index.html`,
      push(snapshot) {
        void page
          .evaluate(
            (next) =>
              (globalThis as unknown as { __cardWalletPush(s: unknown): void }).__cardWalletPush(
                next,
              ),
            snapshot,
          )
          .catch(() => undefined);
      },
      async close() {
        await opened.browser.close();
        await opened.server.close();
      },
    };
  } catch (error) {
    await browser?.close();
    await server?.close();
    throw error;
  }
}

/** main/'s side of the bridge, as a window test plays it. */
export interface MainSide {
  snapshot(): StatusSnapshot;
  settings(): Settings;
  /** main/'s store: keeps what was saved (may throw, as a full disk would). */
  persist(saved: Settings): void;
  /** The running service core that takes live settings. */
  service(): SaveSteps['service'];
  /** A restart of the service core (default: none; the tests record it). */
  restart?(next: Settings): Promise<void>;
  recovery?(): string | null;
  /** Why the stored keys cannot be read (keychain denied), as SettingsStore.locked says. */
  locked?(): string | null;
  plainTextKeyStorage?: boolean;
  /** Channels main/ answers with its own handlers, registered on this mock ipcMain. */
  handlers?: { ipcMain: FakeIpcMain; channels: (channel: string) => boolean };
  /** Answers to the window's actions (Retry, the reader fix...), by channel; default: done. */
  actions?: Partial<Record<string, (...args: unknown[]) => unknown>>;
  /** Every channel the window invoked, in order (with its argument). */
  invoked?: { channel: string; args: unknown[] }[];
}

/** What main/ answers to the window's actions when a test does not say otherwise. */
const DONE: Record<string, unknown> = {
  'settings:copy-api-key': true,
  'settings:unlock': { ok: true, message: 'The keys are readable again; the service is starting.' },
  'reader:fix-service': {
    ok: true,
    message: 'The smart-card service now starts automatically; the reader is being looked for.',
  },
  'reader:retry': undefined,
  'app:open-log-folder': { ok: true, message: '/home/till/.config/card-wallet-worker/logs' },
  'app:open-back-office': { ok: true, message: 'http://127.0.0.1:4179/console' },
  'update:install': true,
  'notice:dismiss': undefined,
};

/**
 * Answers the window's channels as main/ does: the status from the feed, the settings as the
 * window sees them, saves through main/'s own saveSettings, and the channels main/ has handlers
 * for through those handlers (with their argument and sender checks).
 */
export function playMain(side: MainSide): (channel: string, args: unknown[]) => Promise<unknown> {
  return async (channel, args) => {
    side.invoked?.push({ channel, args });
    if (side.handlers?.channels(channel)) return side.handlers.ipcMain.invoke(channel, {}, ...args);
    const action = side.actions?.[channel];
    if (action) return action(...args);
    if (channel in DONE) return DONE[channel];
    switch (channel) {
      case 'status:get':
        return side.snapshot();
      case 'settings:get':
        return {
          settings: windowSettings(side.settings()),
          plainTextKeyStorage: side.plainTextKeyStorage ?? false,
          recovery: side.recovery?.() ?? null,
          locked: side.locked?.() ?? null,
          masterKeyLocked: false,
        } satisfies SettingsView;
      case 'settings:save':
        return saveSettings(side.settings(), args[0] as SettingsEdit, {
          service: side.service(),
          persist: (saved) => side.persist(saved),
          restart: (next) => side.restart?.(next) ?? Promise.resolve(),
        });
      case 'service:copy-url':
        return undefined;
      default:
        throw new Error(`unknown channel ${channel}`);
    }
  };
}

/** Opens the settings' Advanced section (card keys, sector, simulator, updates), closed at first. */
export async function openAdvanced(page: Page): Promise<void> {
  const advanced = page.getByTestId('advanced');
  if (!(await advanced.evaluate((element) => (element as unknown as { open: boolean }).open)))
    await advanced.locator('summary').click();
}

/** A service core on the card simulator over a test ledger, and main/'s settings for it. */
export interface SimulatedTill {
  ledger: TestLedger;
  service: TestService;
  /** The settings main/ would hold for this service (its till id kept, as main/ keeps it). */
  settings: Settings;
  close(): Promise<void>;
}

/**
 * The service a window test plays main/'s part over when it needs no reader: the card
 * simulator, a ledger of its own, roomy rate limits; `config` adds to the service's config.
 */
export async function startSimulatedTill(
  config: Partial<ConfigInput> = {},
): Promise<SimulatedTill> {
  const ledger = await startTestLedger();
  try {
    const service = await startTestService(
      { cloudUrl: ledger.url, simulator: true, ...config },
      { limits: ROOMY_LIMITS },
    );
    return {
      ledger,
      service,
      settings: {
        ...DEFAULT_SETTINGS,
        apiKey: TEST_API_KEY,
        port: service.port,
        cloudUrl: ledger.url,
        simulator: true,
        cardMasterKey: config.cardMasterKey ?? null,
        tillId: service.tillId,
      },
      async close() {
        await service.close();
        await ledger.close();
      },
    };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}
