import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addCustomer, issueKey, topUp } from '../../cloud/admin.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { createOperator } from '../../cloud/operators/accounts.ts';
import { dayReport } from '../../cloud/reports/day-report.ts';
import { dayReportCsv } from '../../cloud/reports/report-csv.ts';
import { readShop, setTimeZone } from '../../cloud/shops/shops.ts';
import { renameTill } from '../../cloud/tills/tills.ts';
import { LedgerClient } from '../cloud/ledger-client.ts';
import { launchChromium, saveScreenshot } from '../support/browser.ts';
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
let stolenFloat: string;
let compensationId: string;

/** A movement posted by a till over the contract API, its card written at `occurredAt`. */
async function sale(
  till: string,
  kind: 'recharge' | 'discharge',
  credits: number,
  occurredAt: string,
  cardId: string,
): Promise<string> {
  const client = new LedgerClient(server.url, apiKey);
  const id = randomUUID();
  const created = await client.create({ id, kind, cardId, credits, tillId: till });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const posted = await client.resolve(id, 'post', { tillId: till, occurredAt });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  return id;
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
  const payout = await sale(BACK, 'discharge', 40, '2026-06-10T16:30:00Z', '04A10004');
  // A compensation of the payout, started and voided (the card showed the payout after all).
  compensationId = randomUUID();
  const compensation = await new LedgerClient(server.url, apiKey).create({
    id: compensationId,
    kind: 'recharge',
    cardId: '04A10004',
    credits: 40,
    tillId: BACK,
    compensates: payout,
  });
  assert.equal(compensation.status, 201, JSON.stringify(compensation.body));
  const voided = await new LedgerClient(server.url, apiKey).resolve(compensationId, 'void', {
    tillId: BACK,
  });
  assert.equal(voided.status, 200, JSON.stringify(voided.body));
  await server.db.query(`UPDATE movements SET created_at = '2026-06-10T16:35:00Z' WHERE id = $1`, [
    compensationId,
  ]);
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
      pendingMovements: till === BACK ? 1 : 0,
      waitingMovements: till === BACK ? 1 : 0,
      // The front counter sells from a float and has three sales to report.
      float:
        till === FRONT
          ? { credits: 180, unreportedMovements: 3, unreportedCredits: 24, offlineSince: null }
          : null,
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
  // A cashier undid one of the last day's recharges: its euros went back to the customer.
  await server.db.query(
    `INSERT INTO movements (customer_id, id, kind, card_id, state, credits, credit_cost, amount,
                           paid_amount, created_at, resolved_at, occurred_at, till_id, refunds)
     SELECT customer_id, gen_random_uuid(), 'refund', card_id, 'posted', credits, credit_cost,
            amount, amount, occurred_at + interval '5 minutes', occurred_at + interval '5 minutes',
            occurred_at + interval '5 minutes', till_id, id
     FROM movements
     WHERE customer_id = $1 AND kind = 'recharge' AND occurred_at >= $2::date
     ORDER BY occurred_at LIMIT 1`,
    [chartShop, DAY],
  );
  // A till of the second shop was stolen: the operator closed its float, writing 40 off.
  await topUp(server.db, chartShop, 500, { actor: CLI.actor, reason: 'opening balance' });
  await setFloatSettings(server.db, chartShop, { size: 100 }, by);
  const floats = new Floats(server.db);
  const { float } = await floats.open(chartShop, { tillId: BACK, requestId: randomUUID() });
  stolenFloat = float.id;
  await floats.closeByOperator(
    chartShop,
    float.id,
    { movements: [], writeOff: 40, reason: 'till stolen overnight' },
    CLI.actor,
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
    // The day's lists and the Movements page share one row: a compensation is marked so.
    const voided = page.getByTestId('voided').locator('tbody tr');
    const compensationRow = voided.filter({ hasText: '04A10004' });
    const dayRow = ((await compensationRow.textContent()) ?? '').replace(/\s+/g, ' ').trim();
    assert.match(dayRow, /back room recharge \(compensation\) 04A10004 40 €20\.00 voided/);
    await page.goto(`${server.url}/console/shops/${shop}/movements?card=04A10004`);
    const listed = page
      .getByTestId('movements')
      .locator('tbody tr')
      .filter({ hasText: 'compensation' });
    assert.equal(((await listed.textContent()) ?? '').replace(/\s+/g, ' ').trim(), dayRow);
  });

  test('when the owner opens today, then the tills table shows each float, and the report lists the float sales not reported yet as of the till’s heartbeat; a past day lists none', async () => {
    await page.goto(`${server.url}/console/shops/${shop}`);
    const rows = await page.getByTestId('tills').locator('tbody tr').allTextContents();
    assert.deepEqual(
      rows.map((row) =>
        row
          .replace(/\s+/g, ' ')
          .trim()
          .replace(/ (heard just now|heard \d+ min ago|quiet: last heard \d+ h ago)/, ''),
      ),
      [
        'back room No card reader no float 1 1',
        'front counter Ready (ACS ACR122U) 180 credits left; 3 sales (24 credits) not reported yet 0 0',
      ],
    );
    assert.match(
      ((await page.getByTestId('pending-movements').textContent()) ?? '').replace(/\s+/g, ' '),
      /^ ?1 holds its card: a till settles each when the card is back/,
    );
    await page.goto(`${server.url}/console/shops/${shop}/day`);
    const float = await page.getByTestId('float-not-reported').locator('tr').allTextContents();
    const beat = await server.db.query<{ last_seen_at: Date }>(
      'SELECT last_seen_at FROM tills WHERE id = $1',
      [FRONT],
    );
    const asOf = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Brussels',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    }).format(beat.rows[0]?.last_seen_at);
    assert.deepEqual(
      float.map((row) => row.replace(/\s+/g, ' ').trim()),
      ['Till Sales Credits As of', `front counter 3 24 ${asOf}`, 'All tills 3 24'],
    );
    await page.goto(`${server.url}/console/shops/${shop}/day?date=${DAY}`);
    assert.equal(await page.getByTestId('float-not-reported').count(), 0);
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

  test("when another till's compensation has been pending for more than 24 hours, then the held cards page marks it as needing a decision, and only it", async () => {
    const recharge = await sale(FRONT, 'recharge', 12, '2026-05-01T10:00:00Z', '04A100CC');
    const client = new LedgerClient(server.url, apiKey);
    const fixId = randomUUID();
    // The back room read the card without the recharge on it and never posted its payout.
    const fix = await client.create({
      id: fixId,
      kind: 'discharge',
      cardId: '04A100CC',
      credits: 12,
      tillId: BACK,
      compensates: recharge,
    });
    assert.equal(fix.status, 201, JSON.stringify(fix.body));
    await server.db.query(
      `UPDATE movements SET created_at = now() - interval '25 hours' WHERE id = $1`,
      [fixId],
    );
    try {
      await page.goto(`${server.url}/console/shops/${shop}/cards`);
      const mark = page.getByTestId(`needs-decision-${fixId}`);
      await mark.waitFor();
      const text = ((await mark.textContent()) ?? '').replace(/\s+/g, ' ');
      assert.match(text, /Needs a decision\. A compensation back room made/);
      assert.match(text, /Settle the card on the reader at any till/);
      assert.equal(await page.locator('[data-testid^="needs-decision-"]').count(), 1);
      await accessible(page, 'held cards with a compensation due');
    } finally {
      const voided = await client.resolve(fixId, 'void', { tillId: BACK });
      assert.equal(voided.status, 200, JSON.stringify(voided.body));
    }
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

describe('the takings chart', () => {
  test('when a day has a cashier’s refund, then the chart’s net cash is taken − paid out − refunded, as the day report counts it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await logIn(context, 'anna');
      await page.goto(`${server.url}/console/shops/${chartShop}/chart?days=30&date=${DAY}`);
      await page.locator('#takings-chart canvas').waitFor();
      const { totals } = await dayReport(server.db, await readShop(server.db, chartShop), DAY);
      assert.notEqual(totals.eurosRefunded, '0.00', 'the day has a refund');
      const row = page.getByTestId('takings-table').locator('tbody tr').first();
      const cells = (await row.locator('td').allTextContents()).map((cell) => cell.trim());
      assert.deepEqual(cells.slice(0, 5), [
        DAY,
        `€${totals.eurosTaken}`,
        `€${totals.eurosPaidOut}`,
        `€${totals.eurosRefunded}`,
        `€${totals.netCashExpected}`,
      ]);
      const lead = ((await page.getByTestId('takings-totals').textContent()) ?? '').replace(
        /\s+/g,
        ' ',
      );
      assert.match(lead, /refunded; net cash €[\d,]+\.\d\d\./, lead);
    } finally {
      await context.close();
    }
  });
  test('when nothing on the chart is pointed at, then its legend gives the newest day’s figures (the newest week’s over a year), and again once the pointer leaves', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await logIn(context, 'anna');
      await page.goto(`${server.url}/console/shops/${chartShop}/chart?days=30&date=${DAY}`);
      const canvas = page.locator('#takings-chart canvas');
      await canvas.waitFor();
      const { totals } = await dayReport(server.db, await readShop(server.db, chartShop), DAY);
      const legend = async () =>
        (await page.locator('#takings-chart .u-legend .u-value').allTextContents()).map((text) =>
          text.replace(/\s+/g, ' ').trim(),
        );
      const newest = ['10 Jun 2026', `€${totals.eurosTaken}`];
      assert.deepEqual((await legend()).slice(0, 2), newest);
      const box = await canvas.boundingBox();
      assert.ok(box, 'the chart is drawn');
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
      const pointed = await legend();
      assert.notEqual(
        pointed[0],
        newest[0],
        `an earlier day is pointed at: ${pointed.join(' | ')}`,
      );
      await page.mouse.move(box.x + box.width / 2, box.y + box.height + 150);
      assert.deepEqual((await legend()).slice(0, 2), newest);

      // A year is drawn a bar a week: the newest week began on Monday 8 June, and the span
      // ends on its Wednesday, so its bar holds three days and says so.
      await page.goto(`${server.url}/console/shops/${chartShop}/chart?days=365&date=${DAY}`);
      await canvas.waitFor();
      const labels = await page.locator('#takings-chart .u-legend .u-label').allTextContents();
      assert.equal(labels[0]?.trim(), 'Week', labels.join(' | '));
      assert.equal((await legend())[0], '8 – 10 Jun 2026 (3 days)');
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
      // A whole week inside the span: "15 – 21 Jun 2025", or "29 Jun – 5 Jul 2025".
      assert.match((await legend())[0] ?? '', /^\d+( \w{3})? – \d+ \w{3} 20\d\d$/);

      // Ending today (the shop's local day), the newest day and week are still being sold into.
      for (const days of [30, 365]) {
        await page.goto(`${server.url}/console/shops/${chartShop}/chart?days=${days}`);
        await canvas.waitFor();
        assert.match((await legend())[0] ?? '', / \(so far\)$/, `${days} days`);
      }
    } finally {
      await context.close();
    }
  });
});

