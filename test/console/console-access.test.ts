import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { createOperator } from '../../cloud/operators/accounts.ts';
import { LedgerClient } from '../cloud/ledger-client.ts';
import { ConsoleClient, csrfOf, textOf } from '../support/console-client.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

// Who reaches what in the back office: nothing without a session, nothing cross-site without
// the form's token, staff only their shop's day, owners only their shops, the provider admin
// alone what moves money into a pool; an API key never opens the console and a session never
// opens the contract API.

const CLI = { actor: { kind: 'cli' as const, user: 'test' }, operator: null };
const PASSWORD = 'correct horse battery';

let folder: string;
let server: LedgerServer;
let shopA: string;
let shopB: string;
let keyA: string;

async function account(login: string, role: 'admin' | 'owner' | 'staff', shops: string[]) {
  await createOperator(server.db, CLI, { login, name: login, role, shops, password: PASSWORD });
}

async function loggedIn(login: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(server.url);
  await client.logIn(login, PASSWORD);
  return client;
}

async function keyRevoked(apiKey: string): Promise<boolean> {
  const { rows } = await server.db.query<{ revoked: boolean }>(
    'SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE key_hash = $1',
    [createHash('sha256').update(apiKey).digest('hex')],
  );
  return rows[0]?.revoked === true;
}

before(async () => {
  folder = await freshPgliteFolder();
  server = await startLedgerServer({ database: folder, log: { error: () => undefined } });
  shopA = (await addCustomer(server.db, { name: 'Shop A', credits: 100, creditCost: 5000n }))
    .customerId;
  shopB = (await addCustomer(server.db, { name: 'Shop B', credits: 100, creditCost: 5000n }))
    .customerId;
  keyA = (await issueKey(server.db, { customerId: shopA })).apiKey;
  await account('admin', 'admin', []);
  await account('owner-a', 'owner', [shopA]);
  await account('owner-b', 'owner', [shopB]);
  await account('staff-a', 'staff', [shopA]);
});

