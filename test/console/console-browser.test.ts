import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { createOperator } from '../../cloud/operators/accounts.ts';
import { dayReport } from '../../cloud/reports/day-report.ts';
import { dayReportCsv } from '../../cloud/reports/report-csv.ts';
import { readShop, setTimeZone } from '../../cloud/shops/shops.ts';
import { renameTill } from '../../cloud/tills/tills.ts';
import { LedgerClient } from '../cloud/ledger-client.ts';
import { launchChromium } from '../support/browser.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

// The back office in Debian's Chromium against a real ledger: an owner logs in, reads a day
// whose movements are known and whose totals must be the ledger's, downloads its CSV, settles a
// held card and revokes a key; staff cannot do what they must not; nothing opens without a
// session; a forged cross-site post is refused. Every page is looked at at 1280 and 390 px
// (screenshots in test-results/console) and checked by axe-core: no serious violation.

const screenshots = fileURLToPath(new URL('../../test-results/console', import.meta.url));
const PASSWORD = 'correct horse battery';
const DAY = '2026-06-10';
const FRONT = '11111111-1111-4111-8111-111111111111';
const BACK = '22222222-2222-4222-8222-222222222222';
const CLI = { actor: { kind: 'cli' as const, user: 'test' }, operator: null };

let folder: string;
let server: LedgerServer;
let browser: Browser;
let shop: string;
let chartShop: string;
let apiKey: string;
let spareKey: string;
let heldId: string;

/** A movement posted by a till over the contract API, its card written at `occurredAt`. */
async function sale(
  till: string,
  kind: 'recharge' | 'discharge',
  credits: number,
  occurredAt: string,
  cardId: string,
): Promise<void> {
  const client = new LedgerClient(server.url, apiKey);
  const id = randomUUID();
  const created = await client.create({ id, kind, cardId, credits, tillId: till });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const posted = await client.resolve(id, 'post', { tillId: till, occurredAt });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
}

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  folder = await freshPgliteFolder();
  server = await startLedgerServer({ database: folder, log: { error: () => undefined } });
  const by = { actor: CLI.actor, reason: 'set-up' };
  shop = (
    await addCustomer(server.db, { name: 'Laverie du Parc', credits: 5_000, creditCost: 5000n })
  ).customerId;
  await setTimeZone(server.db, shop, 'Europe/Brussels', by);
  apiKey = (await issueKey(server.db, { customerId: shop })).apiKey;
  spareKey = (await issueKey(server.db, { customerId: shop })).apiKey;
  await createOperator(server.db, CLI, {
    login: 'anna',
    name: 'Anna Owner',
    role: 'owner',
    shops: [shop],
    password: PASSWORD,
  });
  await createOperator(server.db, CLI, {
    login: 'sam',
    name: 'Sam Staff',
    role: 'staff',
    shops: [shop],
    password: PASSWORD,
  });

  // The day: two tills, recharges and a payout (the payout's card carried 40 credits).
  await sale(FRONT, 'recharge', 30, '2026-06-10T07:15:00Z', '04A10001');
  await sale(FRONT, 'recharge', 12, '2026-06-10T09:40:00Z', '04A10002');
  await sale(BACK, 'recharge', 50, '2026-06-10T15:05:00Z', '04A10003');
  await sale(FRONT, 'recharge', 40, '2026-06-09T18:00:00Z', '04A10004');
  await sale(BACK, 'discharge', 40, '2026-06-10T16:30:00Z', '04A10004');
  // Just outside the day, either side (local midnight is 22:00 UTC in summer).
  await sale(FRONT, 'recharge', 7, '2026-06-09T21:59:59Z', '04A10005');
  await sale(FRONT, 'recharge', 9, '2026-06-10T22:00:00Z', '04A10006');
  await renameTill(server.db, shop, FRONT, 'front counter', by);
  await renameTill(server.db, shop, BACK, 'back room', by);
  // A payout whose card was pulled mid-write: pending, its card held.
  heldId = randomUUID();
  await sale(FRONT, 'recharge', 25, '2026-06-10T11:00:00Z', '04A100AA');
  const held = await new LedgerClient(server.url, apiKey).create({
    id: heldId,
    kind: 'discharge',
    cardId: '04A100AA',
    credits: 25,
    tillId: BACK,
    cardBefore: 'classic:v1:25:3:0',
  });
  assert.equal(held.status, 201, JSON.stringify(held.body));
  // Started on the day, like the rest.
  await server.db.query(`UPDATE movements SET created_at = '2026-06-10T11:05:00Z' WHERE id = $1`, [
    heldId,
  ]);
  // A heartbeat from each till; the back room's was long ago (quiet).
  for (const till of [FRONT, BACK]) {
    const beat = await new LedgerClient(server.url, apiKey).post(`/v1/tills/${till}/heartbeat`, {
      version: '2.1.0',
      reader: {
        state: till === FRONT ? 'ready' : 'no-reader',
        name: till === FRONT ? 'ACS ACR122U' : null,
        problem: null,
      },
      pendingMovements: 0,
      waitingMovements: till === BACK ? 1 : 0,
    });
    assert.equal(beat.status, 200, JSON.stringify(beat.body));
  }
  await server.db.query(
    `UPDATE tills SET last_seen_at = now() - interval '3 hours' WHERE id = $1`,
    [BACK],
  );

  // A second shop of Anna's with a year of sales, for the chart.
  chartShop = (
    await addCustomer(server.db, { name: 'Laverie de la Gare', credits: 0, creditCost: 5000n })
  ).customerId;
  await setTimeZone(server.db, chartShop, 'Europe/Brussels', by);
  await server.db.query(
    'INSERT INTO operator_shops (customer_id, operator_id) SELECT $1, id FROM operators WHERE login = $2',
    [chartShop, 'anna'],
  );
  await server.db.query(
    `INSERT INTO movements (customer_id, id, kind, card_id, state, credits, credit_cost, amount, paid_amount,
                           created_at, resolved_at, occurred_at, till_id)
     SELECT $1, gen_random_uuid(), CASE WHEN n % 9 = 0 THEN 'discharge' ELSE 'recharge' END, '04B00001', 'posted',
            credits, 0.5, credits * 0.5, credits * 0.5, t, t, t, $2
     FROM (SELECT n, 10 + (n * 7919) % 60 AS credits,
                  (date '2026-06-10' - 364 + n / 12) + make_interval(hours => 8 + n % 12)
                  - interval '2 hours' AS t
           FROM generate_series(0, 365 * 12 - 1) AS n
           WHERE (n / 12) % 7 <> 3 OR n % 12 < 3) days`,
    [chartShop, FRONT],
  );
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