describe('the audit page', () => {
  test('when an operator changed float settings and closed a float with a write-off, then the audit page shows both, the write-off with its reason', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await logIn(context, 'anna');
      await page.goto(`${server.url}/console/shops/${chartShop}/audit`);
      const rows = await page.getByTestId('audit').locator('tbody tr').allTextContents();
      const clean = rows.map((row) => row.replace(/\s+/g, ' ').trim());
      assert.match(
        clean[0] ?? '',
        new RegExp(
          `cli:test float\\.write-off float:${stolenFloat} till stolen overnight .*writtenOff: 40, returned: 60`,
        ),
        clean.join('\n'),
      );
      assert.match(clean[1] ?? '', /cli:test float\.settings .*"size":100/, clean.join('\n'));
    } finally {
      await context.close();
    }
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
      await saveScreenshot(page, `${screenshots}/staff-refused-1280.png`);
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
    ['day-without-sales', `/console/shops/${shop}/day?date=2026-06-01`],
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
        await saveScreenshot(login, `${screenshots}/login-${width}.png`);
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
          await saveScreenshot(page, `${screenshots}/${name}-${width}.png`);
          await accessible(page, name);
          const overflow = await page.evaluate<number>(
            'document.documentElement.scrollWidth - window.innerWidth',
          );
          assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the screen`);
          // Every tab of the shop's menu is on the screen (they wrap), and a table's empty
          // message is in sight inside its scroll region.
          const cut = await page.evaluate<string[]>(`[
            ...[...document.querySelectorAll('.shop-menu a')]
              .filter((a) => a.getBoundingClientRect().right > window.innerWidth)
              .map((a) => 'tab ' + a.textContent.trim()),
            ...[...document.querySelectorAll('td.empty > span')]
              .filter((span) => {
                const wrap = span.closest('.table-wrap').getBoundingClientRect();
                const box = span.getBoundingClientRect();
                return box.left < wrap.left || box.right > wrap.right;
              })
              .map((span) => 'empty message ' + span.textContent.trim()),
          ]`);
          assert.deepEqual(cut, [], `${name}: cut off at the right`);
        }
        assert.deepEqual(problems, [], 'no script error and no CSP refusal in the console');
      } finally {
        await context.close();
      }
    });
  }
});
