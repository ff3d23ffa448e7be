import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { createOperator } from '../../cloud/operators/accounts.ts';
import { dayReport } from '../../cloud/reports/day-report.ts';
import { readShop, setTimeZone } from '../../cloud/shops/shops.ts';
import { LedgerClient } from '../cloud/ledger-client.ts';
import { launchChromium, saveScreenshot } from '../support/browser.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

// Lost cards, refunds and bonuses in the back office, in Debian's Chromium against a real
// ledger: an owner blocks and unblocks a card, replaces a lost card and sees the change wait
// and then picked up by a till, sets bonus tiers (a bad tier refused, nothing changed), and
// reads a day with a refund and a bonus. Staff can do none of it. Each page is looked at at
// 1280 and 390 px (screenshots in test-results/console) and checked by axe-core.

const screenshots = fileURLToPath(new URL('../../test-results/console', import.meta.url));
const PASSWORD = 'correct horse battery';
const DAY = '2026-06-11';
const FRONT = '11111111-1111-4111-8111-111111111111';
const LOST = '04C0FFEE';
const FRESH = '04C0FFF0';
const CLI = { actor: { kind: 'cli' as const, user: 'test' }, operator: null };

let folder: string;
let server: LedgerServer;
let browser: Browser;
let shop: string;
let apiKey: string;

const api = () => new LedgerClient(server.url, apiKey);

/** A till's movement over the contract API, created and posted at `occurredAt`. */
async function posted(
  movement: Record<string, unknown>,
  occurredAt: string,
): Promise<Record<string, unknown> & { id: string }> {
  const id = (movement.id as string | undefined) ?? randomUUID();
  const created = await api().create({ id, tillId: FRONT, ...movement } as never);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const done = await api().resolve(id, 'post', { tillId: FRONT, occurredAt });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return done.body;
}