async function logIn(context: BrowserContext, login: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.url}/console/login`);
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((url) => !url.pathname.endsWith('/login'));
  return page;
}

/** axe-core on the page as it is: no serious or critical violation. */
async function accessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  assert.deepEqual(
    serious.map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join('; ')})`,
    ),
    [],
    what,
  );
}

describe('an owner in the back office', () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    page = await logIn(context, 'anna');
  });
  after(() => context?.close());

  test('when the owner logs in, then the console opens on the shop, and says which till has gone quiet', async () => {
    assert.ok(page.url().endsWith('/console/shops'), page.url()); // two shops: the list first
    await page.getByRole('link', { name: 'Laverie du Parc' }).click();
    await page.getByRole('heading', { name: 'Today' }).waitFor();
    const quiet = await page.getByTestId('quiet-tills').textContent();
    assert.match(quiet ?? '', /back room/);
    assert.doesNotMatch(quiet ?? '', /front counter/);
  });

  test('when the owner opens a day with known movements, then each till’s and the shop’s figures are the ledger’s own', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/day?date=${DAY}`);
    const expected = await dayReport(server.db, await readShop(server.db, shop), DAY);
    assert.deepEqual(
      [expected.totals.eurosTaken, expected.totals.eurosPaidOut, expected.totals.netCashExpected],
      ['58.50', '20.00', '38.50'],
      'the day as the movements make it (30+12+50+25 credits in, 40 out, at 0.50)',
    );
    const figure = (name: string) => page.locator(`[data-figure="${name}"]`).textContent();
    assert.equal(await figure('taken'), '€58.50');
    assert.equal(await figure('paid-out'), '€20.00');
    assert.equal(await figure('net'), '€38.50');
    const rows = await page.getByTestId('till-table').locator('tbody tr').allTextContents();
    const clean = rows.map((row) => row.replace(/\s+/g, ' ').trim());
    assert.deepEqual(clean, [
      'back room €5.00 1 50 €25.00 1 40 €20.00 0',
      'front counter €33.50 3 67 €33.50 0 0 €0.00 0',
    ]);
    assert.match((await page.getByTestId('pending').textContent()) ?? '', /04A100AA/);
  });

  test('when the owner downloads the CSV, then it is the ledger’s day report, row for row', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/day?date=${DAY}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `day-report-laverie-du-parc-${DAY}.csv`);
    const saved = await download.path();
    const expected = dayReportCsv(await dayReport(server.db, await readShop(server.db, shop), DAY));
    assert.equal(readFileSync(saved, 'utf8'), expected);
  });

  test('when the owner settles a held card without it, saying why, then the movement is decided, the card waits for a till to read it, and the audit log says who and why', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/cards`);
    const held = page.getByTestId(`held-${heldId}`);
    await held.getByLabel(/What the decision rests on/).fill('card lost by the customer');
    await held.getByRole('button', { name: /Void/ }).click();
    await page.getByRole('status').filter({ hasText: 'is voided' }).waitFor();
    const movement = await new LedgerClient(server.url, apiKey).movement(heldId);
    assert.equal(movement.body.state, 'voided');
    assert.equal(movement.body.evidence, 'card lost by the customer');
    assert.equal(movement.body.awaitsCard, true);
    await page.goto(`${server.url}/console/shops/${shop}/audit`);
    const audit = (await page.getByTestId('audit').locator('tbody tr').first().textContent()) ?? '';
    assert.match(
      audit.replace(/\s+/g, ' '),
      /operator:anna movement\.void .*card lost by the customer/,
    );
  });

  test('when the owner revokes a key, saying why, then the key opens nothing from then on', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/keys`);
    const fingerprint = createHash('sha256').update(spareKey).digest('hex').slice(0, 8);
    await page
      .getByRole('textbox', { name: `Why revoke key ${fingerprint}` })
      .fill('the old till was sold');
    await page.getByRole('button', { name: `Revoke key ${fingerprint}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Key ${fingerprint} is revoked` })
      .waitFor();
    const answer = await new LedgerClient(server.url, spareKey).customer();
    assert.deepEqual(
      [answer.status, answer.body],
      [401, { error: 'Unauthorized: invalid api key' }],
    );
    assert.equal((await new LedgerClient(server.url, apiKey).customer()).status, 200);
  });

  test('when a page of another site posts a form to the console, then the session does not go with it, and a form stripped of its token is refused', async () => {
    const target = `${server.url}/console/shops/${shop}/keys/issue`;
    const evil = (host: string) =>
      new Promise<Server>((resolve) => {
        const site = createServer((_request, response) => {
          response.writeHead(200, { 'Content-Type': 'text/html' });
          response.end(
            `<!doctype html><form method="post" action="${target}"><input name="reason" value="attacker"></form><script>document.forms[0].submit()</script>`,
          );
        });
        site.listen(0, host, () => resolve(site));
      });
    const keys = async () =>
      (await server.db.query('SELECT 1 FROM api_keys WHERE customer_id = $1', [shop])).rows.length;
    const before = await keys();
    for (const host of ['127.0.0.3', '127.0.0.1']) {
      // 127.0.0.3 is another site (no SameSite=Strict cookie goes); 127.0.0.1 on another port
      // is the same site (the cookies go), and only the CSRF token stops it.
      const site = await evil(host);
      try {
        const attacked = await context.newPage();
        const answer = attacked.waitForResponse((response) => response.url() === target);
        await attacked.goto(`http://${host}:${(site.address() as AddressInfo).port}/`);
        const status = (await answer).status();
        assert.equal(status, host === '127.0.0.3' ? 401 : 403, host);
        await attacked.close();
      } finally {
        site.close();
      }
    }
    // In the console itself, with the token taken out of the form:
    await page.goto(`${server.url}/console/shops/${shop}/keys`);
    await page
      .locator('form[action$="/keys/issue"] input[name="_csrf"]')
      .evaluate((input) => input.remove());
    await page.locator('form[action$="/keys/issue"] input[name="reason"]').fill('no token');
    await page.getByRole('button', { name: 'Issue a new key' }).click();
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    assert.equal(await keys(), before, 'no key was issued');
  });
});

