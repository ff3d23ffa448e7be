import { chromium, type Browser } from 'playwright-core';

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
