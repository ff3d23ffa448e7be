import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Settings } from '../../main/settings.ts';
import { followService } from '../../main/status-feed.ts';
import { emptySnapshot } from '../../main/status-model.ts';
import { saveScreenshot } from '../support/browser.ts';
import {
  openStatusWindow,
  playMain,
  startSimulatedTill,
  type SimulatedTill,
  type StatusWindowPage,
} from '../support/status-window-page.ts';

// The till's name and its back office in the status window, in Debian's Chromium, against a
// real service core and ledger: the name the owner gives the till in the back office arrives
// with the till's next heartbeat, and "Open the back office" asks main/ to open it.
const screenshots = fileURLToPath(new URL('../../test-results/renderer', import.meta.url));

let till: SimulatedTill;
let statusWindow: StatusWindowPage;
let page: Page;
let feed: ReturnType<typeof followService>;
let settings: Settings;
const invoked: { channel: string; args: unknown[] }[] = [];

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  till = await startSimulatedTill({ heartbeatEveryMs: 1_000 });
  settings = till.settings;
  statusWindow = await openStatusWindow(
    playMain({
      snapshot: () => feed.snapshot(),
      settings: () => settings,
      persist: (saved) => (settings = saved),
      service: () => till.service,
      invoked,
    }),
  );
  page = statusWindow.page;
  feed = followService(till.service, emptySnapshot(), statusWindow.push);
  await page.goto(statusWindow.url);
  await page.getByTestId('service-state').filter({ hasText: 'running' }).waitFor();
});
after(async () => {
  feed?.stop();
  await statusWindow?.close();
  await till?.close();
});

test('when the owner names this till in the back office, then the window shows the name beside its id, and the back office button opens it', async () => {
  await page.getByTestId('back-office').waitFor();
  assert.equal(
    await page.getByTestId('back-office-url').textContent(),
    `${till.ledger.url}/console`,
  );
  assert.equal(await page.getByTestId('till-name').isVisible(), false, 'no name yet');

  const { rows } = await till.ledger.db.query<{ customer_id: string }>(
    'SELECT customer_id FROM tills WHERE id = $1',
    [till.service.tillId],
  );
  assert.equal(rows.length, 1, 'the heartbeat made the till known');
  await till.ledger.db.query('UPDATE tills SET name = $2 WHERE id = $1', [
    till.service.tillId,
    'front counter',
  ]);
  await page.getByTestId('till-name').filter({ hasText: 'front counter' }).waitFor();
  assert.equal(await page.getByTestId('till-id').textContent(), till.service.tillId);
  await saveScreenshot(page, `${screenshots}/till-name-and-back-office.png`);

  await page.getByTestId('open-back-office').click();
  await page.getByTestId('copy-result').filter({ hasText: 'Opened' }).waitFor();
  assert.ok(invoked.some((call) => call.channel === 'app:open-back-office'));
});
