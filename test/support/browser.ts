import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium through playwright-core (never a downloaded browser). Without the
 * background-networking flags Chromium keeps trying hosts this machine cannot reach.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * A full-page screenshot, for a person to look at. On a busy machine Chromium now and then
 * refuses the first capture of a fresh page ("Unable to capture screenshot") and takes the same
 * picture when asked again (https://github.com/MarketSquare/robotframework-browser/issues/5237),
 * so that refusal alone is asked once more.
 */
export async function saveScreenshot(page: Page, path: string): Promise<void> {
  try {
    await page.screenshot({ path, fullPage: true });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('Unable to capture screenshot')) {
      throw error;
    }
    await page.screenshot({ path, fullPage: true });
  }
}
