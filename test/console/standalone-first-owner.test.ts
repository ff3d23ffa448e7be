import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { httpRequest, shown } from '../support/http-client.ts';
import { ConsoleClient, textOf } from '../support/console-client.ts';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

// The first "done when": a shop owner on a fresh standalone install (the headless
// worker on embedded defaults, with the card simulator) opens the setup link the banner
// prints, makes their account, and sees today's takings per till, matching the movements.

const API_KEY = 'standalone-owner-key-0123456789';
// The till's own time zone, far from UTC: the demo shop's days are the till's local days.
const TILL_ZONE = 'Pacific/Auckland';
const home = mkdtempSync(join(tmpdir(), 'cww-first-owner-'));
let worker: WorkerProcess;

before(async () => {
  const config = join(home, 'config.json');
  // Any free port for the back office (4179 may be another till's on this machine), and a
  // heartbeat every second so the till's page fills at once.
  writeFileSync(config, JSON.stringify({ consolePort: 0, heartbeatEveryMs: 1_000 }));
  worker = await startWorkerProcess(
    [
      '--simulator',
      '--port',
      '0',
      '--api-key',
      API_KEY,
      '--data-dir',
      join(home, 'data'),
      '--config',
      config,
    ],
    { TZ: TILL_ZONE },
  );
});

after(async () => {
  await worker?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Resolves with what `pattern` matches in the worker's stderr, once it is there. */
async function printed(pattern: RegExp): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(worker.stderr());
    if (match) return match;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function call(method: string, path: string, body?: unknown) {
  const res = await httpRequest(`${worker.url}${path}`, {
    method,
    headers: {
      'X-Api-Key': API_KEY,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    contract: false,
  });
  assert.ok(res.status < 300, `${method} ${path}: ${shown(res)}`);
  return res.json as Record<string, unknown>;
}

test('when the owner opens the printed setup link on the till and makes their account, then they see today’s takings per till, as the ledger counts them', async () => {
  const [, setupUrl = ''] = await printed(
    /BACK OFFICE: .*\n {2}(http:\/\/127\.0\.0\.1:\d+\/console\/setup\?token=\S+)\n/,
  );
  const consoleBase = new URL(setupUrl).origin;
  assert.match(worker.stderr(), new RegExp(`back office: ${consoleBase}/console`));

  // Two recharges and a payout at this till.
  await call('POST', '/simulator/place', { credits: 20 });
  await call('POST', '/writecard', { credits: 10 }); // 5.00 taken
  await call('POST', '/writecard', { amount: 2.5 }); // 5 credits, 2.50 taken
  await call('POST', '/dischargecard'); // 35 credits paid out: 17.50

  const owner = new ConsoleClient(consoleBase);
  const setupPath = setupUrl.slice(consoleBase.length);
  const form = await owner.get(setupPath);
  assert.equal(form.status, 200, form.text.slice(0, 300));
  assert.match(textOf(form), /Make the owner's account of Demo shop/);
  const made = await owner.post(
    '/console/setup',
    {
      token: new URL(setupUrl).searchParams.get('token') ?? '',
      name: 'Sam Owner',
      login: 'sam',
      password: 'a long owner password',
      repeat: 'a long owner password',
    },
    { from: setupPath },
  );
  assert.equal(made.status, 303, made.text.slice(0, 300));
  const shopPage = made.location ?? '';
  assert.match(shopPage, /^\/console\/shops\/[0-9a-f-]{36}$/);

  const today = await owner.get(shopPage);
  assert.equal(today.status, 200);
  const figure = (name: string) =>
    new RegExp(`data-figure="${name}">([^<]+)<`).exec(today.text)?.[1];
  assert.deepEqual(
    [figure('taken'), figure('paid-out'), figure('net')],
    ['€7.50', '€17.50', '−€10.00'],
  );
  // The same figures as the ledger's own report of the day.
  const ledgerUrl = /ledger: (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.stderr())?.[1];
  const report = await httpRequest(`${ledgerUrl}/v1/reports/day`, {
    headers: { 'X-Api-Key': API_KEY },
    contract: false,
  });
  assert.equal((report.json as { shop: { timeZone: string } }).shop.timeZone, TILL_ZONE);
  assert.match(textOf(today), new RegExp(`So far today \\(\\d{4}-\\d{2}-\\d{2}, ${TILL_ZONE}\\)`));
  const totals = (report.json as { totals: Record<string, string> }).totals;
  assert.deepEqual(
    [totals.eurosTaken, totals.eurosPaidOut, totals.netCashExpected],
    ['7.50', '17.50', '-10.00'],
  );
  const tills = (report.json as { tills: { tillId: string }[] }).tills;
  assert.equal(tills.length, 1);
  assert.match(textOf(today), new RegExp(`Till ${tills[0]?.tillId.slice(0, 8)}`));

  // The link worked once.
  const again = await new ConsoleClient(consoleBase).get(setupPath);
  assert.equal(again.status, 404);
});

test('when the setup page is asked for under another host name (DNS rebinding), then it is refused', async () => {
  const [, setupUrl = ''] = await printed(
    / {2}(http:\/\/127\.0\.0\.1:\d+\/console\/setup\?token=\S+)\n/,
  );
  const res = await httpRequest(setupUrl, {
    headers: { Host: 'evil.example' },
    contract: false,
  });
  assert.equal(res.status, 403, shown(res));
});

test('when the owner names the till, then its next heartbeat brings the name to the till', async () => {
  const [, setupUrl = ''] = await printed(
    / {2}(http:\/\/127\.0\.0\.1:\d+\/console\/setup\?token=\S+)\n/,
  );
  const owner = new ConsoleClient(new URL(setupUrl).origin);
  await owner.logIn('sam', 'a long owner password');
  const shopPage = (await owner.get('/console')).location ?? '';
  const tills = await owner.get(`${shopPage}/tills`);
  const tillId = /action="[^"]*\/tills\/([0-9a-f-]{36})\/name"/.exec(tills.text)?.[1];
  assert.ok(tillId, textOf(tills).slice(0, 400));
  const named = await owner.post(
    `${shopPage}/tills/${tillId}/name`,
    { name: 'front counter' },
    { from: `${shopPage}/tills` },
  );
  assert.equal(named.status, 303);
  await printed(/this till is "front counter" in the back office/);
});
