import type { ElectronApplication, Page } from 'playwright-core';

const isStatusWindow = (page: Page) => page.url().endsWith('/renderer/index.html');

/**
 * The status window, whenever it opened. Not `waitForEvent('window')` after launch(): a first
 * run opens the window during start-up, possibly before the listener is there, and the event
 * is missed. Not `firstWindow()` either: on Windows the app's first window is the hidden one
 * that hears the end of the session (main/session-end.ts), which shows no page. Waits for the
 * condition (a window on our page), asking the app to show it once (a second launch does that).
 */
export async function statusWindow(app: ElectronApplication, ask = true): Promise<Page> {
  let asked = !ask;
  for (;;) {
    const open = app.windows().find(isStatusWindow);
    if (open) return open;
    if (!asked) {
      asked = true;
      await app.evaluate(({ app: electronApp }) => void electronApp.emit('second-instance'));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