before(async () => {
  mkdirSync(screenshots, { recursive: true });
  folder = await freshPgliteFolder();
  server = await startLedgerServer({ database: folder, log: { error: () => undefined } });
  shop = (
    await addCustomer(server.db, { name: 'Laverie du Parc', credits: 5_000, creditCost: 5000n })
  ).customerId;
  await setTimeZone(server.db, shop, 'Europe/Brussels', { actor: CLI.actor, reason: 'set-up' });
  apiKey = (await issueKey(server.db, { customerId: shop })).apiKey;
  for (const [login, role] of [
    ['anna', 'owner'],
    ['sam', 'staff'],
  ] as const) {
    await createOperator(server.db, CLI, {
      login,
      name: login === 'anna' ? 'Anna Owner' : 'Sam Staff',
      role,
      shops: [shop],
      password: PASSWORD,
    });
  }
  await posted({ kind: 'recharge', cardId: LOST, credits: 30 }, '2026-06-10T08:00:00Z');
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

const status = (page: Page, text: string | RegExp) =>
  page.getByRole('status').filter({ hasText: text }).waitFor();

async function lastAudit(page: Page): Promise<string> {
  await page.goto(`${server.url}/console/shops/${shop}/audit`);
  const row = await page.getByTestId('audit').locator('tbody tr').first().textContent();
  return (row ?? '').replace(/\s+/g, ' ');
}

describe('an owner and a lost card', () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await logIn(context, 'anna');
  });
  after(() => context?.close());

  test('when the owner finds a card and blocks it, saying why, then every till is refused it, the audit log says who and why, and unblocking lifts it', async () => {
    await page.goto(`${server.url}/console/shops/${shop}`);
    await page
      .getByRole('navigation', { name: 'Laverie du Parc' })
      .getByRole('link', { name: 'Cards', exact: true })
      .click();
    await page.getByLabel('Card id or holder').fill('04 c0 ff ee');
    await page.getByRole('button', { name: 'Find the card' }).click();
    await page.waitForURL(`${server.url}/console/shops/${shop}/card-accounts/${LOST}`);
    assert.equal(await page.locator('[data-figure="credits"]').textContent(), '30');
    assert.equal(await page.locator('[data-figure="paid-amount"]').textContent(), '€15.00');

    // No reason, no block: the browser asks for one and nothing is posted.
    await page.getByRole('button', { name: 'Block the card' }).click();
    assert.equal((await api().get('/v1/card-list')).body.blocked.length, 0);

    await page.getByLabel('Why block it').fill('lost by the customer');
    await page.getByRole('button', { name: 'Block the card' }).click();
    await status(page, `Card ${LOST} is blocked`);
    assert.match((await page.getByTestId('block').textContent()) ?? '', /operator:anna/);
    const list = await api().get('/v1/card-list');
    assert.deepEqual(
      list.body.blocked.map((block: { cardId: string }) => block.cardId),
      [LOST],
    );
    const refused = await api().create({
      id: randomUUID(),
      kind: 'recharge',
      cardId: LOST,
      credits: 5,
      tillId: FRONT,
    });
    assert.deepEqual([refused.status, refused.body.error], [409, 'CardBlocked']);
    assert.match(
      await lastAudit(page),
      /operator:anna card\.block .*04C0FFEE.*lost by the customer/,
    );

    await page.goto(`${server.url}/console/shops/${shop}/card-accounts/${LOST}`);
    await page.getByLabel('Why lift the block').fill('found in the dryer');
    await page.getByRole('button', { name: 'Unblock the card' }).click();
    await status(page, `Card ${LOST} is unblocked`);
    assert.deepEqual((await api().get('/v1/card-list')).body.blocked, []);
    assert.match(await lastAudit(page), /operator:anna card\.unblock .*found in the dryer/);
  });

  test('when the owner replaces a blocked card onto a new one, then the change waits for the new card, and once a till picks it up the page says so, with its movement', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts/${LOST}`);
    await page.getByLabel('Why block it').fill('lost again');
    await page.getByRole('button', { name: 'Block the card' }).click();
    await status(page, 'is blocked');
    await page.getByLabel('New card id').fill(FRESH);
    await page.getByLabel('Why', { exact: true }).fill('replaces the lost card');
    await page.getByRole('button', { name: 'Replace' }).click();
    await status(page, `30 credits of card ${LOST} wait for card ${FRESH}`);
    const change = page.getByTestId('changes').locator('tbody tr').first();
    assert.match((await change.textContent()) ?? '', /waiting for its card/);
    assert.equal(await page.locator('[data-figure="credits"]').textContent(), '0');

    // The shop's list shows it waiting, and the new card's page too.
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts`);
    const waiting = (await page.getByTestId('waiting').textContent()) ?? '';
    assert.match(waiting.replace(/\s+/g, ' '), new RegExp(`${FRESH} replacement of ${LOST} 30`));
    assert.match((await page.getByTestId('blocked').textContent()) ?? '', /lost again/);

    // A till reads the new card: it picks the credits up with a movement of its own.
    const changeId = (await api().get('/v1/card-list')).body.waiting[0].id as string;
    const pickup = await posted(
      {
        kind: 'replacement',
        cardId: FRESH,
        applies: changeId,
        cardBefore: 'classic:v1:0:7:0',
      },
      '2026-06-10T12:00:00Z',
    );
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts/${FRESH}`);
    const applied = page.getByTestId('changes').locator('tbody tr').first();
    assert.match((await applied.textContent()) ?? '', /picked up/);
    assert.equal(
      await applied.getByRole('link', { name: 'its movement' }).getAttribute('href'),
      `/console/shops/${shop}/movements/${pickup.id}`,
    );
    assert.equal(await page.locator('[data-figure="credits"]').textContent(), '30');
    assert.match(await lastAudit(page), /operator:anna card\.replace .*replaces the lost card/);
  });

  test('when the owner corrects a recharge, saying why, then the correction waits for the card, and cancelling it takes it away', async () => {
    const card = '04E00001';
    await posted({ kind: 'recharge', cardId: card, credits: 20 }, '2026-06-10T09:00:00Z');
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts/${card}`);
    await page.getByLabel('Credits to take back').fill('5');
    await page.getByLabel('Why', { exact: true }).fill('keyed 20 for 15');
    await page.getByRole('button', { name: 'Correct' }).click();
    await status(page, `A correction of up to 5 credits waits for card ${card}`);
    const row = page.getByTestId('changes').locator('tbody tr').first();
    assert.match((await row.textContent()) ?? '', /correction[\s\S]*5[\s\S]*waiting for its card/);
    const waiting = (await api().get('/v1/card-list')).body.waiting;
    assert.deepEqual(
      waiting.map((change: { kind: string; cardId: string }) => [change.kind, change.cardId]),
      [['correction', card]],
    );
    await row.getByLabel('Why cancel').fill('the customer kept the credits');
    await row.getByRole('button', { name: 'Cancel it' }).click();
    await status(page, 'The correction is cancelled.');
    assert.match(
      (await page.getByTestId('changes').locator('tbody tr').first().textContent()) ?? '',
      /cancelled[\s\S]*the customer kept the credits/,
    );
    assert.deepEqual((await api().get('/v1/card-list')).body.waiting, []);
    assert.match(
      await lastAudit(page),
      /operator:anna card\.cancel-change .*the customer kept the credits/,
    );
  });

  test('when the owner labels a card with its holder, then the card is found by a part of the label, and deleting the label on request leaves nothing of it', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts/${FRESH}`);
    await page.getByLabel('Holder label').fill('Marie Dupont 0470 12 34 56');
    await page.getByRole('button', { name: 'Save the label' }).click();
    await status(page, 'holder is “Marie Dupont 0470 12 34 56”');
    assert.equal(
      (await api().get(`/v1/cards/${FRESH}`)).body.holderLabel,
      'Marie Dupont 0470 12 34 56',
    );
    await page.goto(`${server.url}/console/shops/${shop}/card-accounts`);
    await page.getByLabel('Card id or holder').fill('dupont');
    await page.getByRole('button', { name: 'Find the card' }).click();
    await page.getByTestId('found').getByRole('link', { name: FRESH }).click();
    await page.waitForURL(`${server.url}/console/shops/${shop}/card-accounts/${FRESH}`);
    await page.getByRole('button', { name: 'Delete the label' }).click();
    await status(page, 'the ledger keeps nothing of it');
    assert.equal((await api().get(`/v1/cards/${FRESH}`)).body.holderLabel, null);
    assert.match((await page.getByTestId('holder').textContent()) ?? '', /No holder label/);
    assert.doesNotMatch(await lastAudit(page), /Dupont/);
  });

  test('when the owner sets bonus tiers, then the ledger applies them; a bad tier is refused, said on the form as typed, and changes nothing', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/card-rules`);
    await page.getByLabel('Tier 1: from an amount paid of (euros)').fill('50');
    await page.getByLabel('Tier 1: bonus').fill('10%');
    await page.getByLabel('Tier 2: from an amount paid of (euros)').fill('20.00');
    await page.getByLabel('Tier 2: bonus').fill('4');
    await page.getByLabel(/Bonus last/).check();
    await page.getByLabel(/Minutes after a recharge/).fill('15');
    await page.getByRole('button', { name: 'Save the card rules' }).click();
    await status(page, 'The card rules are saved: 2 bonus tiers, lowest first.');
    const rules = {
      undoWindowSeconds: 900,
      bonusSpend: 'bonus-last',
      bonusTiers: [
        { minAmount: '20.00', bonusCredits: 4 },
        { minAmount: '50.00', bonusPercent: '10.00' },
      ],
    };
    assert.deepEqual((await api().customer()).body.cards, rules);
    const quote = await api().get('/v1/bonus-quote?amount=20.00');
    assert.equal(quote.body.bonusCredits, 4);

    await page.getByLabel('Tier 3: from an amount paid of (euros)').fill('100');
    await page.getByLabel('Tier 3: bonus').fill('lots');
    await page.getByLabel(/Minutes after a recharge/).fill('5');
    const answer = page.waitForResponse((response) => response.request().method() === 'POST');
    await page.getByRole('button', { name: 'Save the card rules' }).click();
    assert.equal((await answer).status(), 400);
    const problem = (await page.getByRole('alert').textContent()) ?? '';
    assert.match(problem, /Tier 3: the bonus must be credits, like 2, or a percentage/);
    assert.match(problem, /Nothing was changed/);
    assert.equal(
      await page.getByLabel('Tier 3: bonus').inputValue(),
      'lots',
      'the form is shown as typed',
    );
    await saveScreenshot(page, `${screenshots}/card-rules-refused-1280.png`);
    await page.getByLabel('Tier 3: from an amount paid of (euros)').fill('20');
    await page.getByLabel('Tier 3: bonus').fill('6');
    await page.getByRole('button', { name: 'Save the card rules' }).click();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /Two tiers start at 20\.00/);
    assert.deepEqual((await api().customer()).body.cards, rules, 'nothing changed');
    assert.match(await lastAudit(page), /operator:anna card\.rules/);
  });

  test('when the owner opens the card rules, then the blocklist feed’s address and public key are the ones machines fetch', async () => {
    await page.goto(`${server.url}/console/shops/${shop}/card-rules`);
    const key = await fetch(`${server.url}/blocklists/${shop}/key`).then(
      (response) => response.json() as Promise<{ publicKey: string }>,
    );
    assert.equal(await page.getByTestId('public-key').textContent(), key.publicKey);
    assert.match(
      (await page.getByTestId('feed').textContent()) ?? '',
      new RegExp(`${server.url}/blocklists/${shop}`),
    );
  });

  test('when a day has a bonus recharge and a cashier’s refund, then the day report shows them as their own lines and the refund comes off the net cash', async () => {
    // 20.00 reaches the 20.00 tier: 40 + 4 credits. 25.00 too (50 + 4), undone 3 minutes later.
    await posted({ kind: 'recharge', cardId: '04D10001', amount: '20.00' }, `${DAY}T08:00:00Z`);
    const mistaken = await posted(
      { kind: 'recharge', cardId: '04D10002', amount: '25.00' },
      `${DAY}T09:00:00Z`,
    );
    await posted(
      {
        kind: 'refund',
        cardId: '04D10002',
        refunds: mistaken.id,
        cardCredits: 54,
        tillTime: `${DAY}T09:03:00Z`,
      },
      `${DAY}T09:03:00Z`,
    );
    const report = await dayReport(server.db, await readShop(server.db, shop), DAY);
    assert.deepEqual(
      [report.totals.eurosTaken, report.totals.eurosRefunded, report.totals.netCashExpected],
      ['45.00', '25.00', '20.00'],
    );
    await page.goto(`${server.url}/console/shops/${shop}/day?date=${DAY}`);
    const figure = (name: string) => page.locator(`[data-figure="${name}"]`).textContent();
    assert.equal(await figure('taken'), '€45.00');
    assert.equal(await figure('refunded'), '€25.00');
    assert.equal(await figure('net'), '€20.00');
    assert.equal(
      ((await figure('refunds')) ?? '').replace(/\s+/g, ' ').trim(),
      '1 refund: 54 credits, €25.00',
    );
    assert.equal(await figure('bonus-given'), '8 credits');

    // A second refund the ledger voided though its card lost the credits: a till redoes it.
    const second = await posted(
      { kind: 'recharge', cardId: '04D10003', credits: 10 },
      `${DAY}T10:00:00Z`,
    );
    const voided = randomUUID();
    const refund = {
      id: voided,
      kind: 'refund',
      cardId: '04D10003',
      refunds: second.id,
      tillId: FRONT,
      cardCredits: 10,
      tillTime: `${DAY}T10:02:00Z`,
    };
    assert.equal((await api().create(refund as never)).status, 201);
    assert.equal((await api().resolve(voided, 'void', { tillId: FRONT })).status, 200);
    await posted({ kind: 'refund', cardId: '04D10003', compensates: voided }, `${DAY}T11:00:00Z`);
    await page.goto(`${server.url}/console/shops/${shop}/day?date=${DAY}`);
    assert.equal(await figure('refunded'), '€30.00');
    const redone = page.locator('[data-compensation="redone-refunds"]');
    assert.equal(
      ((await redone.textContent()) ?? '').replace(/\s+/g, ' ').trim(),
      '1 refund redone',
    );
  });
});