describe('staff', () => {
  test('when staff log in, then they see their shop’s day and nothing else, and the owner’s pages refuse them', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await logIn(context, 'sam');
      assert.ok(page.url().endsWith(`/console/shops/${shop}/day`), page.url());
      const menu = await page
        .getByRole('navigation', { name: 'Laverie du Parc' })
        .getByRole('link')
        .allTextContents();
      assert.deepEqual(
        menu.map((item) => item.trim()),
        ['Day report'],
      );
      assert.equal(
        await page.locator('form[method="post"]:not([action="/console/logout"])').count(),
        0,
      );
      for (const path of ['keys', 'cards', 'people', 'settings', 'tills']) {
        const response = await page.goto(`${server.url}/console/shops/${shop}/${path}`);
        assert.equal(response?.status(), 403, path);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      }
      await page.screenshot({ path: `${screenshots}/staff-refused-1280.png`, fullPage: true });
    } finally {
      await context.close();
    }
  });
});

describe('without a session', () => {
  test('when a console page is opened without logging in, then the log-in page comes instead, and after it the page asked for', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/console/shops/${shop}/keys`);
      assert.ok(page.url().startsWith(`${server.url}/console/login?next=`), page.url());
      assert.equal(await page.getByText('Issue a new key').count(), 0);
      await page.getByLabel('Login').fill('anna');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${server.url}/console/shops/${shop}/keys`);
    } finally {
      await context.close();
    }
  });
});