after(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

const pages = () => [
  '/console',
  '/console/shops',
  `/console/shops/${shopA}`,
  `/console/shops/${shopA}/day`,
  `/console/shops/${shopA}/day.csv`,
  `/console/shops/${shopA}/chart`,
  `/console/shops/${shopA}/tills`,
  `/console/shops/${shopA}/movements`,
  `/console/shops/${shopA}/cards`,
  `/console/shops/${shopA}/keys`,
  `/console/shops/${shopA}/settings`,
  `/console/shops/${shopA}/people`,
  `/console/shops/${shopA}/audit`,
  '/console/account',
  '/console/no-such-page',
];

describe('without a session', () => {
  test('when any console page is asked for, then the answer is the log-in page’s address and nothing of the page', async () => {
    const anonymous = new ConsoleClient(server.url);
    for (const path of pages()) {
      const page = await anonymous.get(path);
      assert.equal(page.status, 303, path);
      assert.equal(page.location, `/console/login?next=${encodeURIComponent(path)}`, path);
      assert.equal(page.text, '', path);
    }
  });

  test('when a form is posted, then it is 401 before anything is looked at, and nothing changes', async () => {
    const anonymous = new ConsoleClient(server.url);
    const token = csrfOf(await anonymous.get('/console/login'));
    const page = await anonymous.post(
      `/console/shops/${shopA}/keys/revoke`,
      { key: createHash('sha256').update(keyA).digest('hex'), reason: 'stolen' },
      { csrf: token },
    );
    assert.equal(page.status, 401);
    assert.equal(await keyRevoked(keyA), false);
  });

  test('when the console is asked with the shop’s API key, then the key opens nothing', async () => {
    const page = await new ConsoleClient(server.url).get(`/console/shops/${shopA}/day`, {
      'x-api-key': keyA,
    });
    assert.equal(page.status, 303);
    assert.match(page.location ?? '', /^\/console\/login/);
  });
});

describe('logging in', () => {
  test('when the password is right, then a new server-side session starts in an HttpOnly SameSite=Strict cookie for /console, stored only by its hash', async () => {
    const client = new ConsoleClient(server.url);
    const page = await client.logIn('owner-a', PASSWORD);
    assert.equal(page.location, '/console');
    const session = page.setCookies.find((cookie) => cookie.startsWith('cww_session='));
    assert.ok(session, page.setCookies.join('\n'));
    assert.match(session, /; Path=\/console/);
    assert.match(session, /; HttpOnly/);
    assert.match(session, /; SameSite=Strict/);
    const raw = decodeURIComponent(client.cookies.get('cww_session') ?? '').split('.')[0] ?? '';
    const { rows } = await server.db.query<{ id_hash: string }>(
      'SELECT id_hash FROM console_sessions',
    );
    assert.ok(rows.some((row) => row.id_hash === createHash('sha256').update(raw).digest('hex')));
    assert.ok(!rows.some((row) => row.id_hash === raw));
    const home = await client.get('/console');
    assert.equal(home.location, `/console/shops/${shopA}`);
  });

  test('when the password is wrong or the login unknown, then the same words say so, with 401', async () => {
    const client = new ConsoleClient(server.url);
    for (const login of ['owner-a', 'nobody-at-all']) {
      const page = await client.post(
        '/console/login',
        { login, password: 'not the password' },
        { from: '/console/login' },
      );
      assert.equal(page.status, 401);
      assert.match(textOf(page), /That login and password do not match an account\./);
    }
  });

  test('when someone guesses at an account, then past the limit guesses wait without being checked, but its owner’s browser still logs in with the right password', async (t) => {
    // A ledger process of its own (the same database): failed log-ins are counted per process.
    const guarded = await startLedgerServer({
      database: server.db,
      log: { error: () => undefined },
      console: { loginLimits: { perAddress: 4, perAccount: 4, perDevice: 4 } },
    });
    t.after(() => guarded.close());
    await account('guessed', 'owner', [shopA]);
    const owner = new ConsoleClient(guarded.url);
    await owner.logIn('guessed', PASSWORD); // a browser that logged in before: its device cookie
    const attacker = new ConsoleClient(guarded.url);
    for (let i = 0; i < 4; i += 1) {
      const page = await attacker.post(
        '/console/login',
        { login: 'guessed', password: `guess ${i}` },
        { from: '/console/login' },
      );
      assert.equal(page.status, 401);
    }
    const held = await attacker.post(
      '/console/login',
      { login: 'guessed', password: PASSWORD },
      { from: '/console/login' },
    );
    assert.equal(held.status, 429, 'the right password from the guessing browser waits too');
    assert.ok(Number(held.headers.get('retry-after')) > 0);
    // Another browser with no history: the account is held for it as well (per account)...
    const fresh = new ConsoleClient(guarded.url);
    const freshTry = await fresh.post(
      '/console/login',
      { login: 'guessed', password: PASSWORD },
      { from: '/console/login' },
    );
    assert.equal(freshTry.status, 429);
    // ...but the owner's own browser is never locked out.
    owner.cookies.delete('cww_session');
    const back = await owner.post(
      '/console/login',
      { login: 'guessed', password: PASSWORD },
      { from: '/console/login' },
    );
    assert.equal(back.status, 303, back.text.slice(0, 200));
  });
});

describe('CSRF', () => {
  test('when a form is posted without its token, with another browser’s token, or from another site, then it is 403 and nothing changes', async () => {
    const owner = await loggedIn('owner-a');
    const other = await loggedIn('owner-a');
    const hash = createHash('sha256').update(keyA).digest('hex');
    const form = { key: hash, reason: 'till stolen' };
    const path = `/console/shops/${shopA}/keys/revoke`;
    const missing = await owner.request('POST', path, { form });
    assert.equal(missing.status, 403);
    assert.match(textOf(missing), /out of date, or it came from another site/);
    const foreign = await owner.post(path, form, {
      csrf: csrfOf(await other.get(`/console/shops/${shopA}/keys`)),
    });
    assert.equal(foreign.status, 403);
    const forged = await owner.request('POST', path, {
      form: { ...form, _csrf: 'a-token-made-up-by-an-attacker' },
      headers: { origin: 'https://evil.example', referer: 'https://evil.example/' },
    });
    assert.equal(forged.status, 403);
    assert.equal(await keyRevoked(keyA), false);
  });
});

describe('roles', () => {
  test('when staff open their shop’s day report, then they see it; any other page of the shop is 403, another shop 404', async () => {
    const staff = await loggedIn('staff-a');
    assert.equal((await staff.get('/console')).location, `/console/shops/${shopA}/day`);
    assert.equal((await staff.get(`/console/shops/${shopA}/day`)).status, 200);
    assert.equal((await staff.get(`/console/shops/${shopA}/day.csv`)).status, 200);
    for (const page of [
      '',
      '/tills',
      '/movements',
      '/cards',
      '/keys',
      '/settings',
      '/people',
      '/audit',
      '/chart',
    ]) {
      assert.equal((await staff.get(`/console/shops/${shopA}${page}`)).status, 403, page);
    }
    assert.equal((await staff.get(`/console/shops/${shopB}/day`)).status, 404);
  });

  test('when staff post an owner’s action with a valid token, then it is 403 and nothing changes', async () => {
    const staff = await loggedIn('staff-a');
    const csrf = csrfOf(await staff.get(`/console/shops/${shopA}/day`));
    const hash = createHash('sha256').update(keyA).digest('hex');
    for (const [path, form] of [
      [`/console/shops/${shopA}/keys/revoke`, { key: hash, reason: 'x' }],
      [`/console/shops/${shopA}/keys/issue`, { reason: 'x' }],
      [`/console/shops/${shopA}/settings/time-zone`, { timeZone: 'Europe/Paris' }],
      [`/console/shops/${shopA}/people`, { name: 'Eve', login: 'eve', role: 'staff' }],
      [
        `/console/shops/${shopA}/movements/${randomUUID()}/decide`,
        { decision: 'void', evidence: 'x' },
      ],
    ] as const) {
      const page = await staff.post(path, form, { csrf });
      assert.equal(page.status, 403, `${path}: ${page.status}`);
    }
    assert.equal(await keyRevoked(keyA), false);
    const { rows } = await server.db.query("SELECT 1 FROM operators WHERE login = 'eve'");
    assert.equal(rows.length, 0);
  });

  test('when an owner opens another owner’s shop, then it is not found; the provider admin’s top-up and key assignment are 403 for an owner', async () => {
    const owner = await loggedIn('owner-a');
    assert.equal((await owner.get(`/console/shops/${shopB}`)).status, 404);
    assert.equal((await owner.get(`/console/shops/${randomUUID()}/day`)).status, 404);
    const csrf = csrfOf(await owner.get(`/console/shops/${shopA}/keys`));
    const topUp = await owner.post(
      `/console/shops/${shopA}/pool/top-up`,
      { credits: '100', reason: 'x' },
      { csrf },
    );
    assert.equal(topUp.status, 403);
    const admin = await loggedIn('admin');
    assert.equal((await admin.get(`/console/shops/${shopB}`)).status, 200);
    assert.equal((await admin.get('/console')).location, '/console/shops');
  });

  test('when a session cookie is sent to the contract API, then it opens nothing there', async () => {
    const owner = await loggedIn('owner-a');
    const cookie = [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const answer = await new LedgerClient(server.url).get('/v1/customer', { headers: { cookie } });
    assert.deepEqual(
      [answer.status, answer.body],
      [401, { error: 'Unauthorized: missing api key' }],
    );
  });
});

describe('sessions end', () => {
  test('when an operator logs out everywhere, then every one of their sessions ends, on every browser', async () => {
    const first = await loggedIn('owner-b');
    const second = await loggedIn('owner-b');
    assert.equal((await second.get(`/console/shops/${shopB}`)).status, 200);
    const out = await first.post(
      '/console/account/log-out-everywhere',
      {},
      { from: '/console/account' },
    );
    assert.equal(out.location, '/console/login');
    assert.equal((await second.get(`/console/shops/${shopB}`)).status, 303);
    assert.equal((await first.get(`/console/shops/${shopB}`)).status, 303);
  });

  test('when the owner disables a staff account, then its session ends at once; a reset password must be changed before anything else', async () => {
    await account('staff-a2', 'staff', [shopA]);
    const staff = await loggedIn('staff-a2');
    const owner = await loggedIn('owner-a');
    const people = `/console/shops/${shopA}/people`;
    const disabled = await owner.post(`${people}/staff-a2/disable`, {}, { from: people });
    assert.equal(disabled.status, 303);
    assert.equal((await staff.get(`/console/shops/${shopA}/day`)).status, 303);
    const refused = await staff.post(
      '/console/login',
      { login: 'staff-a2', password: PASSWORD },
      { from: '/console/login' },
    );
    assert.equal(refused.status, 403);
    await owner.post(`${people}/staff-a2/enable`, {}, { from: people });
    const reset = await owner.post(`${people}/staff-a2/reset-password`, {}, { from: people });
    assert.equal(reset.status, 200);
    const temporary = /data-testid="temporary-password">([^<]+)</.exec(reset.text)?.[1];
    assert.ok(temporary);
    const again = new ConsoleClient(server.url);
    assert.equal((await again.logIn('staff-a2', temporary)).location, '/console/account');
    assert.equal((await again.get(`/console/shops/${shopA}/day`)).location, '/console/account');
    const changed = await again.post(
      '/console/account/password',
      { current: temporary, next: 'a new long password', repeat: 'a new long password' },
      { from: '/console/account' },
    );
    assert.equal(changed.location, '/console/account');
    assert.equal((await again.get(`/console/shops/${shopA}/day`)).status, 200);
  });

  test('when a session has been idle past its bound, then it is over', async () => {
    const owner = await loggedIn('owner-b');
    await server.db.query(`UPDATE console_sessions SET expires_at = now() - interval '1 second'`);
    assert.equal((await owner.get(`/console/shops/${shopB}`)).status, 303);
  });
});

describe('pages', () => {
  test('when a page is served, then it carries a strict CSP, no caching, and loads nothing from elsewhere', async () => {
    const owner = await loggedIn('owner-a');
    const page = await owner.get(`/console/shops/${shopA}/chart`);
    assert.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "frame-ancestors 'none'",
      "form-action 'self'",
    ]) {
      assert.ok(csp.includes(directive), csp);
    }
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    for (const match of page.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
      assert.ok(!/^(https?:)?\/\//.test(match[1] ?? ''), `loads ${match[1]}`);
    }
    assert.ok(!/<script>(?!<)|<style|style="/.test(page.text), 'no inline script or style');
  });

  test('when a key is revoked without a reason, then nothing is revoked and the page says why', async () => {
    const owner = await loggedIn('owner-a');
    const keys = `/console/shops/${shopA}/keys`;
    const page = await owner.post(
      keys + '/revoke',
      { key: createHash('sha256').update(keyA).digest('hex'), reason: ' ' },
      { from: keys },
    );
    assert.equal(page.location, keys);
    assert.match(textOf(await owner.get(keys)), /reason: say why/);
    assert.equal(await keyRevoked(keyA), false);
  });
});
