import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { StatusSnapshot } from '../../main/status-model.ts';
import { launchChromium } from './browser.ts';
import { serveFolder, type StaticServer } from './static-server.ts';

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