describe('every page, at 1280 and 390 px', () => {
  const pages = (): [string, string][] => [
    ['today', `/console/shops/${shop}`],
    ['day-report', `/console/shops/${shop}/day?date=${DAY}`],
    ['chart-30', `/console/shops/${chartShop}/chart?days=30&date=${DAY}`],
    ['chart-365', `/console/shops/${chartShop}/chart?days=365&date=${DAY}`],
    ['tills', `/console/shops/${shop}/tills`],
    ['movements', `/console/shops/${shop}/movements`],
    ['movement', `/console/shops/${shop}/movements/${heldId}`],
    ['held-and-flagged', `/console/shops/${shop}/cards`],
    ['keys', `/console/shops/${shop}/keys`],
    ['settings', `/console/shops/${shop}/settings`],
    ['people', `/console/shops/${shop}/people`],
    ['audit', `/console/shops/${shop}/audit`],
    ['account', '/console/account'],
    ['shops', '/console/shops'],
  ];

  for (const width of [1280, 390]) {
    test(`when each page is shown ${width} px wide, then it has no serious accessibility violation and nothing wider than the screen`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        const login = await context.newPage();
        await login.goto(`${server.url}/console/login`);
        await login.screenshot({ path: `${screenshots}/login-${width}.png`, fullPage: true });
        await accessible(login, 'login');
        const page = await logIn(context, 'anna');
        const problems: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        for (const [name, path] of pages()) {
          const response = await page.goto(`${server.url}${path}`);
          assert.equal(response?.status(), 200, name);
          if (name.startsWith('chart')) await page.locator('#takings-chart canvas').waitFor();
          await page.screenshot({ path: `${screenshots}/${name}-${width}.png`, fullPage: true });
          await accessible(page, name);
          const overflow = await page.evaluate<number>(
            'document.documentElement.scrollWidth - window.innerWidth',
          );
          assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the screen`);
        }
        assert.deepEqual(problems, [], 'no script error and no CSP refusal in the console');
      } finally {
        await context.close();
      }
    });
  }
});