describe('staff and lost cards', () => {
  test('when staff open a card page, the cards list or the card rules, or post a block, then they are refused and nothing changes', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await logIn(context, 'sam');
      for (const path of ['card-accounts', `card-accounts/${FRESH}`, 'card-rules']) {
        const response = await page.goto(`${server.url}/console/shops/${shop}/${path}`);
        assert.equal(response?.status(), 403, path);
      }
      // A block posted with staff's own valid token (from their day report's log-out form).
      await page.goto(`${server.url}/console/shops/${shop}/day`);
      const token = await page.locator('input[name="_csrf"]').first().inputValue();
      const answer = await page.request.post(
        `${server.url}/console/shops/${shop}/card-accounts/${FRESH}/block`,
        { form: { _csrf: token, reason: 'staff tries' }, maxRedirects: 0 },
      );
      assert.equal(answer.status(), 403);
      assert.equal(
        (await api().get('/v1/card-list')).body.blocked.some(
          (block: { cardId: string }) => block.cardId === FRESH,
        ),
        false,
      );
    } finally {
      await context.close();
    }
  });
});

describe('the card pages, at 1280 and 390 px', () => {
  const pages = (): [string, string][] => [
    ['cards', `/console/shops/${shop}/card-accounts`],
    ['card-blocked', `/console/shops/${shop}/card-accounts/${LOST}`],
    ['card-replaced', `/console/shops/${shop}/card-accounts/${FRESH}`],
    ['card-with-bonus', `/console/shops/${shop}/card-accounts/04D10001`],
    ['card-rules', `/console/shops/${shop}/card-rules`],
    ['day-report-refund-bonus', `/console/shops/${shop}/day?date=${DAY}`],
  ];

  for (const width of [1280, 390]) {
    test(`when each card page is shown ${width} px wide, then it has no serious accessibility violation and nothing wider than the screen`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        const page = await logIn(context, 'anna');
        const problems: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        for (const [name, path] of pages()) {
          const response = await page.goto(`${server.url}${path}`);
          assert.equal(response?.status(), 200, name);
          await saveScreenshot(page, `${screenshots}/${name}-${width}.png`);
          await accessible(page, name);
          const overflow = await page.evaluate<number>(
            'document.documentElement.scrollWidth - window.innerWidth',
          );
          assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the screen`);
        }
        assert.deepEqual(problems, [], 'no script error and no CSP refusal');
      } finally {
        await context.close();
      }
    });
  }
});
